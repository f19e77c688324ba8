"""`te-series test`: the tool's own tests plus the CPU acceptance suite, in the project venv.

Extra arguments go to pytest. `--long` lets the randomized differential test run a large
example budget instead of CI's fixed one.
"""

from __future__ import annotations

import os
import subprocess

from .build import release_venv, venv_python
from .core import Series


def run(args) -> int:
    series = Series(args.root / "patches")
    release = args.release or series.release
    py = venv_python(args.root, release_venv(args.root, series, release))
    env = dict(os.environ)
    if args.long:
        env["TE_SERIES_HYPOTHESIS_PROFILE"] = "long"
    cmd = [str(py), "-m", "pytest", "-ra", *(args.pytest_args or ["tests", "acceptance"])]
    proc = subprocess.run(cmd, cwd=args.root, env=env, check=False)
    return proc.returncode
