"""The tool tests' fixtures live in series_helpers (acceptance/ has its own conftest)."""

from series_helpers import isolated, project, three, upstream  # noqa: F401
