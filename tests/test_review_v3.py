"""Guards added after the third adversarial review (F rows of its table)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import te_series
from te_series import cli
from te_series.git import NOTES_REF
from te_series.worktree import read_state
from series_helpers import (
    commit,
    msg,
    ROOT_DIR,
    save,
    sh,
    te,
)


def note(fork, rev: str) -> str:
    return sh("git", "notes", f"--ref={NOTES_REF}", "show", rev, cwd=fork).strip()


# --------------------------------------------------------------------------- F1


def add_copy_of_patch_2(series) -> str:
    """A fourth patch whose change patch 2 already made (a colleague's copy of it)."""
    names = series.names()
    text = (series.dir / names[1]).read_text()
    text = text.replace("Make route return a list", "Colleague's copy of the route change")
    name = "0004-PyTorch-Colleague-s-copy.patch"
    (series.dir / name).write_text(text)
    series.series_file.write_text(series.series_file.read_text() + name + "\n")
    save(series.root, "colleague")
    return name


def test_apply_stops_on_a_patch_that_makes_no_commit(three, project, upstream, capsys):
    names = three.names()
    extra = add_copy_of_patch_2(three)
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"patch {extra} made no commit: its change is already in the tree" in out
    assert "remove its line from patches/series" in out and "--continue --skip" in out
    assert "fix the conflicts" not in out
    new = project / "fork.new"
    state = read_state(new)
    assert (state.applied, state.failed) == (3, extra)
    # The previous patch's commit keeps its own name.
    assert note(new, "HEAD") == names[2]
    rc, out = te("apply", "--continue", "--skip", capsys=capsys)
    assert rc == 0, out
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"--drop {extra}" in out
    assert (three.dir / extra).exists() and three.names() == [*names, extra]


def test_export_never_renames_a_commit_over_another_listed_patch(three, project, capsys):
    """Notes that point a commit at the wrong patch (as the F1 bug left them): export must not
    overwrite one listed patch with it and delete the other."""
    names = three.names()
    fork = project / "fork"
    sh("git", "notes", f"--ref={NOTES_REF}", "add", "-f", "-m", names[2], "HEAD~1", cwd=fork)
    sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=fork)
    before = {n: (three.dir / n).read_bytes() for n in names}
    rc, out = te("export", "--drop", names[1], capsys=capsys)
    assert rc == 2
    assert f"the commit noted as {names[2]} over {names[1]}" in out
    assert {n: (three.dir / n).read_bytes() for n in names} == before
    assert three.names() == names


# --------------------------------------------------------------------------- F6


def test_patch_that_applies_nowhere_does_not_speak_of_conflicts(three, project, upstream, capsys):
    names = three.names()
    path = three.dir / names[1]
    path.write_text(
        path.read_text().replace(' """Return values as a tuple."""', ' """Hand edit."""')
    )
    save(project, "hand edit")
    shutil.rmtree(project / "fork")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"Nothing of {names[1]} was applied (no conflict markers" in out
    assert "fix the conflicts" not in out
    assert "te-series apply --force --te-src PATH" in out


# --------------------------------------------------------------------------- F3, F7


def test_range_diff_out_never_overwrites_work_or_any_file(three, project, upstream, capsys):
    fork = project / "fork"
    work = fork / "transformer_engine/pytorch/fuser.py"
    work.write_text(work.read_text() + "# my work\n")
    (project / ".te-series-backup" / "x" / "fork").mkdir(parents=True)
    mine = project / "mine.txt"
    mine.write_text("mine\n")
    cases = [
        (work, "inside fork/"),
        (fork / "new.txt", "inside fork/"),
        (project / "fork.new", "inside fork.new/"),
        (project / ".te-series-backup" / "x" / "fork" / "f", "inside .te-series-backup/"),
        (mine, "exists; range-diff never overwrites a file"),
    ]
    for out, says in cases:
        rc, text = te(
            "range-diff", "HEAD", "--te-src", str(upstream), "--out", str(out), capsys=capsys
        )
        assert rc == 2 and says in text and "cloning" not in text, (out, text)
    assert work.read_text().endswith("# my work\n") and mine.read_text() == "mine\n"
    assert not (fork / "new.txt").exists()


