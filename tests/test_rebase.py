"""te-series rebase: move the series to a newer upstream commit."""

from __future__ import annotations


import errno
import os
import re
import shlex
import subprocess

import pytest

from pathlib import Path
from te_series import rebase

from te_series.series import read_patch
from te_series.worktree import read_state, write_state
from series_helpers import (
    pull_a_colleagues_rename,
    RENAMING_REWORD,
    reword_line,
    commit,
    git_with_size_limit,
    CONFLICTING,
    FUSER,
    make_series,
    move_upstream,
    msg,
    patch_bytes,
    RESOLVED,
    save,
    sh,
    te,
)


def test_rebase_refuses_to_overwrite_an_ignored_file_and_moving_it_gets_past(
    three, project, upstream, capsys
):
    """tool-review-v10 #1: an ignored file of fork/ (export's advice lets info/exclude hide
    it) where upstream's new commit has a file was overwritten by the rebase, unrecoverably."""
    fork = project / "fork"
    (fork / "scratch").mkdir()
    (fork / "scratch" / "notes.md").write_text("mine\n")
    with open(fork / ".git" / "info" / "exclude", "a") as f:
        f.write("scratch/\n")
    commit(upstream, {"scratch/notes.md": "upstream's\n"}, "Upstream notes")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "fork/ has ignored file(s)" in out and "scratch/notes.md" in out, out
    assert (fork / "scratch" / "notes.md").read_text() == "mine\n"
    assert read_state(fork).base == three.base_commit
    sh("mv", "fork/scratch/notes.md", "notes.md.mine", cwd=project)  # the advice, as written
    assert "(e.g. mv fork/scratch/notes.md notes.md.mine)" in out
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert (project / "notes.md.mine").read_text() == "mine\n"


def test_rebase_onto_newer_upstream(three, project, upstream, capsys):
    before = patch_bytes(three)
    toml = project / "patches" / "base.toml"
    old_toml = toml.read_text()
    old = three.base_commit
    new = commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert toml.read_text() == old_toml.replace(old, new)  # one line, comments kept
    assert three.base_commit == new
    assert three.names() == sorted(before)
    assert not any("Upstream" in n for n in three.names())
    after = patch_bytes(three)
    assert after == before  # the files the series touches did not move
    fork = project / "fork"
    assert read_state(fork).base == new
    assert sh("git", "rev-list", "--count", f"{new}..HEAD", cwd=fork).strip() == "3"
    assert te("export")[0] == 0


