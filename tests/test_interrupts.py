"""Interrupted anywhere, it resumes right: Ctrl-C after the N-th git call of a verb, for
every N of one run, leaves a state that `status` describes truly and that `--continue` (or
running the verb again) finishes, with the same patches as an uninterrupted run.

A `git` first in PATH counts the tool's git calls and sends SIGINT to te-series (its
parent) after the N-th one, while te-series waits for it: the terminal's Ctrl-C at the
unluckiest moments. The tests set SIGINT's disposition themselves (series_helpers.isolated),
so they hold when the suite runs with SIGINT ignored (nohup, a background job).
"""

from __future__ import annotations

from pathlib import Path
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import shlex
import time

import pytest

from te_series import check as check_mod
from te_series import cli
from te_series import export as export_mod
from te_series import git, util, worktree
from te_series.util import no_interrupt
from te_series.worktree import read_state
import te_series
from series_helpers import (
    commit,
    FUSER,
    GOOD_CHANGE,
    GOOD_MSG,
    git_with_size_limit,
    interrupt_nth,
    interrupted_apply,
    make_series,
    move_upstream,
    msg,
    patch_bytes,
    reword_line,
    save,
    sh,
    SLOW_NOTES,
    te,
    THREE,
)


WRAPPER = """#!/bin/sh
n=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 ))
echo $n > "{counter}"
"{git}" "$@"
rc=$?
if [ "$n" = "$TE_TEST_INTERRUPT_AT" ]; then kill -INT $PPID; fi
exit $rc
"""


@pytest.fixture
def ctrl_c_at(tmp_path, monkeypatch):
    """ctrl_c_at(n): the next te-series run gets SIGINT after its n-th git call (0: none)."""
    shim = tmp_path / "shim"
    shim.mkdir()
    counter = tmp_path / "git-calls"
    real = shutil.which("git")
    (shim / "git").write_text(WRAPPER.format(counter=counter, git=real))
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}:{os.environ['PATH']}")

    def arm(n: int) -> None:
        counter.write_text("0")
        monkeypatch.setenv("TE_TEST_INTERRUPT_AT", str(n))

    def calls() -> int:
        return int(counter.read_text())

    arm.calls = calls
    arm(0)
    return arm


def noted(tree: Path) -> int:
    """How many patches of tree's record have a commit there that carries their name."""
    state = worktree.read_state(tree)
    revs = git.commits(tree, f"{state.base}..HEAD")
    names = {n for r in revs for n in git.note_names(tree, r)}
    return sum(1 for n in state.patches if n in names)


def status_is_true(project: Path, capsys) -> None:
    """`status` runs, and each "K of M patch(es) ... applied" it prints is what the tree holds."""
    rc, out = te("status", capsys=capsys)
    assert rc == 0, out
    for tree, k in re.findall(r"^(\S+)/: (\d+) of \d+ patch", out, re.M):
        assert int(k) == noted(project / tree), out


def run_until_done(ctrl_c_at, capsys, project, start, resume, check):
    """For N = 1, 2, ...: restore the starting point, run the verb with Ctrl-C after git call
    N, check status, resume until done, and check the result; stop at the first N past the
    verb's last git call."""
    n = 0
    while True:
        n += 1
        argv = start()
        ctrl_c_at(n)
        rc, out = te(*argv, capsys=capsys)
        interrupted = rc == 130
        total = ctrl_c_at.calls()
        ctrl_c_at(0)
        assert rc in (0, 130), f"Ctrl-C after git call {n}: rc {rc}\n{out}"
        status_is_true(project, capsys)
        for _ in range(3):
            if resume(rc, out, capsys) == 0:
                break
        else:
            pytest.fail(f"Ctrl-C after git call {n} of {total}: could not finish\n{out}")
        check(n)
        if not interrupted:
            assert n > 3  # every verb makes more than three git calls
            return