def test_port_out_is_checked_before_any_work(three, project, tmp_path, capsys):
    rc, text = te("port", "--out", str(project / "patches" / "port"), capsys=capsys)
    assert rc == 2 and "inside patches/" in text
    assert not (project / "patches" / "port").exists()
    old = tmp_path / "out" / "10.0.0"
    old.mkdir(parents=True)
    (old / "0001-x.patch").write_text("old\n")
    rc, text = te("port", "--out", str(tmp_path / "out"), capsys=capsys)
    assert rc == 2 and "out/10.0.0/ holds files already" in text and "downloading" not in text
    assert (old / "0001-x.patch").read_text() == "old\n"


# --------------------------------------------------------------------------- F2

FORK_CONFIG = {
    "format.suffix": ".txt",
    "format.headers": "X-Extra: 1",
    "format.to": "someone@example.com",
    "format.from": "Other <other@example.com>",
    "format.signOff": "true",
    "format.forceInBodyFrom": "true",
    "diff.context": "5",
    "diff.interHunkContext": "9",
    "diff.algorithm": "histogram",
    "diff.orderFile": "order.txt",
    "diff.noprefix": "true",
    "diff.suppressBlankEmpty": "true",
    "diff.relative": "true",
    "core.quotePath": "false",
    "color.ui": "always",
}


def test_forks_own_git_config_does_not_change_export(three, project, capsys, monkeypatch):
    fork = project / "fork"
    (project / "order.txt").write_text("transformer_engine/*\n")
    before = {p.name: p.read_bytes() for p in three.dir.iterdir() if p.is_file()}
    for key, value in FORK_CONFIG.items():
        sh("git", "config", key, value, cwd=fork)
    sh("git", "config", "diff.orderFile", str(project / "order.txt"), cwd=fork)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "diff.context")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "7")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert {p.name: p.read_bytes() for p in three.dir.iterdir() if p.is_file()} == before
    assert "unchanged" in out and "change " not in out and "rename" not in out


# --------------------------------------------------------------------------- F9


def test_ctrl_c_while_importing_is_one_line(project, tmp_path):
    """A KeyboardInterrupt raised by an import of the tool (here: tomllib, which only
    te_series.util imports) ends with one line and 130, no traceback."""
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "tomllib.py").write_text("raise KeyboardInterrupt\n")
    src = Path(te_series.__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": f"{fake}{os.pathsep}{src}"}
    proc = subprocess.run(
        [sys.executable, "-m", "te_series", "status"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "interrupted (Ctrl-C)" in proc.stderr


def test_ctrl_c_while_parsing_arguments_is_one_line(project, monkeypatch, capsys):
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "parser", interrupted)
    rc, out = te("status", capsys=capsys)
    assert rc == 130 and "interrupted (Ctrl-C)" in out


# --------------------------------------------------------------------------- F8


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


# --------------------------------------------------------------------------- F4


def test_export_names_an_empty_commit(three, project, capsys):
    fork = project / "fork"
    sh("git", "commit", "-q", "--allow-empty", "-m", "[PyTorch] An empty marker", cwd=fork)
    for args in (("export", "--dry-run"), ("export",)):
        rc, out = te(*args, capsys=capsys)
        assert rc == 2
        assert "commit(s) that change no file:" in out and "[PyTorch] An empty marker" in out
        assert "rebase -i" in out and "mailinfo" not in out


# --------------------------------------------------------------------------- F10


def test_rebase_abort_keeps_commits_made_after_the_rebase(three, project, upstream, capsys):
    fork = project / "fork"
    head = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    # Upstream has patch 1's change: the rebase finishes, its export step refuses.
    commit(upstream, {"transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 2\n'}, "up")
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    mine = commit(fork, {"tests/mine.py": "MINE = 1\n"}, msg("Work of mine"))
    rc, out = te("rebase", "--abort", capsys=capsys)
    assert rc == 0, out
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == head
    branch = f"te-series/aborted-rebase-{mine[:12]}"
    assert f"kept on branch {branch}" in out
    assert sh("git", "rev-parse", branch, cwd=fork).strip() == mine