def test_rebase_conflict_names_patch_and_resumes(three, project, upstream, capsys):
    names = three.names()
    commit(
        upstream,
        {"transformer_engine/pytorch/fuser.py": FUSER.replace("tuple(values)", "set(values)")},
        "Upstream returns sets",
    )
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"patch {names[1]}" in out and "transformer_engine/pytorch/fuser.py" in out
    # v11 #1: te-series' own continue (which keeps '#' lines), no git -C fork rebase --continue
    assert "git -C fork rebase --continue" not in out and "te-series rebase --continue" in out
    rc, out = te("status", capsys=capsys)  # v28 #4: it said "3 of 3 ... (complete)"
    assert out.startswith("fork/: 3 patch(es) of patches/ being rebased\n"), out
    rc, out = te("apply", "--continue", capsys=capsys)  # v38 #7: "nothing to continue"
    assert rc == 2 and "rebase of fork/ is stopped, not an apply: te-series rebase" in out, out
    fork = project / "fork"
    (fork / "transformer_engine/pytorch/fuser.py").write_text(
        FUSER.replace("tuple(values)", "list(values)")
    )
    sh("git", "add", "-A", cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0, out
    assert three.base_commit == sh("git", "rev-parse", "main", cwd=upstream).strip()
    assert three.names() == names


def test_a_rebase_of_a_pulled_rename_not_yet_exported_says_to_export_first(three, project,
                                                                          upstream, capsys):  # fmt: skip
    """v29 #2: after a colleague's rename was pulled and fork/ got the same reword, the rebase
    took the patch for dropped (its commit is noted with the old name), and --abort and the
    rebase again stopped the same way. It refuses before moving, and its advice gets past."""
    names = pull_a_colleagues_rename(three, project)[1]
    reword_line(project / "fork", *RENAMING_REWORD)
    new = commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    rebase = ("rebase", "--onto", "main", "--te-src", str(upstream))
    rc, out = te(*rebase, capsys=capsys)
    assert rc == 2 and f"fork/ stands for {names[2]}" in out and "export first" in out, out
    assert te("export")[0] == 0  # the advice
    rc, out = te(*rebase, capsys=capsys)
    assert rc == 0, out
    assert three.base_commit == new and three.names() == names


def test_conflicts_lines_of_a_plain_commit_at_a_stop_are_refused_and_rewording_gets_past(
    three, project, upstream, capsys
):
    """tool-review-v13 #4: a plain `git commit --no-edit` at the rebase's stop keeps git's
    '# Conflicts:' lines in the message, and rebase --continue exported them into the patch.
    The export step refuses each line, naming the patch; the reword it says drops them, and
    the way on it names then (v14 #3: te-series rebase --continue, not export) finishes."""
    names, fork = three.names(), project / "fork"
    body = read_patch(three.dir / names[1]).message
    commit(upstream, CONFLICTING, "Upstream returns sets")
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    (fork / "transformer_engine/pytorch/fuser.py").write_text(RESOLVED)
    sh("git", "add", "-A", cwd=fork)
    sh("git", "commit", "-q", "--no-edit", cwd=fork)
    assert "\n# Conflicts:\n" in sh("git", "log", "-1", "--format=%B", cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 2 and f"({names[1]}): message line 7, '# Conflicts:', starts with '#'" in out, out
    assert "Delete it where git left it" in out, out
    # v14 #3: inside the rebase the way on is its --continue, not "export again" (refused)
    assert "export again" not in out, out
    ((fix, then),) = re.findall(
        r"Fix each commit named in (git -C fork .* rebase -i \w+) \(.*\), then (.*)\.\n", out
    )
    assert then == "te-series rebase --continue", out
    todo, drop = "sed -i '/Make route/s/^pick/reword/'", "sed -i '/^#/d'"
    sh(*shlex.split(fix), cwd=project, env={"GIT_SEQUENCE_EDITOR": todo, "GIT_EDITOR": drop})
    rc, out = te(*shlex.split(then)[1:], capsys=capsys)
    assert rc == 0, out
    assert read_patch(three.dir / names[1]).message == body  # no '#' line, nothing else lost


def test_notes_lost_by_gits_own_continue_are_named_not_taken_for_drops(
    three, project, upstream, capsys
):
    """v15 #4: a stopped rebase finished with git's own rebase --continue in a shell whose
    GIT_NOTES_REWRITE_REF keeps notes elsewhere: the commits lost their patch-name notes, not
    their patches. The tool's --continue names each with its notes command (never --drop);
    running those as written finishes the rebase, the patches unchanged."""
    names, fork = three.names(), project / "fork"
    before = {n: (three.dir / n).read_bytes() for n in names}
    commit(upstream, CONFLICTING, "Upstream returns sets")
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    (fork / "transformer_engine/pytorch/fuser.py").write_text(RESOLVED)
    sh("git", "add", "-A", cwd=fork)
    env = {"GIT_NOTES_REWRITE_REF": "refs/notes/commits", "GIT_EDITOR": "true"}
    sh("git", "rebase", "--continue", cwd=fork, env=env)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 2 and "became empty" not in out and "rebase --continue --drop" not in out, out
    steps = re.findall(r": (git -C fork notes --ref=te-series add -f -m \S+ \w+)", out)
    assert len(steps) == 3, out  # git's continue rewrote every commit of the series
    for step in steps:
        sh(*shlex.split(step), cwd=project)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0 and three.names() == names, out
    assert (three.dir / names[0]).read_bytes() == before[names[0]]  # the conflict was in 0002


def test_an_unstaged_edit_at_a_stop_is_named_and_its_advice_keeps_it_out_of_the_patch(
    three, project, upstream, capsys
):
    """v15 #6: at a rebase's stop, an edit of mine that is not the resolution, unstaged: git
    says "git add" (which would put it into the patch). The tool names the file and says to
    put it aside; doing so finishes the rebase with the edit in no patch."""
    names, fork = three.names(), project / "fork"
    commit(upstream, CONFLICTING, "Upstream returns sets")
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    (fork / "transformer_engine/pytorch/fuser.py").write_text(RESOLVED)
    sh("git", "add", "-A", cwd=fork)
    scratch = fork / "transformer_engine/pytorch/other.py"
    scratch.write_text(scratch.read_text() + "# scratch, not for the series\n")
    capsys.readouterr()
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 2 and "not staged: transformer_engine/pytorch/other.py" in out, out
    (step,) = re.findall(r"put the rest aside \((git -C fork stash push) -- FILE\)", out)
    sh("git", *shlex.split(step)[3:], "--", "transformer_engine/pytorch/other.py", cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0, out
    assert not any(b"scratch" in (three.dir / n).read_bytes() for n in names)
    assert "scratch" in sh("git", "stash", "show", "-p", cwd=fork)


def test_rebase_refuses_a_series_commit_as_the_new_base(three, project, upstream, capsys):
    fork = project / "fork"
    head = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    # HEAD of fork/ is the series' tip; through --te-src fork it is even on a branch.
    rc, out = te("rebase", "--onto", "HEAD", "--te-src", str(fork), capsys=capsys)
    assert rc == 2 and "is a commit of the series itself" in out
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == head
    assert read_state(fork).rebase_onto is None


def test_rebase_refuses_a_commit_on_no_upstream_ref(three, project, upstream, capsys):
    tree = sh("git", "rev-parse", "HEAD^{tree}", cwd=upstream).strip()
    loose = sh("git", "commit-tree", "-p", "HEAD", "-m", "loose", tree, cwd=upstream).strip()
    rc, out = te("rebase", "--onto", loose, "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "is on no branch or tag of" in out
    assert read_state(project / "fork").rebase_onto is None


def test_rebase_names_commits_upstream_already_has_and_abort_restores(
    three, project, upstream, capsys
):
    before = patch_bytes(three)
    names = three.names()
    fork = project / "fork"
    head = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    # Upstream merges patch 1's change: the rebase drops that commit as empty.
    commit(upstream, {"transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 2\n'}, "up")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"git rebase dropped the commit(s) of {names[0]}" in out
    assert f"te-series rebase --continue --drop {names[0]}" in out
    rc, out = te("rebase", "--abort", capsys=capsys)
    assert rc == 0 and "back on the series" in out
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == head
    assert te("export")[0] == 0
    assert patch_bytes(three) == before
    rc, out = te("rebase", "--abort", capsys=capsys)
    assert rc == 2 and "no te-series rebase is in progress" in out
    # Finishing with --drop is what the message says.
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    rc, out = te("rebase", "--continue", "--drop", names[0], capsys=capsys)
    assert rc == 0, out
    assert three.names() == [n.replace("0002", "0001").replace("0003", "0002") for n in names[1:]]


def test_a_group_emptied_by_a_drop_is_named_with_the_same_drop(three, project, upstream, capsys):
    """v33 #6: upstream merged the one patch of a PR group; `rebase --continue --drop NAME`
    refused to empty the group, and its way on was `te-series rebase --continue` without
    the --drop, which refused again. It keeps the --drop; followed, it finishes."""
    names = three.names()
    three.series_file.write_text(f"# pr: one\n{names[0]}\n# pr: rest\n{names[1]}\n{names[2]}\n")
    save(project, "groups")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    commit(upstream, {"transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 2\n'}, "up")
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    rc, out = te("rebase", "--continue", "--drop", names[0], capsys=capsys)
    assert rc == 2 and "without patches" in out, out
    (command,) = re.findall(r"commit, and (te-series rebase --continue[^\n]*?)\.?$", out, re.M)
    assert command == f"te-series rebase --continue --drop {names[0]}", out
    three.series_file.write_text(f"{names[0]}\n# pr: rest\n{names[1]}\n{names[2]}\n")
    save(project, "one group")
    rc, out = te(*shlex.split(command)[1:], capsys=capsys)
    assert rc == 0, out


def test_a_full_disk_at_the_rebases_write_names_its_continue(three, project, upstream, capsys,
                                                              monkeypatch):  # fmt: skip
    """v33 #7: a full disk while the rebase writes the patches said "... and export again",
    which refuses while the rebase is unfinished. It names rebase --continue; that ends it."""
    before = patch_bytes(three)
    commit(upstream, {"README": "news\n"}, "Upstream news")
    real = Path.write_bytes

    def full(self, data):
        if self.name == ".base.toml.te-series-tmp":  # the one file this rebase changes
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data)

    with monkeypatch.context() as m:
        m.setattr(Path, "write_bytes", full)
        rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "No space left on device" in out and "export again" not in out, out
    assert "Make room" in out and "te-series rebase --continue" in out, out
    assert patch_bytes(three) == before
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0 and "rebased onto" in out, out


def test_rebase_keeps_a_single_quoted_commit_line(three, project, upstream, capsys):
    toml = project / "patches" / "base.toml"
    old = three.base_commit
    toml.write_text(toml.read_text().replace(f'"{old}"', f"'{old}'"))
    save(project, "quotes")
    new = commit(upstream, {"README": "news\n"}, "Upstream news")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert f"commit = '{new}'" in toml.read_text() and three.base_commit == new


def test_rebase_refuses_an_uneditable_commit_line_before_moving(three, project, upstream, capsys):
    toml = project / "patches" / "base.toml"
    old = three.base_commit
    toml.write_text(toml.read_text().replace(f'"{old}"', f'"""{old}"""'))
    save(project, "odd quotes")
    fork = project / "fork"
    head = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    commit(upstream, {"README": "news\n"}, "Upstream news")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "cannot point patches/base.toml's [upstream] commit" in out
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == head
    assert read_state(fork).rebase_onto is None
    assert te("export")[0] == 0


def test_rebase_refuses_what_export_would_refuse_before_moving(three, project, upstream, capsys):
    names = three.names()
    fork = project / "fork"
    sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=fork)  # patch 3's commit is gone
    head = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    commit(upstream, {"README": "news\n"}, "Upstream news")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"an export now would drop {names[2]}" in out
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == head
    assert read_state(fork).rebase_onto is None


def rebased_by_git_only(project, upstream) -> str:
    """fork/ as a Ctrl-C leaves it after te-series rebase's git rebase, before its writes;
    returns the old HEAD."""
    fork = project / "fork"
    old = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    state = read_state(fork)
    new = commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    sh("git", "fetch", "-q", "origin", cwd=fork)
    sh("git", "rebase", "-q", "--onto", new, state.base, "series", cwd=fork)
    state.rebase_onto, state.rebase_from = new, old
    write_state(fork, state)
    return old


def test_rebase_abort_after_its_git_part_finished_and_a_file_was_touched(
    three, project, upstream, capsys
):
    """prereq F10: a stale index (a file touched since, same content) is no edit."""
    fork = project / "fork"
    old = rebased_by_git_only(project, upstream)
    target = fork / "README"  # a file the reset must change
    target.write_bytes(target.read_bytes())
    os.utime(target, (1, 1))
    rc, out = te("rebase", "--abort", capsys=capsys)
    assert rc == 0, out
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == old


def test_status_of_a_rebase_whose_git_part_finished(three, project, upstream, capsys):
    """prereq F9: no git rebase is in progress, so status does not send you to one."""
    rebased_by_git_only(project, upstream)
    rc, out = te("status", capsys=capsys)
    assert (
        "te-series rebase --continue (or --abort)" in out and "rebase --continue, then" not in out
    )
    assert te("rebase", "--continue")[0] == 0  # what status says: it finishes


def test_rebase_names_a_te_src_that_is_no_checkout(three, project, tmp_path, capsys):
    rc, out = te("rebase", "--onto", "main", "--te-src", str(tmp_path / "nope"), capsys=capsys)
    assert rc == 2 and "is not a git checkout of TE" in out and "Errno" not in out, out


def test_a_half_made_am_is_named_as_an_am(three, project, capsys):
    """prereq F4 (a): git am killed before it wrote rebase-apply/applying is an am, whose
    abort (the advice) clears it."""
    fork = project / "fork"
    (fork / ".git" / "rebase-apply").mkdir()
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "has a git am in progress" in out, out
    sh("git", "am", "--abort", cwd=fork)
    assert te("export", "--dry-run")[0] == 0


def test_rebase_follows_a_base_toml_moved_by_a_pull(three, project, upstream, capsys):
    """tool-review-v6 #10: export says to rebase fork/ onto base.toml's new commit, and that
    rebase goes through."""
    before = patch_bytes(three)
    fork = project / "fork"
    commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))  # unexported work
    new = move_upstream(project, upstream, {"README": "news\n"})
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"te-series rebase --onto {new[:12]} --te-src PATH" in out, out
    commit(upstream, {"README": "later\n"}, "Later")  # main moves on: not base.toml's
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "base.toml moved since fork/ was made" in out, out  # it would undo it
    rc, out = te("rebase", "--onto", new[:12], "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert read_state(fork).upstream == new and three.base_commit == new
    assert "add 0004-PyTorch-Add-d.patch" in out
    assert {k: v for k, v in patch_bytes(three).items() if k in before} == before


def test_a_rebase_that_stops_without_a_conflict_says_so(three, project, upstream, capsys):
    """prereq F5: a stale index.lock is no conflict; after removing it, --continue goes on."""
    names = three.names()
    commit(upstream, {"transformer_engine/pytorch/fuser.py":
                      FUSER.replace("tuple(values)", "set(values)")}, "Upstream sets")  # fmt: skip
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    fork = project / "fork"
    (fork / "transformer_engine/pytorch/fuser.py").write_text(
        FUSER.replace("tuple(values)", "list(values)")
    )
    sh("git", "add", "-A", cwd=fork)
    (fork / ".git" / "index.lock").write_text("")
    capsys.readouterr()
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 2 and "no file has conflict markers" in out and "conflicts in" not in out, out
    assert "index.lock" in out
    (fork / ".git" / "index.lock").unlink()
    assert te("rebase", "--continue")[0] == 0
    assert three.names() == names


def test_a_rebase_git_could_not_begin_is_begun_by_continue(three, project, upstream, capsys):
    """tool-review-v22 R6: a stale index.lock at `rebase --onto`: git rebase failed at once,
    the stop said "rm it, then rebase --continue", and --continue said "the rebase was
    aborted", never rebasing. The advice, followed as written, rebases."""
    before = patch_bytes(three)
    new = commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    lock = project / "fork" / ".git" / "index.lock"
    lock.write_text("")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "rm fork/.git/index.lock" in out and "rebase --continue" in out, out
    lock.unlink()
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0 and "aborted" not in out, out
    assert three.base_commit == new and patch_bytes(three) == before


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


def test_rebase_abort_puts_aside_an_edit_to_a_file_the_rebase_changed(three, project, upstream,
                                                                      capsys):  # fmt: skip
    """v17 F4: git's reset --keep refused an uncommitted edit to a file the finished rebase
    changed, with its raw error, and status kept advising --abort; the edit goes into a
    stash, named."""
    fork = project / "fork"
    head = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    test = "pylintrc"  # a file no patch touches
    commit(upstream, {"transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 2\n',
                      test: "[MESSAGES CONTROL]\n"}, "up")  # fmt: skip
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    (fork / test).write_text("EDIT = 1\n")
    rc, out = te("rebase", "--abort", capsys=capsys)
    assert rc == 0 and "git -C fork stash pop brings them back" in out, out
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == head
    assert sh("git", "show", f"stash@{{0}}:{test}", cwd=fork) == "EDIT = 1\n"
    assert "rebase" not in te("status", capsys=capsys)[1]


def test_rebase_abort_at_a_conflict_keeps_the_edits_made_at_the_stop(
    three, project, upstream, capsys
):
    """v16 #4: git's abort resets the work tree; a resolution half done, and a file added at
    the stop, were gone. v23 #5: an untracked draft of a file a later patch creates made
    git's abort refuse, every time."""
    fork = project / "fork"
    head = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    series_more = (fork / "tests/test_more.py").read_text()
    fuser = "transformer_engine/pytorch/fuser.py"
    commit(upstream, {fuser: FUSER.replace("tuple(values)", "set(values)")}, "Upstream sets")
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    stop = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    (fork / fuser).write_text("HALF = 1\n")
    (fork / "tests/new.py").write_text("NEW = 1\n")
    sh("git", "add", "tests/new.py", cwd=fork)
    (fork / "tests/test_more.py").write_text("my draft\n")  # patch 3 creates it: untracked
    rc, out = te("rebase", "--abort", capsys=capsys)
    assert rc == 0 and f"back on the series as it was, at {head[:12]}" in out, out  # v25 F4
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == head
    assert (fork / "tests/test_more.py").read_text() == series_more
    branch = f"te-series/aborted-rebase-{stop[:12]}"
    assert "the files fork/ had at the stop" in out and f"kept on branch {branch}" in out
    assert sh("git", "rev-parse", f"{branch}^", cwd=fork).strip() == stop
    assert sh("git", "show", f"{branch}:{fuser}", cwd=fork) == "HALF = 1\n"
    assert sh("git", "show", f"{branch}:tests/new.py", cwd=fork) == "NEW = 1\n"
    assert sh("git", "show", f"{branch}:tests/test_more.py", cwd=fork) == "my draft\n"


def test_abort_of_a_users_own_rebase_advises_the_continue_that_keeps_its_commits(
    three, project, capsys
):
    """v16 #5: the advice was git's abort, which dropped a commit made at an edit stop."""
    fork = project / "fork"
    sh("git", "rebase", "-q", "-i", "HEAD~1", cwd=fork,
       env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})  # fmt: skip
    mine = commit(fork, {"tests/mine.py": "MINE = 1\n"}, msg("Work of mine"))
    rc, out = te("rebase", "--abort", capsys=capsys)
    assert rc == 2 and "did not start" in out, out
    sh(*shlex.split(re.search(r"Finish it: (git -C fork .* rebase --continue) \(", out)[1]),
       cwd=project)  # fmt: skip
    assert sh("git", "merge-base", "--is-ancestor", mine, "HEAD", cwd=fork) == ""


def test_rebase_tells_skipped_commits_from_merged_ones(three, project, upstream, capsys):
    names = three.names()
    fork = project / "fork"
    commit(upstream, CONFLICTING, "upstream changes route")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "conflicts in transformer_engine/pytorch/fuser.py" in out
    sh("git", "rebase", "--skip", cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 2
    assert f"dropped the commit(s) of {names[1]}, and fork/ does not have their changes" in out
    assert "became empty" not in out and "te-series rebase --abort" in out
    rc, out = te("status", capsys=capsys)
    assert (
        f"fork/: 2 of 3 patch(es) of patches/ applied, 1 dropped by the rebase ({names[1]})" in out
    )
    assert "(complete" not in out


def test_rebase_names_a_new_commit_it_left_out(three, project, upstream, capsys):
    """tool-review-v8 #1: a commit not yet exported, skipped at its conflict, is named (it is
    on no branch after the rebase), and --drop with its id, as the message says, finishes."""
    before, fork = patch_bytes(three), project / "fork"
    mine = commit(fork, {"tests/mine.py": "MINE = 1\n"}, msg("Work of mine"))
    commit(upstream, {"tests/mine.py": "MINE = 2\n"}, "Upstream adds mine")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "conflicts in tests/mine.py" in out, out
    sh("git", "rebase", "--skip", cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 2 and "left out commit(s) not yet exported" in out, out
    assert f"{mine[:12]} '" in out and "Work of mine" in out and f"cherry-pick {mine[:12]}" in out
    rc, out = te("rebase", "--continue", "--drop", mine[:12], capsys=capsys)
    assert rc == 0, out
    assert patch_bytes(three) == before


def test_a_left_out_commit_is_named_when_another_has_its_subject(three, project, upstream,
                                                                 capsys):  # fmt: skip
    """tool-review-v13 #1: two new commits with one message ("WIP"); the first, skipped at its
    conflict, counted as kept because the second has its subject, and was lost without a
    word. Matched by patch-id (one to one), it is named, and the cherry-pick, as said, keeps it."""
    fork = project / "fork"
    mine = commit(fork, {"tests/mine.py": "MINE = 1\n"}, msg("WIP"))
    commit(fork, {"tests/other.py": "OTHER = 1\n"}, msg("WIP"))
    commit(upstream, {"tests/mine.py": "MINE = 2\n"}, "Upstream adds mine")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "conflicts in tests/mine.py" in out, out
    sh("git", "rebase", "--skip", cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert (
        rc == 2
        and f"left out commit(s) not yet exported, and fork/ does not have their "
        f"changes: {mine[:12]} '[PyTorch] WIP'" in out
    ), out
    (pick,) = re.findall(r"To keep them: (git -C fork cherry-pick \S+), resolve", out)
    sh(*shlex.split(pick), cwd=project, check=False)  # it conflicts, as upstream has mine.py
    sh("git", "checkout", "--theirs", "tests/mine.py", cwd=fork)  # mine, as I resolve it
    sh("git", "add", "tests/mine.py", cwd=fork)
    sh("git", "cherry-pick", "--continue", cwd=fork, env={"GIT_EDITOR": "true"})
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0 and out.count("(a new commit)") == 2, out
    assert "MINE = 1" in (fork / "tests/mine.py").read_text()


def test_a_patch_upstream_merged_is_named_so_where_later_patches_changed_its_lines(
    three, project, upstream, capsys
):
    """tool-review-v8 #4: upstream merges patch 1 as it is; a later patch changed the same
    line since, so patch 1's diff does not reverse-apply on fork/'s top, but it does on
    upstream's commit: the advice is --drop, which finishes."""
    fork, names = project / "fork", three.names()
    commit(fork, {"transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 3\n'},
           msg("Raise VALUE again"))  # fmt: skip
    assert te("export")[0] == 0
    save(project)
    commit(upstream, {"transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 2\n'},
           "Upstream merges Raise VALUE")  # fmt: skip
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "they became empty" in out and "does not have their changes" not in out
    assert f"--drop {names[0]}" in out, out
    rc, out = te("rebase", "--continue", "--drop", names[0], capsys=capsys)
    assert rc == 0, out
    assert names[0] not in three.names()


def test_a_pr_upstream_squash_merged_is_named_merged_and_drop_finishes(project, upstream, capsys):
    """tool-review-v12 #5: upstream squash-merges patches 1 and 2 (2 changes 1's line again);
    resolved to upstream's side, patch 1's own diff is in no tree, so the advice was "abort
    and rebase again", which loops. The two together are in upstream's commit: --drop."""
    import re
    import shlex

    from series_helpers import make_series

    other = "transformer_engine/pytorch/other.py"
    series = make_series(project, upstream, [
        ({other: '"""Other."""\n\nVALUE = 2\n'}, msg("Raise VALUE")),
        ({other: '"""Other."""\n\nVALUE = 3\n'}, msg("Raise VALUE again")),
        ({"tests/t.py": "T = 1\n"}, msg("Add a test")),
    ])  # fmt: skip
    names, fork = series.names(), project / "fork"
    commit(upstream, {other: '"""Other."""\n\nVALUE = 3\n'}, "[PyTorch] Raise VALUE (#3500)")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"conflicts in {other}" in out, out
    sh("git", "checkout", "--ours", "--", other, cwd=fork)  # upstream's side: it has the change
    sh("git", "add", other, cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 2 and "does not have their changes" not in out, out
    (go_on,) = re.search(
        r"If so, finish with: (te-series rebase --continue.*?)\.$", out, re.M
    ).groups()
    assert go_on.endswith(f"--drop {names[0]} --drop {names[1]}"), out
    rc, out = te(*shlex.split(go_on)[1:], capsys=capsys)
    assert rc == 0, out
    assert series.names() == ["0001-PyTorch-Add-a-test.patch"]  # renumbered


def died_mid_pick(project, upstream, capsys):
    """A rebase that stops at patch 1's conflict (resolved, staged), then, at --continue, has
    git die mid-pick of patch 2, as git 2.39.5 does on a full disk (seen on a tmpfs: "fatal:
    sha1 file '.git/index.lock' write error. Out of diskspace"): patch 1's resolution
    committed (in rewritten-list), patch 2's pick the last line of rebase-merge/done and out of
    the todo, its changes in the work tree (a new file untracked) but not in the index, no
    rebase-merge/message, no REBASE_HEAD. Patch 3 changes patch 2's line again. Returns the
    series and patch 2's commit before the rebase."""
    other, fuser = "transformer_engine/pytorch/other.py", "transformer_engine/pytorch/fuser.py"
    series = make_series(project, upstream, [
        ({fuser: RESOLVED.replace("list(set(values))", "list(values)")}, msg("Return lists")),
        ({other: '"""Other."""\n\nVALUE = 2\n', "tests/t.py": "T = 1\n"}, msg("Raise VALUE")),
        ({other: '"""Other."""\n\nVALUE = 3\n'}, msg("Raise VALUE again")),
    ])  # fmt: skip
    fork = project / "fork"
    commit(upstream, CONFLICTING, "Upstream returns sets")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"conflicts in {fuser}" in out, out
    (fork / fuser).write_text(RESOLVED)
    sh("git", "add", "-A", cwd=fork)
    # git commits patch 1 and stops before patch 2 (a break); then the pick git died in: moved
    # from the todo to done, its merge written to the work tree, the index not
    sh("git", "rebase", "--edit-todo", cwd=fork, env={"GIT_SEQUENCE_EDITOR": "sed -i 1ibreak"})
    sh("git", "rebase", "--continue", cwd=fork, env={"GIT_EDITOR": "true"})
    picked = dies_picking(fork)
    merge = fork / ".git" / "rebase-merge"
    assert not (merge / "message").exists() and not (fork / ".git" / "REBASE_HEAD").exists()
    assert "VALUE = 2" in (fork / other).read_text() and (fork / "tests/t.py").exists()
    return series, picked


def dies_picking(fork):
    """git dies picking the next commit of the todo (as on a full disk): the pick moved to
    done, its changes written to the work tree but not the index. Returns the commit."""
    merge = fork / ".git" / "rebase-merge"
    todo = (merge / "git-rebase-todo").read_text().split("\n", 1)
    done = (merge / "done").read_text().replace("break\n", "")
    (merge / "done").write_text(done + todo[0] + "\n")
    (merge / "git-rebase-todo").write_text(todo[1])
    picked = todo[0].split()[1]
    sh("git", "cherry-pick", "--no-commit", picked, cwd=fork)
    sh("git", "reset", "-q", cwd=fork)
    return picked


def disk_still_full(monkeypatch, fork) -> None:
    """The next git rebase --continue of the tool dies picking, as it did."""
    real = rebase.git_run

    def git_run(*args, **kw):
        if args[:2] != ("rebase", "--continue"):
            return real(*args, **kw)
        monkeypatch.setattr(rebase, "git_run", real)
        dies_picking(fork)
        said = "fatal: sha1 file '.git/index.lock' write error. Out of diskspace\n"
        return subprocess.CompletedProcess(args, 128, "", said)

    monkeypatch.setattr(rebase, "git_run", git_run)


def test_a_pick_git_did_not_finish_is_named_and_its_advice_gets_past(
    project, upstream, capsys, monkeypatch
):
    """The disk filled while git picked patch 2 at --continue: the stop said "fix what
    git says (an index.lock)", and git said "git add" and then "could not read log file
    message", forever; then the stop said to pick it again by hand, and a te-series rebase
    --continue as status said went on without it (the patch dropped, v16 #2). The stop and
    status name the patch git did not finish; --continue, as they say, picks it again, what
    git half wrote kept in a stash, as apply's --continue runs its patch again."""
    series, picked = died_mid_pick(project, upstream, capsys)
    names, before, fork = series.names(), patch_bytes(series), project / "fork"
    disk_still_full(monkeypatch, fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    said = f"git did not finish picking patch {names[1]} ('[PyTorch] Raise VALUE')"
    assert rc == 2 and said in out and "Fix that first" not in out, out
    (advice,) = re.findall(r"^git did not finish picking .*$", out, re.M)
    assert te("status", capsys=capsys)[1].count(advice) == 1  # status says the same
    (then,) = re.findall(r"; then (te-series rebase --continue) picks it again \(", advice)
    rc, out = te(*shlex.split(then)[1:], capsys=capsys)  # the disk has room again
    assert rc == 0 and "dropped" not in out and series.names() == names, out
    assert {n: patch_bytes(series)[n] for n in names[1:]} == {n: before[n] for n in names[1:]}
    assert b"list(set(values))" in (series.dir / names[0]).read_bytes()  # the resolution kept
    half = sh("git", "stash", "show", "--include-untracked", "--name-only", cwd=fork).split()
    assert half == ["tests/t.py", "transformer_engine/pytorch/other.py"], half  # never away


def test_a_pick_a_killed_git_did_not_finish_says_to_remove_its_lock(project, upstream, capsys):
    """A git killed mid-pick also leaves its .git/index.lock, where no git step can run: the
    stop, status and a --continue before the lock is gone say to remove it, as written; then
    --continue picks the patch again (v16 #2)."""
    series, picked = died_mid_pick(project, upstream, capsys)
    names, fork = series.names(), project / "fork"
    (fork / ".git/index.lock").write_text("")
    for verb in (("rebase", "--continue"), ("status",), ("rebase", "--continue")):
        rc, out = te(*verb, capsys=capsys)
        assert f"git did not finish picking patch {names[1]}" in out, out
    (rm,) = re.findall(r"remove it \((rm fork/\.git/index\.lock)\); then te-series rebase", out)
    sh(*shlex.split(rm), cwd=project)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0 and series.names() == names, out


def test_a_pick_git_did_not_finish_made_by_hand_is_taken_as_the_patch(project, upstream, capsys):
    """The finding's own way out of that stop: the pick's files added and committed with its
    message and author (git commit -C). --continue takes that commit as the patch, not as a
    new commit with the patch dropped."""
    series, picked = died_mid_pick(project, upstream, capsys)
    names, fork = series.names(), project / "fork"
    sh("git", "add", "-A", cwd=fork)
    sh("git", "commit", "-q", "-C", picked, cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0 and series.names() == names, out


def test_a_rebase_git_died_checking_out_names_the_lock_and_continue_starts_it_again(
    three, project, upstream, capsys, monkeypatch
):
    """tool-review-v19 F4: git killed while rebase --onto checked out the new base (SIGXFSZ
    of a file-size limit here, as a kill or crash would): HEAD never left the series, an
    index.lock stayed, nothing picked. The advice was "add those that resolve the patch;
    stash the rest", and --continue then replayed the series onto its own old tip, then
    failed on update_ref for ever. status and --continue name the lock; once it is removed as
    they say, --continue checks the new base out and picks every patch, once."""
    names, before, fork = three.names(), patch_bytes(three), project / "fork"
    # sorted after the series' files: git rewrites those, then dies writing this one
    new = commit(upstream, {"vendor/big.txt": ("x" * 99 + "\n") * 2000}, "Upstream big file")
    real = rebase.git_run
    git_run = git_with_size_limit(real, lambda args: args[:2] == ("rebase", "--onto"))
    monkeypatch.setattr(rebase, "git_run", git_run)
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "killed by signal" in out and (fork / ".git/index.lock").exists(), out
    monkeypatch.setattr(rebase, "git_run", real)
    for verb in (("status",), ("rebase", "--continue")):
        rc, out = te(*verb, capsys=capsys)
        assert f"git did not finish checking out {new[:12]}" in out, out
    (rm,) = re.findall(r"remove it \((rm fork/\.git/index\.lock)\); then te-series rebase", out)
    sh(*shlex.split(rm), cwd=project)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0 and three.names() == names, out
    assert sh("git", "rev-list", "--count", f"{new}..series", cwd=fork).strip() == "3"
    assert patch_bytes(three) == before and read_state(fork).base == new


class Killed(BaseException):
    """A SIGKILL: nothing of the tool's runs after it (no rollback, no record)."""


def test_a_rebase_killed_while_it_wrote_patches_is_named_by_abort_and_its_advice_undoes_it(
    three, project, upstream, capsys, monkeypatch
):
    """tool-review-v20 #13: rebase killed after it replaced a patch file and before it replaced
    base.toml; `rebase --abort` said "fork/ is back on the series" and nothing of the patch
    made for the new base, nor of the temporary file, both left in patches/. It names them
    and how to put patches/ back as committed; followed, patches/ is as committed."""
    head, _, rest = FUSER.partition("\n")  # patch 2's file moves upstream: its file changes
    commit(upstream, {"transformer_engine/pytorch/fuser.py": head + "\n# upstream\n" + rest}, "Up")
    real = os.replace

    def replace(src, dst):  # killed at base.toml's rename, the patches replaced before it
        if str(dst).endswith("base.toml"):
            raise Killed
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(Killed):
        te("rebase", "--onto", "main", "--te-src", str(upstream))
    monkeypatch.setattr(os, "replace", real)
    left = sh("git", "status", "--porcelain", "--", "patches", cwd=project)
    assert ".base.toml.te-series-tmp" in left and " M patches/0002-" in left, left
    rc, out = te("rebase", "--abort", capsys=capsys)
    assert rc == 0 and "The rebase was stopped while it wrote patches/" in out, out
    (undo,) = re.findall(r"put patches/ back as committed: (.*)", out)
    sh("sh", "-c", undo, cwd=project)
    assert sh("git", "status", "--porcelain", "--", "patches", cwd=project) == ""
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and out.count("unchanged") == 3, out


@pytest.mark.parametrize("added, behind", [(False, False), (True, False), (False, True)])
def test_a_pick_refused_for_a_file_in_its_way_is_named_and_continue_gets_past(
    three, project, upstream, capsys, added, behind
):
    """tool-review-v21 #6: at a stop, a draft of a file the next patch creates (untracked).
    git refused that pick and put it back on its todo; the stop said --continue would keep
    such changes in a stash, and each --continue stopped again the same; status said "git
    add the files", and then git committed the draft alone as that patch (its message and
    author) and the patch's change as a new commit: one patch exported as two. The stop and
    status name the refused pick; --continue, as they say, puts the draft in a stash (added
    or not) and picks the patch whole. behind: a pick goes through between the stop and the
    refused one; git 2.39 then lists that pick last in its done file, and the first stop was
    the generic "fix what git said" one (tool-review-v22 R11)."""
    fork = project / "fork"
    draft, subject = (
        ("tests/extra.py", "Add extra") if behind else ("tests/test_more.py", "Test more")
    )
    if behind:  # a fourth patch, after the one that goes through
        commit(fork, {draft: "X = 1\n"}, msg(subject))
        assert te("export")[0] == 0
    names, before = three.names(), patch_bytes(three)
    commit(upstream, CONFLICTING, "Upstream returns sets")
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    (fork / "transformer_engine/pytorch/fuser.py").write_text(RESOLVED)
    sh("git", "add", "-A", cwd=fork)
    (fork / draft).write_text("my draft\n")  # the last patch creates it
    capsys.readouterr()
    rc, out = te("rebase", "--continue", capsys=capsys)
    said = f"git would not pick patch {names[-1]} ('[PyTorch] {subject}')"
    assert rc == 2 and said in out and "Fix that first" not in out, out
    (advice,) = re.findall(r"^git would not pick .*$", out, re.M)
    assert te("status", capsys=capsys)[1].count(advice) == 1  # status says the same
    if added:  # what status said before: git add the file
        sh("git", "add", draft, cwd=fork)
    (then,) = re.findall(r"(te-series rebase --continue) puts them in a stash", advice)
    rc, out = te(*shlex.split(then)[1:], capsys=capsys)
    assert rc == 0 and "add " not in out and three.names() == names, out
    assert {n: patch_bytes(three)[n] for n in names[2:]} == {n: before[n] for n in names[2:]}
    base = read_state(fork).base
    assert sh("git", "rev-list", "--count", f"{base}..series", cwd=fork).strip() == str(len(names))
    kept = sh("git", "stash", "show", "-p", "--include-untracked", cwd=fork)
    assert "+my draft" in kept, kept  # never away
    # tool-review-v26 #2: the pop it first named fails where the patch now has the file; the
    # show it names by the file's kind brings the draft back
    took = re.findall(r"\((git -C fork show 'stash@\{0\}\^3:PATH')[^(]*?(git -C fork show "
                      r"'stash@\{0\}:PATH') for a changed one\)", out + advice)  # fmt: skip
    assert took, out
    show = took[0][1 if added else 0].replace("PATH", draft)
    assert sh(*shlex.split(show), cwd=project) == "my draft\n"


def test_abort_after_a_pull_of_base_toml_leaves_uncommitted_notes_alone(three, project, upstream,
                                                                         capsys):  # fmt: skip
    """tool-review-v21 #3: base.toml as committed already on the rebase's commit (a pull of a
    colleague's rebase; export's own advice then is to rebase there), notes of yours below a
    patch's '---' not committed yet, the rebase stopped at a conflict: abort took the notes
    for a half-written rebase and said to put patches/ back with git checkout HEAD --, which
    deletes them. The rebase wrote nothing: abort says nothing of patches/, and the rebase,
    done again and resolved, keeps the notes."""
    fork, name = project / "fork", three.names()[1]
    commit(fork, {"README": "mine\n"}, msg("Say hello"))  # not exported yet
    new = move_upstream(project, upstream, {"README": "news\n"})
    path = three.dir / name
    notes = path.read_bytes().replace(b"\n---\n", b"\n---\nReviewer notes: v2.\n\n", 1)
    path.write_bytes(notes)
    rc, out = te("rebase", "--onto", new[:12], "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "conflicts in README" in out, out
    rc, out = te("rebase", "--abort", capsys=capsys)
    assert rc == 0 and "patches/" not in out and "checkout HEAD" not in out, out
    assert path.read_bytes() == notes
    assert te("rebase", "--onto", new[:12], "--te-src", str(upstream))[0] == 2
    (fork / "README").write_text("news\nmine\n")
    sh("git", "add", "README", cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0 and f"unchanged {name}" in out and path.read_bytes() == notes, out


def test_a_scratch_tree_of_a_killed_rebase_does_not_stop_a_rebuild(three, project, upstream,
                                                                    capsys, monkeypatch):  # fmt: skip
    """tool-review-v21 #2: a rebase killed while it brought the prerequisites onto the new
    commit (in a scratch worktree of fork/'s, .git/te-series/carry-*) left that worktree
    registered; apply --force then refused fork/ for its linked worktree, and the removal it
    advised failed (the scratch tree's files differ from its HEAD). The tool's own scratch
    trees are no linked worktrees of the user's: the rebuild goes through."""
    commit(upstream, {"README": "news\n"}, "Upstream news")
    real = rebase.git_run

    def git_run(*args, **kw):  # killed before the scratch tree is removed
        if args[:2] == ("worktree", "remove"):
            raise Killed
        return real(*args, **kw)

    monkeypatch.setattr(rebase, "git_run", git_run)
    with pytest.raises(Killed):
        te("rebase", "--onto", "main", "--te-src", str(upstream))
    monkeypatch.setattr(rebase, "git_run", real)
    listed = sh("git", "worktree", "list", cwd=project / "fork")
    assert "/.git/te-series/carry-" in listed, listed
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0 and "linked worktree" not in out, out


def test_a_rebase_refused_for_edits_in_fork_says_to_run_the_rebase_again(three, project,
                                                                         upstream, capsys):  # fmt: skip
    """tool-review-v24 #4: the refusal of a fork/ with uncommitted edits ended "then export
    again", which does not rebase. Followed as written (the stash), the rebase runs."""
    fork = project / "fork"
    commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    (fork / "tests/test_fuser.py").write_text("edited = 1\n")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "export again" not in out and "then run the rebase again" in out, out
    (stash,) = re.findall(r"stash them \((git -C fork stash)\)", out)
    sh(*shlex.split(stash), cwd=project)
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 0


@pytest.mark.parametrize("verb", ["--abort", "--continue"])
def test_a_rebase_verb_without_fork_says_so(project, capsys, verb):
    """tool-review-v25 F3: without fork/, `rebase --abort` gave an OS error with "fix that
    (free space or a permission), then run the command again", which gave the same."""
    rc, out = te("rebase", verb, capsys=capsys)
    assert rc == 2 and "fork/ does not exist, so no te-series rebase is in progress" in out, out


def test_a_rebase_stopped_for_an_uncommitted_note_goes_on_once_it_is_committed(three, project,
                                                                              upstream, capsys):  # fmt: skip
    """tool-review-v38 #2: a note of yours below a patch's '---', not committed, in a patch the
    rebase rewrites: the rebase stopped at its end and advised to commit and rebuild fork/,
    which undid the rebase (then `rebase --continue` found none). Committed, it goes on and
    keeps the note."""
    name = three.names()[1]
    path = three.dir / name
    note = b"A note of mine.\n\n"
    path.write_bytes(path.read_bytes().replace(b"\n---\n", b"\n---\n" + note, 1))
    fuser = "transformer_engine/pytorch/fuser.py"
    commit(upstream, {fuser: "# A header.\n" + (upstream / fuser).read_text()}, "Upstream header")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "uncommitted edits" in out and "apply --force" not in out, out
    assert "Then te-series rebase --continue" in out, out
    (cmd,) = re.findall(r"commit them \((git add \S+ && git commit)\)", out)
    sh("bash", "-c", cmd + " -q -m note", cwd=project)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0 and f"change {name}" in out, out
    assert b"\n---\n" + note in path.read_bytes()