def test_apply_interrupted_after_any_git_call(three, project, upstream, capsys, ctrl_c_at):
    before = patch_bytes(three)
    fork = project / "fork"

    def start():
        shutil.rmtree(fork, ignore_errors=True)
        shutil.rmtree(project / "fork.new", ignore_errors=True)
        return ["apply", "--te-src", str(upstream)]

    def resume(rc, out, capsys):
        if rc == 0:
            return 0
        if fork.exists() or (project / "fork.new").exists():
            rc, out = te("apply", "--continue", capsys=capsys)
            return 0 if rc == 0 or "already holds the whole series" in out else rc
        return te("apply", "--te-src", str(upstream))[0]  # nothing was left: run it again

    def check(n):
        assert not (project / "fork.new").exists()
        assert noted(fork) == 3, n
        rc, out = te("export", "--dry-run", capsys=capsys)
        assert rc == 0 and out.count("unchanged") == 3, (n, out)
        assert patch_bytes(three) == before

    run_until_done(ctrl_c_at, capsys, project, start, resume, check)


def test_export_interrupted_after_any_git_call(three, project, capsys, ctrl_c_at):
    fork = project / "fork"
    old = patch_bytes(three)
    commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))
    state = worktree.state_file(fork).read_bytes()
    assert te("export")[0] == 0
    want = patch_bytes(three)
    want_series = three.series_file.read_bytes()

    def start():
        sh("git", "checkout", "-q", "--", "patches", cwd=project)
        sh("git", "clean", "-qfd", "patches", cwd=project)
        worktree.state_file(fork).write_bytes(state)
        return ["export"]

    def resume(rc, out, capsys):
        # patches/ holds the old series or the new one, never a mix
        assert patch_bytes(three) in (old, want), out
        return 0 if rc == 0 else te("export", capsys=capsys)[0]

    def check(n):
        assert patch_bytes(three) == want and three.series_file.read_bytes() == want_series, n

    run_until_done(ctrl_c_at, capsys, project, start, resume, check)


def test_rebase_interrupted_after_any_git_call(project, upstream, capsys, ctrl_c_at):
    # One patch: every git step of a rebase is there, in a third of the calls of THREE.
    three = make_series(project, upstream, THREE[1:2])
    before = patch_bytes(three)
    fork = project / "fork"
    new = commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    toml = project / "patches" / "base.toml"
    old_toml = toml.read_text()
    new_toml = old_toml.replace(three.base_commit, new)
    sh("git", "branch", "-f", "start", "HEAD", cwd=fork)
    state = worktree.state_file(fork).read_bytes()

    def start():
        sh("git", "checkout", "-q", "--", "patches", cwd=project)
        if git.in_progress(fork):
            sh("git", "rebase", "--abort", cwd=fork)
        sh("git", "checkout", "-q", "-f", "series", cwd=fork)
        sh("git", "reset", "-q", "--hard", "start", cwd=fork)
        worktree.state_file(fork).write_bytes(state)
        return ["rebase", "--onto", "main", "--te-src", str(upstream)]

    def resume(rc, out, capsys):
        if rc == 0:
            return 0
        assert toml.read_text() in (old_toml, new_toml), out
        st = worktree.read_state(fork)
        if st.rebase_onto:
            return te("rebase", "--continue")[0]
        return te("rebase", "--onto", "main", "--te-src", str(upstream))[0]

    def check(n):
        assert toml.read_text() == new_toml, n
        assert patch_bytes(three) == before, n
        assert worktree.read_state(fork).base == new and noted(fork) == 1, n

    run_until_done(ctrl_c_at, capsys, project, start, resume, check)


