"""The installed TE really is the patched build of this checkout's series."""

from importlib.metadata import version
from pathlib import Path

import transformer_engine

from te_series.core import blob_id, final_postimages, load_series, read_patch

ROOT = Path(__file__).resolve().parents[1]


def test_version_carries_series_label():
    series = load_series(ROOT)
    want = f"{series.release}+series.{len(series.names())}"
    assert version("transformer-engine") == want


def test_installed_files_are_the_series_postimages():
    """Every package file the series touches has the series' final blob id."""
    series = load_series(ROOT)
    finals = final_postimages([read_patch(p) for p in series.paths()])
    site = Path(transformer_engine.__file__).resolve().parent.parent
    checked = 0
    for path, blob in finals.items():
        if not path.startswith("transformer_engine/"):
            continue
        assert blob is not None, f"{path}: the series deletes it"
        assert blob_id((site / path).read_bytes()).startswith(blob), path
        checked += 1
    assert checked == sum(p.startswith("transformer_engine/") for p in finals)
