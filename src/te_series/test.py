"""`te-series test`: the tool's own tests plus the CPU acceptance suite, in the project venv.

Extra arguments go to pytest and are read from the caller's directory. When the run
includes the acceptance suite, the venv must import TE (else: te-series build). `--long` lets the
randomized differential test run a large example budget instead of CI's fixed one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .build import release_venv
from .util import rel, SeriesError, te_import_error
from .series import load_series


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
    # Without paths, pytest runs the ini's testpaths, acceptance/ included.
    named = [Path(a) for a in args.pytest_args if not a.startswith("-") and Path(a).exists()]
    acceptance = not named or any("acceptance" in p.resolve().parts for p in named)
    if acceptance:
        why = te_import_error(py)
        if why is not None:
            raise SeriesError(
                f"{rel(venv, root)}/ has no working build of TE {release} ({why}), which the "
                f"acceptance suite tests. Build it: te-series build"
                f"{' --release ' + release if args.release else ''}. (The tool's own tests "
                f"alone: te-series test {os.path.relpath(root / 'tests')})"
            )
    env = dict(os.environ)
    if args.long:
        env["TE_SERIES_HYPOTHESIS_PROFILE"] = "long"
    paths = args.pytest_args or [str(root / "tests"), str(root / "acceptance")]
    ini = ["-c", str(root / "pyproject.toml"), "--rootdir", str(root)]
    cmd = [str(py), "-m", "pytest", "-ra", *ini, *paths]
    return subprocess.run(cmd, env=env, check=False).returncode