def test_port_edit_interrupted_after_any_git_call(project, upstream, tmp_path, capsys, ctrl_c_at):
    """`port --edit --force` over a port tree with an unexported commit; the advice status
    gives (tool-review-v7 #2: `apply --continue --port R` swapped in a tree that stopped
    before the port, as complete) finishes the port, and the old tree is in a backup."""
    from test_check_port import NEWER, wheels

    make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheels(project, upstream, tmp_path, NEWER)
    assert te("port", "--release", "10.0.0", "--edit")[0] == 0
    tree = project / "fork-port" / "10.0.0"
    ported = (tree / "transformer_engine/pytorch/fuser.py").read_text()
    commit(tree, {"transformer_engine/pytorch/fuser.py": ported.replace("NEW = 1", "NEW = 2")},
           msg("Keep NEW in step"))  # fmt: skip
    assert te("export", "--port", "10.0.0")[0] == 0
    save(project)
    want = sh("git", "rev-parse", "HEAD^{tree}", cwd=tree).strip()
    commit(tree, {"tests/mine.py": "MINE = 1\n"}, msg("Unexported"))
    kept = tmp_path / "kept-port"
    shutil.copytree(tree, kept, symlinks=True)
    backups = project / ".te-series-backup"

    def start():
        for t in (tree, tree.with_name("10.0.0.new")):
            shutil.rmtree(t, ignore_errors=True)
        shutil.copytree(kept, tree, symlinks=True)
        return ["port", "--release", "10.0.0", "--edit", "--force"]

    def resume(rc, out, capsys):
        if rc == 0:
            return 0
        said = te("status", capsys=capsys)[1]
        if "te-series apply --continue --port 10.0.0" in said:
            rc, out = te("apply", "--continue", "--port", "10.0.0", capsys=capsys)
            return 0 if rc == 0 or "already holds the whole series" in out else rc
        # an unfinished port says to make it again; or nothing was left of the new one
        assert "interrupted while porting" in said or "10.0.0.new" not in said, said
        return te("port", "--release", "10.0.0", "--edit", "--force")[0]

    def check(n):
        assert not tree.with_name("10.0.0.new").exists(), n
        state = worktree.read_state(tree)
        assert state.kind == "port" and state.complete and state.release == "10.0.0", n
        assert sh("git", "rev-parse", "HEAD^{tree}", cwd=tree).strip() == want, n
        holding = [
            g.parent
            for g in backups.glob("*/10.0.0*/.git")
            if "Unexported" in sh("git", "log", "--format=%s", "series", cwd=g.parent)
        ]
        assert len(holding) == n, n  # each run kept the old tree whole

    run_until_done(ctrl_c_at, capsys, project, start, resume, check)


