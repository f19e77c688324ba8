"""The ./te-series wrapper: paths are read from the caller's directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from te_series.worktree import read_state
from series_helpers import make_series, msg, ROOT_DIR, te


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


def test_te_series_root_naming_another_checkout_is_said(
    three, project, tmp_path, capsys, monkeypatch
):
    other = tmp_path / "other"
    (other / "patches").mkdir(parents=True)
    (other / "patches" / "series").write_text("")
    monkeypatch.chdir(other)
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and f"warning: working on {project}" in out
    assert f"not on the checkout you are in ({other})" in out


def test_wrapper_through_a_symlink_finds_its_project(three, project, tmp_path):
    shutil.copy2(ROOT_DIR / "te-series", project / "te-series")
    (project / ".venv" / "bin").mkdir(parents=True)
    py = project / ".venv" / "bin" / "python"
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    py.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "te-series").symlink_to(project / "te-series")
    env = {k: v for k, v in os.environ.items() if k != "TE_SERIES_ROOT"}
    proc = subprocess.run(
        [str(bin_dir / "te-series"), "status"], cwd=tmp_path, env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "fork/: 3 of 3 patch(es) of patches/ applied (complete)" in proc.stdout
    assert sorted(p.name for p in bin_dir.iterdir()) == ["te-series"]  # no stray .venv


def test_status_into_a_closed_pipe_is_quiet(three, project):
    env = {**os.environ, "PYTHONPATH": str(ROOT_DIR / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "te_series", "status"], env=env, cwd=project,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    proc.stdout.close()  # before the tool writes: every write fails with EPIPE
    err = proc.stderr.read().decode()
    assert proc.wait() == 141
    assert err == ""
