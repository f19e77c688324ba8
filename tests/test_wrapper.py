"""The ./te-series wrapper: paths are read from the caller's directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys


from te_series.worktree import read_state
from series_helpers import (
    ROOT_DIR,
    make_series,
    msg,
)


def test_wrapper_reads_paths_from_the_callers_directory(project, upstream, tmp_path):
    make_series(project, upstream, [({"tests/a.py": "A = 1\n"}, msg("Add a"))])
    shutil.rmtree(project / "fork")
    # The wrapper finds the project from its own location; give it this Python as its venv.
    shutil.copy2(ROOT_DIR / "te-series", project / "te-series")
    (project / ".venv" / "bin").mkdir(parents=True)
    py = project / ".venv" / "bin" / "python"
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    py.chmod(0o755)
    sub = project / "sub"
    sub.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TE_SERIES_ROOT"}
    rel_src = os.path.relpath(upstream, sub)
    proc = subprocess.run(
        ["../te-series", "apply", "--te-src", rel_src],
        cwd=sub,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert read_state(project / "fork").complete
    assert not (sub / "fork").exists()
    proc = subprocess.run(
        ["../te-series", "range-diff", "HEAD", "--te-src", rel_src, "--out", "rd.txt"],
        cwd=sub,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert (sub / "rd.txt").exists()


def test_wrapper_works_on_its_own_checkout_despite_te_series_root(project, upstream, tmp_path):
    """W9: a TE_SERIES_ROOT left over from another checkout does not redirect the wrapper."""
    make_series(project, upstream, [({"tests/a.py": "A = 1\n"}, msg("Add a"))])
    other = tmp_path / "other"
    (other / "patches").mkdir(parents=True)
    (other / "patches" / "series").write_text("")
    shutil.copy2(ROOT_DIR / "te-series", project / "te-series")
    (project / ".venv" / "bin").mkdir(parents=True)
    py = project / ".venv" / "bin" / "python"
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    py.chmod(0o755)
    env = {**os.environ, "TE_SERIES_ROOT": str(other)}
    proc = subprocess.run(
        [str(project / "te-series"), "status"], cwd=tmp_path, env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "fork/: 1 of 1 patch(es) of patches/ applied (complete)" in proc.stdout
    assert f"ignoring TE_SERIES_ROOT={other}" in proc.stderr


def test_a_copied_checkout_runs_its_own_code(project, tmp_path):
    """tool-review-v6 #26: the wrapper runs the src/ next to it, not the one a venv's
    editable install points at."""
    shutil.copy2(ROOT_DIR / "te-series", project / "te-series")
    (project / ".venv" / "bin").mkdir(parents=True)
    py = project / ".venv" / "bin" / "python"
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    py.chmod(0o755)
    own = project / "src" / "te_series"
    own.mkdir(parents=True)
    (own / "__init__.py").write_text("")
    (own / "__main__.py").write_text("print('the copy runs its own code')\n")
    env = {k: v for k, v in os.environ.items() if k != "TE_SERIES_ROOT"}
    proc = subprocess.run([str(project / "te-series"), "status"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert "the copy runs its own code" in proc.stdout, proc.stderr
