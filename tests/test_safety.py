"""Guards of apply and export found by the second adversarial review (D, M, T, W rows)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest

from te_series import git, series, worktree
from te_series.util import no_interrupt, SeriesError
from te_series.worktree import read_state, state_file
from series_helpers import (
    CONFLICTING,
    GOOD_CHANGE,
    GOOD_MSG,
    PLACEHOLDER,
    commit,
    make_series,
    move_upstream,
    msg,
    patch_bytes,
    save,
    sh,
    te,
    stop_and_resolve,
)


def reword(fork, upto: str, line: int, sed: str) -> None:
    """Reword commit number `line` after `upto` with a sed expression."""
    env = {
        "GIT_SEQUENCE_EDITOR": f"sed -i {line}s/^pick/reword/",
        "GIT_EDITOR": f"sed -i {shlex.quote(sed)}",
    }
    sh("git", "rebase", "-q", "-i", upto, cwd=fork, env=env)


# --------------------------------------------------------------------------- D1


def test_export_refuses_to_revert_a_patch_committed_after_apply(three, project, capsys):
    name = three.names()[0]
    path = three.dir / name
    path.write_text(path.read_text().replace("Because it helps.", "Because it really helps."))
    save(project, "a colleague's fix")  # e.g. arrived with git pull
    pulled = path.read_bytes()
    fork = project / "fork"
    reword(fork, "HEAD~3", 3, "s/Test.more/Test.more.things/")  # a change of one's own too
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"patches/{name} changed since fork/ was made from it" in out
    assert path.read_bytes() == pulled
    # --dry-run shows the plan, then why export refuses (m3).
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "would rename" in out and "export refuses to write now" in out
    # Make the same change in fork/: now export has nothing to undo.
    reword(fork, "HEAD~3", 1, "s/Because.it.helps/Because it really helps/")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert path.read_bytes() == pulled


def test_export_refuses_to_undo_a_reordered_series(three, project, capsys):
    a, b, c = three.names()
    three.series_file.write_text(f"# order\n{b}\n{a}\n{c}\n")
    save(project, "reorder")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "patches/series (its list of patches) changed since" in out
    assert three.names() == [b, a, c]


def test_export_refuses_while_a_rebuild_waits(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    assert (project / "fork.new").exists()
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "fork.new/ holds a rebuild of fork/ that is not swapped in yet" in out


def test_export_refuses_a_fork_without_a_patch_record(three, project, capsys):
    fork = project / "fork"
    path = state_file(fork)
    raw = json.loads(path.read_text())
    raw.pop("recorded")
    path.write_text(json.dumps(raw))
    reword(fork, "HEAD~3", 1, "s/Raise/Lift/")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "made by an earlier te-series" in out


# --------------------------------------------------------------------------- D2


def interrupt_nth(monkeypatch, name: str, n: int) -> None:
    """Make worktree.<name> raise KeyboardInterrupt on its n-th call."""
    real, calls = getattr(worktree, name), []

    def fake(*a, **k):
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(worktree, name, fake)
    return lambda: monkeypatch.setattr(worktree, name, real)


def interrupted_apply(project, upstream, monkeypatch) -> Path:
    """A fresh apply interrupted (Ctrl-C) in the second git am; returns fork/."""
    shutil.rmtree(project / "fork")
    restore = interrupt_nth(monkeypatch, "am", 2)
    assert te("apply", "--te-src", str(upstream))[0] == 130
    restore()  # only that: monkeypatch.undo() would undo the isolation from ~/.gitconfig
    return project / "fork"


def test_continue_after_interrupt_keeps_own_commit_and_applies_the_patch(
    three, project, upstream, capsys, monkeypatch
):
    names = three.names()
    fork = interrupted_apply(project, upstream, monkeypatch)
    own = commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0, out
    assert "kept 1 commit(s) of yours" in out
    assert "list(values)" in (fork / "transformer_engine/pytorch/fuser.py").read_text()
    assert git.note_names(fork, own) == []
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0, out
    assert "add 0002-PyTorch-Add-d.patch (a new commit)" in out
    assert f"rename {names[1]} -> 0003-" in out and "remove" not in out


def test_continue_after_interrupt_before_the_note_takes_am_commit(
    three, project, upstream, capsys, monkeypatch
):
    before = patch_bytes(three)
    shutil.rmtree(project / "fork")
    restore = interrupt_nth(monkeypatch, "set_note", 2)  # am made commit 2, no note yet
    assert te("apply", "--te-src", str(upstream))[0] == 130
    restore()
    fork = project / "fork"
    own = commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))  # after the am commit
    assert te("apply", "--continue")[0] == 0
    assert sh("git", "rev-list", "--count", "HEAD", cwd=fork).strip() == "5"
    assert git.note_names(fork, own) == []
    assert git.note_names(fork, "HEAD~2") == [three.names()[1]]
    capsys.readouterr()
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and out.count("unchanged") == 2 and "add 0003-PyTorch-Add-d.patch" in out
    assert patch_bytes(three) == before


# --------------------------------------------------------------------------- D4


@pytest.mark.parametrize("line", ["---", "diff --git a/foo b/foo"])
def test_export_refuses_a_message_git_am_would_cut(three, project, capsys, line):
    before = patch_bytes(three)
    fork = project / "fork"
    message = f"[PyTorch] Add e\n\nNumbers:\n{line}\nbefore: 10 ms\n\nSigned-off-by: D <d@x.org>"
    commit(fork, {"tests/e.py": "E = 1\n"}, message)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"message line 4, {line!r}" in out
    assert patch_bytes(three) == before


# --------------------------------------------------------------------------- M1


SLOW_NOTES = """#!/bin/sh
for a in "$@"; do if [ "$a" = add ]; then echo x >> "{marker}"; sleep 0.5; fi; done
exec {git} "$@"
"""


def test_terminal_ctrl_c_during_export_leaves_patches_whole(three, project, tmp_path):
    """SIGINT to the whole process group (a terminal's Ctrl-C) while git notes runs."""
    fork = project / "fork"
    reword(fork, "HEAD~3", 1, "s/Raise.VALUE/Raise VALUE higher/")
    shim = tmp_path / "shim"
    shim.mkdir()
    marker = tmp_path / "marker"
    (shim / "git").write_text(SLOW_NOTES.format(marker=marker, git=shutil.which("git")))
    (shim / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "TE_SERIES_ROOT": str(project)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "te_series", "export"],
        env=env,
        cwd=project,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.time() + 30
    while not marker.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    out = proc.communicate(timeout=60)[0].decode()
    assert proc.returncode == 130, out
    rc, out = te("export", "--dry-run")
    assert rc == 0
    names = three.names()
    assert names[0] == "0001-PyTorch-Raise-VALUE-higher.patch"
    assert sorted(p.name for p in three.dir.glob("*.patch")) == sorted(names)
    assert [n for r in git.commits(fork, "HEAD~3..HEAD") for n in git.note_names(fork, r)] == (
        names
    )


def test_nested_no_interrupt_holds_ctrl_c_to_the_outer_end():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with no_interrupt():
            with no_interrupt():
                os.kill(os.getpid(), signal.SIGINT)
            done.append("after inner")
    assert done == ["after inner"]


# --------------------------------------------------------------------------- M2, M3, M6, M7


def test_continue_swaps_in_a_complete_rebuild(three, project, upstream, capsys, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    real = worktree.swap_in
    monkeypatch.setattr(worktree, "swap_in", interrupted)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 130
    monkeypatch.setattr(worktree, "swap_in", real)
    assert read_state(project / "fork.new").complete
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0, out
    assert not (project / "fork.new").exists() and "moved whole" in out
    assert read_state(project / "fork").complete


def test_squashed_patch_needs_drop_and_drop_is_accepted(three, project, capsys):
    names = three.names()
    fork = project / "fork"
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 2s/^pick/squash/", "GIT_EDITOR": "true"}
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=env)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"{names[1]}: squashed into another patch's commit" in out
    assert patch_bytes(three).keys() == set(names)
    rc, out = te("export", "--drop", names[1], capsys=capsys)
    assert rc == 0, out
    assert f"remove {names[1]} (dropped)" in out
    assert three.names() == [names[0], "0002-PyTorch-Test-more.patch"]


def test_status_names_a_skipped_patch(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    assert te("apply", "--continue", "--skip")[0] == 0
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and f"(complete; skipped {three.names()[1]}: export needs --drop" in out


def test_continue_refuses_a_series_changed_since_apply(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    three.series_file.write_text(three.series_file.read_text().splitlines()[1] + "\n")
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and "patches/series changed since this apply started" in out
    assert read_state(project / "fork").applied == 1


def test_continue_after_committing_the_fix_with_git_commit(three, project, upstream, capsys):
    names = three.names()
    fork = stop_and_resolve(project, upstream)
    sh("git", "commit", "-q", "-m", GOOD_MSG, cwd=fork)  # not git am --continue
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0, out
    assert read_state(fork).complete and git.in_progress(fork) is None
    assert te("export")[0] == 0
    assert three.names() == names


# --------------------------------------------------------------------------- M8, m3


def test_series_line_must_name_a_patch_file(three, project, upstream, capsys):
    shutil.rmtree(project / "fork")
    three.series_file.write_text(three.series_file.read_text() + "base.toml\n")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "line 5 names base.toml, which is not a patch file" in out
    assert not (project / "fork").exists()


def test_failure_names_git_apply_errors_and_the_patch(project, upstream, capsys):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    (name,) = series.names()
    path = series.dir / name
    path.write_text(path.read_text().replace("@@ -3,4 +3,4 @@", "@@ -3,9 +3,9 @@"))
    save(project)
    shutil.rmtree(project / "fork")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert "git apply --check says:" in out and "applies on its own" not in out
    assert f"Patch failed at {name}" in out
    assert "fork/ holds none of the 1 patch(es)" in out


def test_wheel_and_te_src_exclude_each_other(project, upstream, tmp_path, capsys):
    with pytest.raises(SystemExit) as err:
        te("apply", "--te-src", str(upstream), "--wheel", str(tmp_path / "w.whl"))
    assert err.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


# --------------------------------------------------------------------------- T1, T3, W8, T5


@pytest.mark.parametrize("where", ["series", "base.toml"])
def test_non_utf8_project_file_is_named_with_its_line(three, project, upstream, capsys, where):
    path = project / "patches" / where
    path.write_bytes(path.read_bytes() + b"# caf\xe9\n")
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "Traceback" not in out
    line = len(path.read_bytes().splitlines())
    assert f"patches/{where} is not UTF-8 text: line {line}, column 6 has the byte 0xE9" in out


@pytest.mark.parametrize(
    "old, new, args, says",
    [
        ("commit = ", "commit = 123 #", ["export", "--dry-run"], "[upstream] commit = 123 is not"),
        ('targets = ["10.0.0"]', 'targets = "10.0.0"', ["port"], "[port] targets = '10.0.0'"),
        ('release = "9.9.9"', 'release = ["9.9.9"]', ["port"], "[pypi] release = ['9.9.9']"),
    ],
)
def test_base_toml_values_of_the_wrong_type(three, project, capsys, old, new, args, says):
    toml = project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace(old, new))
    rc, out = te(*args, capsys=capsys)
    assert rc == 2 and says in out and "Traceback" not in out


@pytest.mark.parametrize("value", ["5", '"nobody"', '["A <a@b.org>"]'])
def test_placeholder_identity_must_be_name_and_email(project, value):
    toml = project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace(f'"{PLACEHOLDER}"', value))
    with pytest.raises(SeriesError) as err:
        series.load_series(project).base_value("series", "placeholder_identity")
    said = str(err.value)
    assert "patches/base.toml [series] placeholder_identity = " in said
    assert 'is not "Name <email>"' in said


@pytest.mark.parametrize(
    "text, says",
    [('{"kind": "git"', "it is not JSON"), (None, "unknown key(s) future")],
)
def test_unreadable_state_is_named(three, project, capsys, text, says):
    path = state_file(project / "fork")
    if text is None:
        text = json.dumps({**json.loads(path.read_text()), "future": 1})
    path.write_text(text)
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and says in out and "state.json" in out
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and says in out and "Traceback" not in out
    with pytest.raises(SeriesError):
        read_state(project / "fork")


# --------------------------------------------------------------------------- W10


def test_export_refuses_an_upstream_commit_fetched_by_tag(three, project, upstream, capsys):
    before = patch_bytes(three)
    sh("git", "checkout", "-q", "-b", "t", cwd=upstream)
    commit(upstream, {"README": "pr\n"}, "Upstream PR commit")
    sh("git", "tag", "pr-123", cwd=upstream)
    sh("git", "checkout", "-q", "main", cwd=upstream)
    sh("git", "branch", "-q", "-D", "t", cwd=upstream)
    fork = project / "fork"
    sh("git", "fetch", "-q", str(upstream), "tag", "pr-123", cwd=fork)
    sh("git", "rebase", "-q", "pr-123", cwd=fork)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "1 upstream commit(s)" in out and "Upstream PR commit (on pr-123)" in out
    assert patch_bytes(three) == before


def test_export_refuses_an_unnoted_commit_below_the_series(three, project, upstream, capsys):
    sh("git", "checkout", "-q", "-b", "t", cwd=upstream)
    sha = commit(upstream, {"README": "pr\n"}, "Upstream PR commit")
    sh("git", "checkout", "-q", "main", cwd=upstream)
    fork = project / "fork"
    sh("git", "fetch", "-q", str(upstream), sha, cwd=fork)
    sh("git", "rebase", "-q", "FETCH_HEAD", cwd=fork)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "Upstream PR commit (below the first series patch)" in out


def test_export_that_dies_halfway_still_finds_every_commit(three, project, capsys, monkeypatch):
    """M1: notes get the new names before the files change, so a crash between cannot make
    the next export think patches are gone."""
    from te_series import export as export_mod

    fork = project / "fork"
    reword(fork, "HEAD~3", 1, "s/Raise.VALUE/Raise VALUE higher/")
    real = export_mod.set_note

    def dies_at_final_notes(repo, rev, names):
        if "\n" not in names:  # the files are written; the notes settle on the new names
            raise OSError("No space left on device")
        real(repo, rev, names)

    monkeypatch.setattr(export_mod, "set_note", dies_at_final_notes)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "No space left" in out
    assert three.names()[0] == "0001-PyTorch-Raise-VALUE-higher.patch"  # files were written
    monkeypatch.setattr(export_mod, "set_note", real)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "drop" not in out, out
    assert te("export")[0] == 0
    assert three.names()[0] == "0001-PyTorch-Raise-VALUE-higher.patch"
    assert sorted(p.name for p in three.dir.glob("*.patch")) == sorted(three.names())


def test_scissors_config_does_not_cut_messages(three, project, upstream, isolated, capsys):
    isolated.write_text("[mailinfo]\n\tscissors = true\n")
    fork = project / "fork"
    message = "[PyTorch] Add e\n\nAbove.\n-- >8 --\nBelow.\n\nSigned-off-by: D <d@x.org>"
    commit(fork, {"tests/e.py": "E = 1\n"}, message)
    assert te("export")[0] == 0
    save(project, "e")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    assert "Above." in sh("git", "log", "-1", "--format=%B", cwd=fork)
    capsys.readouterr()
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "would" not in out and out.count("unchanged") == 4


def test_export_refuses_an_upstream_commit_on_a_tag_before_any_patch(project, upstream, capsys):
    """W10: a tag's commit is upstream's even where no series commit sits above it."""
    make_series(project, upstream, [])
    sh("git", "checkout", "-q", "-b", "t", cwd=upstream)
    commit(upstream, {"README": "pr\n"}, "Upstream PR commit")
    sh("git", "tag", "pr-123", cwd=upstream)
    sh("git", "checkout", "-q", "main", cwd=upstream)
    fork = project / "fork"
    sh("git", "fetch", "-q", str(upstream), "tag", "pr-123", cwd=fork)
    sh("git", "merge", "-q", "--ff-only", "pr-123", cwd=fork)
    commit(fork, {"tests/a.py": "A = 1\n"}, msg("Add a"))
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "Upstream PR commit (on pr-123)" in out


# --------------------------------------------------------------------------- guards found
# uncovered by removing each one (mutation testing by hand)


def test_export_finds_an_operation_in_progress_where_git_keeps_it(three, project, capsys):
    """fork/.git may be a file naming the git dir (git init --separate-git-dir): an unfinished
    merge is found through git rev-parse --git-path, not by looking inside fork/.git/."""
    fork = project / "fork"
    gitdir = project.parent / "fork-gitdir"
    shutil.move(fork / ".git", gitdir)
    (fork / ".git").write_text(f"gitdir: {gitdir}\n")
    sh("git", "checkout", "-q", "-b", "side", "HEAD~1", cwd=fork)
    commit(fork, {"tests/side.py": "S = 1\n"}, msg("Side"))
    sh("git", "checkout", "-q", "series", cwd=fork)
    sh("git", "merge", "-q", "--no-ff", "--no-commit", "side", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "fork/ has a git merge in progress" in out


def test_export_refuses_an_upstream_commit_on_a_remote_branch_above_the_series(
    three, project, upstream, capsys
):
    """W10: upstream took the series as it is and built on it; fork/ fast-forwarded to that.
    The commit on top is on a remote-tracking branch, so it is upstream's, not a new patch."""
    before = patch_bytes(three)
    fork = project / "fork"
    sh("git", "fetch", "-q", str(fork), "series", cwd=upstream)
    sh("git", "checkout", "-q", "-b", "taken", "FETCH_HEAD", cwd=upstream)
    commit(upstream, {"README": "later\n"}, "Upstream follow-up")
    sh("git", "checkout", "-q", "main", cwd=upstream)
    sh("git", "fetch", "-q", "origin", cwd=fork)
    sh("git", "merge", "-q", "--ff-only", "origin/taken", cwd=fork)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "1 upstream commit(s)" in out
    assert "Upstream follow-up (on origin/taken)" in out
    assert patch_bytes(three) == before


def test_export_refuses_an_author_git_am_would_read_back_differently(three, project, capsys):
    before = patch_bytes(three)
    fork = project / "fork"
    (fork / "tests" / "e.py").write_text("E = 1\n")
    sh("git", "add", "-A", cwd=fork)
    sh("git", "commit", "-q", "-m", msg("Add e"), cwd=fork, env={"GIT_AUTHOR_NAME": "Dev  Two"})
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    assert "its author 'Dev  Two <dev@example.com>' would come back from the patch as " in out
    assert "'Dev Two <dev@example.com>'" in out
    assert patch_bytes(three) == before


def test_apply_without_force_leaves_an_unfinished_rebuild_alone(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "fork.new/ holds an unfinished apply" in out
    assert read_state(project / "fork.new").failed == three.names()[1]
    assert not (project / ".te-series-backup").exists()


def test_continue_refuses_while_a_rebase_is_in_progress(
    three, project, upstream, capsys, monkeypatch
):
    fork = interrupted_apply(project, upstream, monkeypatch)
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"}
    sh("git", "rebase", "-q", "-i", "HEAD~1", cwd=fork, env=env)
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and "a git rebase is in progress in fork/; finish or abort it first" in out
    assert git.in_progress(fork) == "a git rebase"
    assert read_state(fork).applied == 1


def test_continue_without_a_fix_says_the_patch_is_still_missing(three, project, upstream, capsys):
    name = three.names()[1]
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    fork = project / "fork"
    sh("git", "am", "--abort", cwd=fork)
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and f"{name} is still not in fork/" in out
    assert read_state(fork).applied == 1


def test_ctrl_c_during_export_says_patches_are_written_whole(three, project, capsys, monkeypatch):
    from te_series import export as export_mod

    sh("git", "commit", "-q", "--amend", "-m", msg("Test more things"), cwd=project / "fork")
    real = export_mod.write_all

    def write_then_interrupt(root, files):  # Ctrl-C while the patch files are written
        real(root, files)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(export_mod, "write_all", write_then_interrupt)
    rc, out = te("export", capsys=capsys)
    assert rc == 130 and "interrupted (Ctrl-C)" in out
    assert "patches/ is written all at once or not at all." in out
    assert "patches/ was not written" not in out


def test_a_bug_is_one_message_without_traceback(three, project, capsys, monkeypatch):
    from te_series import status

    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(status, "run", broken)
    rc, out = te("status", capsys=capsys)
    assert rc == 3 and "te-series status: internal error: RuntimeError: boom" in out
    assert "TE_SERIES_DEBUG=1" in out and "Traceback" not in out
    monkeypatch.setenv("TE_SERIES_DEBUG", "1")
    with pytest.raises(RuntimeError):
        te("status")


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


@pytest.mark.parametrize("header", ["Subject: other", "From: Someone <some@one.org>",
                                    "Date: Mon, 1 Jan 2024 00:00:00 +0000"])  # fmt: skip
def test_an_in_body_header_is_named_on_its_own_line(three, project, capsys, header):
    """tool-review-v7 #4: a `Subject:` at the top of the body changes the subject, and was
    blamed on message line 1 (the subject, which is fine) instead of line 3."""
    before = patch_bytes(three)
    fork = project / "fork"
    commit(fork, {"tests/e.py": "E = 1\n"}, f"[PyTorch] Add e\n\n{header}\n\nbody\n")
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and f"message line 3, {header!r}" in out, out
    assert "message line 1" not in out
    assert patch_bytes(three) == before
    assert "Put another line of text above it" in out
    # The advice: a line above it; then export gets past it.
    reworded = f"[PyTorch] Add e\n\nAs said:\n{header}\n\nbody\n"
    sh("git", "commit", "-q", "--amend", "-m", reworded, cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