def test_a_git_killed_by_sigint_is_an_interruption(tmp_path, monkeypatch):
    """Whatever SIGINT disposition this run inherited (the shim resets it to the default
    before killing itself)."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git").write_text(
        f"#!{os.sys.executable}\nimport os, signal\n"
        "signal.signal(signal.SIGINT, signal.SIG_DFL)\nos.kill(os.getpid(), signal.SIGINT)\n"
    )
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}:{os.environ['PATH']}")
    with pytest.raises(KeyboardInterrupt):
        git.git("status", cwd=tmp_path)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_an_ignored_sigint_stays_ignored_while_git_runs(tmp_path, sig):
    """Run with SIGINT ignored (nohup; SIGHUP, SIGTERM the same), such a signal during a git
    step, or after cli.main's set-up, does not stop the tool."""
    code = (
        "import os, signal, sys\n"
        "from te_series import util\n"
        f"signal.signal(signal.{sig}, signal.SIG_IGN)\n"
        "util.stop_as_ctrl_c()\n"
        "with util.no_interrupt():\n"
        f"    os.kill(os.getpid(), signal.{sig})\n"
        f"os.kill(os.getpid(), signal.{sig})\n"
        "print('went on')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(util.__file__).parents[1])}
    proc = subprocess.run(
        [os.sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0 and "went on" in proc.stdout, proc.stderr
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_patch_noted_before_its_record_counts_as_made_from_its_file(three, project, upstream,
                                                                       capsys, monkeypatch):  # fmt: skip
    """tool-review-v25 F2: apply killed after a patch's note, before its record: --continue
    finished the tree, but the patch file counted as "changed since fork/ was made from it"
    for good, and export refused a later edit of that commit with advice that cannot work
    (the same change in fork/) or loses it (a rebuild). The file's record is written before
    its commit is made."""
    shutil.rmtree(project / "fork")
    real, calls = worktree.set_note, []

    def killed_after_the_second_note(*args):
        real(*args)
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # nothing of the tool's runs after it, as for a SIGKILL

    monkeypatch.setattr(worktree, "set_note", killed_after_the_second_note)
    assert te("apply", "--te-src", str(upstream))[0] == 130
    monkeypatch.setattr(worktree, "set_note", real)
    assert te("apply", "--continue")[0] == 0
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and "changed since" not in out, out
    reword_line(project / "fork", "HEAD~3", 2, "s/Make route/Make the route/")
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "rename 0002-" in out, out


def test_a_port_interrupted_while_importing_gets_one_advice(project, upstream, tmp_path, capsys,
                                                           monkeypatch):  # fmt: skip
    """v34 #2: a first `port --edit` interrupted while it imports the release leaves the tree
    on the import's branch, half written: export --port said to check out 'series', which
    git refuses there, and said it again. It says what status says: make the port again."""
    from te_series import port as port_mod
    from test_check_port import NEWER, wheels

    make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheels(project, upstream, tmp_path, NEWER)
    real = port_mod.git

    def ctrl_c_at_the_import(*args, **kw):
        if args[:2] == ("add", "-A"):
            raise KeyboardInterrupt
        return real(*args, **kw)

    with monkeypatch.context() as m:
        m.setattr(port_mod, "git", ctrl_c_at_the_import)
        assert te("port", "--release", "10.0.0", "--edit")[0] == 130
    rc, out = te("export", "--port", "10.0.0", capsys=capsys)
    assert rc == 2 and "interrupted while porting" in out and "checkout" not in out, out
    command = re.findall(r"Make the port again: (te-series [^(]*?) \(", out)[0]
    assert te(*shlex.split(command)[1:])[0] == 0
    assert te("export", "--port", "10.0.0")[0] == 0


def test_interrupted_apply_says_where_and_export_refuses(
    three, project, upstream, capsys, monkeypatch
):
    before = patch_bytes(three)
    shutil.rmtree(project / "fork")
    real_am, calls = worktree.am, []

    def am(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_am(*a, **k)

    monkeypatch.setattr(worktree, "am", am)
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 130
    assert "interrupted" in out and "fork/: 1 of 3 patch(es)" in out
    assert "te-series apply --continue" in out
    assert "patches/ was not written" in out and "all at once" not in out  # m3
    monkeypatch.setattr(worktree, "am", real_am)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "holds only 1 of the 3 patches" in out
    assert "Apply the rest first: te-series apply --continue." in out and "fix" not in out
    assert patch_bytes(three) == before
    assert te("apply", "--continue")[0] == 0
    assert te("export")[0] == 0
    assert patch_bytes(three) == before


def test_ctrl_c_during_export_writes_waits_for_the_writes(three, project, monkeypatch):
    fork = project / "fork"
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more things"), cwd=fork)
    real = export_mod.write_all

    def write_then_interrupt(root, files, removed=()):  # Ctrl-C while the patch files are written
        real(root, files, removed)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(export_mod, "write_all", write_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        export_mod.export(fork, three)
    names = three.names()
    assert names[-1] == "0003-PyTorch-Test-more-things.patch"
    assert sorted(p.name for p in three.dir.glob("*.patch")) == sorted(names)
    assert read_state(fork).patches == names


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


def test_terminal_ctrl_c_during_export_leaves_patches_whole(three, project, tmp_path):
    """SIGINT to the whole process group (a terminal's Ctrl-C) while git notes runs."""
    fork = project / "fork"
    reword_line(fork, "HEAD~3", 1, "s/Raise.VALUE/Raise VALUE higher/")
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


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_no_interrupt_holds_sigterm_and_sighup_to_its_end(sig):
    """tool-review-v9 #3: they wait for the block, as Ctrl-C does, then stop it as one."""
    code = (
        "import os, signal\n"
        "from te_series import util\n"
        "util.stop_as_ctrl_c()\n"
        "done = []\n"
        "try:\n"
        "    with util.no_interrupt():\n"
        f"        os.kill(os.getpid(), signal.{sig})\n"
        "        done.append('block')\n"
        "except KeyboardInterrupt as e:\n"
        "    print(done, e)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(util.__file__).parents[1])}
    defaults = lambda: [signal.signal(s, signal.SIG_DFL) for s in util.STOPS]  # not nohup's
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, preexec_fn=defaults, check=False)  # fmt: skip
    assert proc.stdout == f"['block'] {sig}\n", (proc.returncode, proc.stderr)


def test_export_that_dies_halfway_still_finds_every_commit(three, project, capsys, monkeypatch):
    """M1: notes get the new names before the files change, so a crash between cannot make
    the next export think patches are gone."""
    fork = project / "fork"
    reword_line(fork, "HEAD~3", 1, "s/Raise.VALUE/Raise VALUE higher/")
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


@pytest.mark.parametrize("how", ["rename", "drop"])
def test_an_export_killed_before_its_deletes_has_them_done_by_the_next(three, project, capsys,
                                                                        monkeypatch, how):  # fmt: skip
    """tool-review-v23 #4: an export killed after its renames, before it deleted the old
    names (a SIGKILL: nothing of it runs after): the next export said every patch was
    unchanged and left the old files in patches/ for good. It deletes them; v27 #2: the
    same for an `export --drop` (no commit notes the dropped name any more)."""
    args = ["export"]
    if how == "rename":
        reword_line(project / "fork", "HEAD~3", 1, "s/Raise.VALUE/Raise VALUE higher/")
        old = three.names()[0]
    else:
        sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=project / "fork")
        old = three.names()[2]
        args += ["--drop", old]
    real = Path.unlink

    class Killed(BaseException):
        pass

    def unlink(path, *args, **kwargs):
        if path.name == old:
            raise Killed
        real(path, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(Killed):
        te(*args)
    monkeypatch.setattr(Path, "unlink", real)
    assert (three.dir / old).is_file() and old not in three.names()
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"remove {old}" in out, out
    assert sorted(p.name for p in three.dir.glob("*.patch")) == sorted(three.names())


def test_a_tree_kept_by_a_rebuild_killed_before_its_swap_is_named_by_status(three, project,
                                                                          upstream, capsys,
                                                                          monkeypatch):  # fmt: skip
    """v27 #3: apply --force killed between its two moves (fork/ into the backup, fork.new/
    into its place) never said where fork/ went, and no verb named the backup, which held a
    commit of the user's. status names it; its fetch, after the --continue it advises,
    brings the commit back."""
    fork = project / "fork"
    commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))
    mine, real = sh("git", "rev-parse", "HEAD", cwd=fork).strip(), Path.rename

    class Killed(BaseException):
        pass

    def rename(path, target):
        if path.name == "fork.new":
            raise Killed
        return real(path, target)

    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(Killed):
        te("apply", "--force", "--te-src", str(upstream))
    monkeypatch.setattr(Path, "rename", real)
    assert not fork.exists()
    rc, out = te("status", capsys=capsys)
    fetch = re.search(r"git -C fork fetch (\S+) '(\S+)'", out)
    assert rc == 0 and fetch and "te-series apply --continue" in out, out
    assert te("apply", "--continue")[0] == 0
    sh("git", "fetch", "-q", fetch[1], fetch[2], cwd=fork)
    assert mine in sh("git", "log", "--all", "--format=%H", cwd=fork)


def test_ctrl_c_during_export_says_patches_are_written_whole(three, project, capsys, monkeypatch):
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more things"), cwd=project / "fork")
    real = export_mod.write_all

    def write_then_interrupt(root, files, removed=()):  # Ctrl-C while the patch files are written
        real(root, files, removed)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(export_mod, "write_all", write_then_interrupt)
    rc, out = te("export", capsys=capsys)
    assert rc == 130 and "interrupted (Ctrl-C)" in out
    assert "patches/ is written all at once or not at all." in out
    assert "patches/ was not written" not in out


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


KILLER = """#!/bin/sh
n=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 ))
echo $n > "{counter}"
"{git}" "$@"
rc=$?
if [ "$n" = "{at}" ]; then kill -{sig} $PPID; fi
exit $rc
"""


@pytest.mark.parametrize(
    "sig, at", [("TERM", 1), ("TERM", 16), ("TERM", 29), ("HUP", 1), ("HUP", 16)]
)
def test_sigterm_or_sighup_during_apply_force_stops_as_ctrl_c_does(
    three, project, upstream, tmp_path, capsys, sig, at
):
    """tool-review-v9 #3: `kill`, `timeout` or a closed terminal during `apply --force` (after
    git call 1: fork.new/ cloned, no record yet; 16: patch 2's am; 29: the swap) stop it as a
    Ctrl-C does: status is true, --continue (or the same command again) finishes, and the
    old fork/ with its commit is kept."""
    fork = project / "fork"
    commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))
    shim = tmp_path / "shim"
    shim.mkdir()
    counter = tmp_path / "calls"
    (shim / "git").write_text(
        KILLER.format(counter=counter, git=shutil.which("git"), at=at, sig=sig)
    )
    (shim / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "TE_SERIES_ROOT": str(project),
           "PYTHONPATH": str(Path(te_series.__file__).parents[1])}  # fmt: skip
    defaults = lambda: [signal.signal(s, signal.SIG_DFL) for s in util.STOPS]  # not nohup's
    proc = subprocess.run(
        [sys.executable, "-m", "te_series", "apply", "--force", "--te-src", str(upstream)],
        env=env, capture_output=True, text=True, preexec_fn=defaults, check=False,
    )  # fmt: skip
    assert proc.returncode == 130, proc.stderr
    assert f"interrupted (SIG{sig})" in proc.stderr and "Traceback" not in proc.stderr
    status_is_true(project, capsys)
    if (project / "fork.new").exists():
        rc, out = te("export", "--dry-run", capsys=capsys)
        assert rc == 2 and "Finish it as said above" in out and "apply --continue" in out, out
        rc, out = te("apply", "--continue", capsys=capsys)
    else:
        rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)  # again
    assert rc == 0, out
    assert not (project / "fork.new").exists() and noted(fork) == 3, out
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "add " not in out and "remove" not in out, out  # 0002: its new base
    kept = [g.parent for g in (project / ".te-series-backup").glob("*/fork/.git")]
    assert any("Add d" in sh("git", "log", "--format=%s", "series", cwd=k) for k in kept)


