"""`te-series test`: the tool's own tests plus the CPU acceptance suite, in the project venv.

Extra arguments go to pytest and are read from the caller's directory. `--long` lets the
randomized differential test run a large example budget instead of CI's fixed one.
"""

from __future__ import annotations

import os
import subprocess

from .build import release_venv
from .core import SeriesError, load_series, rel


def run(args) -> int:
    root = args.root
    series = load_series(root)
    release = args.release or series.release
    venv = release_venv(root, series, release)
    py = venv / "bin" / "python"
    if not py.exists():
        built = sorted(p.name for p in root.glob(".venv*") if (p / "bin" / "python").exists())
        raise SeriesError(
            f"no build of {release} ({rel(venv, root)}/ does not exist); make it with "
            f"te-series build{' --release ' + release if args.release else ''}. "
            f"Built here: {', '.join(built) or 'none'}."
        )
    env = dict(os.environ)
    if args.long:
        env["TE_SERIES_HYPOTHESIS_PROFILE"] = "long"
    paths = args.pytest_args or [str(root / "tests"), str(root / "acceptance")]
    ini = ["-c", str(root / "pyproject.toml"), "--rootdir", str(root)]
    cmd = [str(py), "-m", "pytest", "-ra", *ini, *paths]
    return subprocess.run(cmd, env=env, check=False).returncode