def test_an_interrupted_check_tool_ends_with_the_processes_it_started(tmp_path):
    """v17 F6: SIGTERM of check left black and its workers running, orphaned and deadlocked,
    for ever: a check tool runs in a session of its own, and an interruption ends it all."""
    pid_file = tmp_path / "pid"
    code = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )

    def interrupt():
        while not pid_file.exists() or not pid_file.read_text():
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        check_mod.run_whole([sys.executable, "-c", code], tmp_path)
    worker = Path(f"/proc/{pid_file.read_text()}/stat")
    for _ in range(50):  # gone, or a zombie not reaped yet
        if not worker.exists() or worker.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.1)
    else:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        raise AssertionError("the tool's own process still ran")


def test_a_git_am_killed_mid_write_names_its_lock_and_continue_gets_past_it(
    three, project, upstream, capsys, monkeypatch
):
    """tool-review-v20 #2: git am killed while writing a file of patch 2 (SIGXFSZ of a
    file-size limit here, as a kill or the OOM killer would) left fork/.git/index.lock and an
    am in progress. The stop said "killed by signal 25"; status said "go on: te-series apply
    --continue", and every --continue failed on a `git stash push` with no reason. status and
    --continue name the lock and its rm, as rebase's stop does; after it, --continue ends."""
    # fuser.py, which patch 2 changes, grows past the limit upstream (away from the hunk): git
    # dies writing it, holding the index's lock
    head, _, rest = FUSER.partition("\n")
    big = {"transformer_engine/pytorch/fuser.py": head + "\n# upstream" * 7000 + "\n" + rest}
    move_upstream(project, upstream, big)
    interrupted_apply(project, upstream, monkeypatch)  # as the review's: stopped at patch 2
    real = worktree.git_run  # the second am may write no file over 64 KiB
    git_run = git_with_size_limit(real, lambda args: args[:1] == ("am",) and "--abort" not in args)
    monkeypatch.setattr(worktree, "git_run", git_run)
    rc, out = te("apply", "--continue", capsys=capsys)
    lock = project / "fork/.git/index.lock"
    assert rc == 2 and "killed by signal" in out and lock.exists(), out
    monkeypatch.setattr(worktree, "git_run", real)
    for verb in (("status",), ("apply", "--continue")):
        rc, out = te(*verb, capsys=capsys)
        assert "fork/.git/index.lock is there" in out, out
    (rm,) = re.findall(r"remove it \((rm fork/\.git/index\.lock)\); then te-series apply", out)
    sh(*shlex.split(rm), cwd=project)
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0, out
    assert "(complete)" in te("status", capsys=capsys)[1]
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "add " not in out and "remove" not in out, out  # 0002: its new base


def test_an_interrupted_pr_says_what_it_writes(three, project, capsys, monkeypatch):
    """v34 #6: a Ctrl-C in pr said "patches/ was not written", which pr never writes."""
    from te_series import pr as pr_mod

    def ctrl_c(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(pr_mod, "load_series", ctrl_c)
    rc, out = te("pr", capsys=capsys)
    assert rc == 130 and "pr writes only its output folder" in out, out
    assert "patches/ was not written" not in out
