"""Every "do X" in a message of export, rebase, apply and the work trees is followed here as
written (the command it names is run, the edit it says is made), and gets the user past the
refusal (issue: advice trees; the table: results/tool-advice-trees.md).

Each case: a set-up, the verb that refuses, words of the refusal, the steps that follow its
advice (a pattern whose groups are the commands the message names, run as they stand; or an
edit), and the verb that then goes through.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from te_series import worktree
from te_series.base import UPSTREAM
from te_series.git import NOTES_REF
from te_series.series import Series
from te_series.worktree import state_file
from series_helpers import (
    add_copy_of_patch_2,
    commit,
    CONFLICTING,
    GOOD_CHANGE,
    GOOD_MSG,
    group_all,
    interrupt_nth,
    make_wheel,
    ME,
    move_upstream,
    msg,
    RESOLVED,
    save,
    sh,
    te,
    WHO,
)
from test_check_port import NEWER, wheels
from test_prerequisites import add_prerequisite, SUBJECT
from test_rebase import rebased_by_git_only

P1, P2, P3 = (
    "0001-PyTorch-Raise-VALUE.patch",
    "0002-PyTorch-Make-route-return-a-list.patch",
    "0003-PyTorch-Test-more.patch",
)
FUSER_PATH = "transformer_engine/pytorch/fuser.py"
# An editor that writes a commit message (git runs `$GIT_EDITOR "$@"` in a shell).
MESSAGE = {"GIT_EDITOR": "printf '[PyTorch] Keep the edit\\n\\nBecause.\\n' >"}


@dataclasses.dataclass
class Ctx:
    project: Path
    upstream: Path
    capsys: object
    monkeypatch: object
    tmp_path: Path

    @property
    def fork(self) -> Path:
        return self.project / "fork"

    def args(self, args) -> list[str]:
        """A verb's arguments; PATH is this test's TE checkout, FORK fork/, FILE and DIR a
        file and a folder outside the project, PATCHES a file in patches/."""
        said = {"PATH": self.upstream, "FORK": self.fork, "FILE": self.tmp_path / "f",
                "DIR": self.tmp_path / "d", "PATCHES": self.project / "patches/x.txt"}  # fmt: skip
        return [str(said.get(a, a)) for a in args]

    def te(self, *args) -> tuple[int, str]:
        return te(*self.args(args), capsys=self.capsys)

    def do(self, command: str, env: dict | None = None, check: bool = True) -> str:
        """Run a command of a message as written, from the project root: te-series in-process
        (PATH: this test's TE checkout), anything else in a shell. series@{N}: the entry
        before the change, 1 here."""
        command = command.replace("@{N}", "@{1}")
        if command.startswith("te-series "):
            rc, out = self.te(*shlex.split(command)[1:])
            assert rc == 0 or not check, f"{command}\n{out}"
            return out
        proc = subprocess.run(
            command, shell=True, cwd=self.project, capture_output=True, text=True,
            env={**os.environ, **ME, "GIT_EDITOR": "true", **(env or {})},
        )  # fmt: skip
        assert proc.returncode == 0 or not check, f"{command}\n{proc.stdout}{proc.stderr}"
        return proc.stdout

    def rebase_i(self, command: str, match: str, action: str, message: str | None = None):
        """Run a message's `git -C fork rebase -i BASE`, marking the commit whose todo line
        has `match` with `action` ('d': delete the line); a reword gets `message`."""
        sed = f"/{match}/d" if action == "d" else f"/{match}/s/^pick/{action}/"
        env = {"GIT_SEQUENCE_EDITOR": f"sed -i '{sed}'"}
        if message is not None:
            (self.tmp_path / "message").write_text(message)
            env["GIT_EDITOR"] = f"cp {self.tmp_path / 'message'}"
        self.do(command, env)


def advice(out: str, pattern: str) -> tuple[str, ...]:
    found = re.search(pattern, out)
    assert found, f"no {pattern!r} in:\n{out}"
    return found.groups()


def run(*patterns: str, env: dict | None = None):
    """A step: run the commands the pattern's groups find in the message, in order."""
    return lambda c, out: [c.do(cmd, env) for p in patterns for cmd in advice(out, p)]


def mark(pattern: str, match: str, action: str):
    """A step: the message's `git -C fork rebase -i BASE` (the pattern's group), the commit
    whose todo line has `match` marked `action`."""
    return lambda c, out: c.rebase_i(advice(out, pattern)[0], match, action)


def naming(pattern: str, path: str):
    """A step: the message's command (`git -C fork add` the files), given the file."""
    return lambda c, out: c.do(advice(out, pattern)[0] + " " + path)


def edit(path: str, text: str | None):
    """A step: write (None: delete) a file of fork/."""
    return lambda c, out: (c.fork / path).write_text(text) if text else (c.fork / path).unlink()


# -- set-ups -------------------------------------------------------------------------------


def interrupted(c, name: str, args, n: int = 2) -> None:
    """A Ctrl-C in the n-th call of worktree.<name> during `te-series args`."""
    restore = interrupt_nth(c.monkeypatch, name, n)
    assert c.te(*args)[0] == 130
    restore()


def stopped(c, abort: bool = False) -> None:
    """Upstream conflicts with patch 2; a fresh apply stops on it (its am aborted)."""
    move_upstream(c.project, c.upstream, CONFLICTING)
    shutil.rmtree(c.fork)
    assert c.te("apply", "--te-src", "PATH")[0] == 2
    if abort:
        sh("git", "am", "--abort", cwd=c.fork)


def side_branch(c, files: dict, at: str = "HEAD~1") -> None:
    """A branch `side` off patch 2 (or `at`) with a commit of its own."""
    sh("git", "checkout", "-q", "-b", "side", at, cwd=c.fork)
    commit(c.fork, files, msg("Side"))
    sh("git", "checkout", "-q", "series", cwd=c.fork)


def upstream_news(c) -> None:
    """A new upstream commit on main, also named origin/main there (as in a clone of TE)."""
    commit(c.upstream, {"README": "upstream news\n"}, "Upstream news")
    sh("git", "update-ref", "refs/remotes/origin/main", "main", cwd=c.upstream)


def conflicting_rebase(c) -> None:
    commit(c.upstream, CONFLICTING, "Upstream returns sets")
    assert c.te("rebase", "--onto", "main", "--te-src", "PATH")[0] == 2


def resolve_rebase(c, out) -> None:
    (c.fork / FUSER_PATH).write_text(RESOLVED)
    sh("git", "add", "-A", cwd=c.fork)


def mine_below_the_series(c) -> None:
    """A commit of mine put below the first series patch (its note-less commit first)."""
    base = worktree.read_state(c.fork).base
    made = "git add tests/m.py && git commit -q -m '[PyTorch] Mine'"
    todo = f'sed -i "1i exec echo M = 1 > tests/m.py && {made}"'
    sh("git", "rebase", "-q", "-i", base, cwd=c.fork, env={"GIT_SEQUENCE_EDITOR": todo})


def upstream_copy_above_the_series(c) -> None:
    """A commit with upstream's identity (as te-series gives a prerequisite) on top."""
    commit(c.fork, {"README": "later\n"}, "Upstream follow-up")
    sh("git", "commit", "-q", "--amend", "--no-edit", "--reset-author", cwd=c.fork, env=UPSTREAM)


def lost_note_in_group_b(c) -> None:
    """Patches 1-2 in `# pr: a`, 3 in `# pr: b`; patch 3's commit reworded and changed
    without its note (so neither its subject nor its change names its patch)."""
    three = Series(c.project / "patches", c.project)
    three.series_file.write_text(f"# pr: a\n{P1}\n{P2}\n\n# pr: b\n{P3}\n")
    save(c.project, "two groups")
    (c.fork / "tests/test_more.py").write_text("changed = 1\n")
    sh("git", "add", "tests/test_more.py", cwd=c.fork)
    sh("git", "-c", "notes.rewrite.amend=false", "commit", "-q", "--amend", "-m",
       msg("Test more, reworded"), cwd=c.fork)  # fmt: skip


def skip_case(kind: str):
    """A patch that stops apply without conflict: one that applies nowhere, one whose change
    the tree has, one without a diff. Returns the set-up."""

    def setup(c):
        three = Series(c.project / "patches", c.project)
        patch = three.dir / P2
        good = patch.read_text()
        if kind == "unapplied":
            patch.write_text(good.replace(' """Return values as a tuple."""', ' """Hand."""'))
            save(c.project, "hand edit")
        elif kind == "already":
            add_copy_of_patch_2(three)
        else:
            (three.dir / EMPTY).write_text(good.split("\n---\n")[0] + "\n---\n2.39.5\n\n")
            three.series_file.write_text(three.series_file.read_text() + EMPTY + "\n")
            save(c.project, "empty patch")
        shutil.rmtree(c.fork)

    return setup


EMPTY = "0004-PyTorch-Nothing.patch"
A_DIFF = (
    " tests/n.py | 1 +\n 1 file changed, 1 insertion(+)\n create mode 100644 tests/n.py\n\n"
    "diff --git a/tests/n.py b/tests/n.py\nnew file mode 100644\n--- /dev/null\n"
    "+++ b/tests/n.py\n@@ -0,0 +1 @@\n+N = 1\n-- \n2.39.5\n\n"
)


def skip_then_drop(c, out) -> None:
    """`apply --continue --skip` (export then needs --drop NAME): both as the message says."""
    skip, drop = advice(out, r"or skip it: `(te-series apply --continue --skip)` \(export then "
                             r"needs (--drop [^,]+), which")  # fmt: skip
    c.do(skip)
    c.do(f"te-series export {drop}")


def reword_to_what_am_reads(message: str, match: str):
    """A step: reword the commit to the subject the refusal says am reads back."""

    def step(c, out):
        (rebase,) = advice(
            out,
            r"Fix each commit named in (git -C fork -c commit.cleanup=\S+ -c "
            r"commit.status=\S+ rebase -i \w+)",
        )
        (subject,) = advice(out, r"would come back from the patch as '([^']+)' \(git am joins")
        c.rebase_i(rebase, match, "reword", subject + "\n\n" + message.split("\n\n", 1)[1])

    return step


def indent_the_line(line: str):
    def step(c, out):
        (rebase,) = advice(
            out,
            r"Fix each commit named in (git -C fork -c commit.cleanup=\S+ -c "
            r"commit.status=\S+ rebase -i \w+)",
        )
        c.rebase_i(rebase, "Add e", "reword", cut_message(line).replace(line, "  " + line))

    return step


def cut_message(line: str) -> str:
    return f"[PyTorch] Add e\n\nNumbers:\n{line}\nbefore: 10 ms\n\nSigned-off-by: D <d@x.org>"


def new_file(message: str, env: dict | None = None):
    """A set-up: a new commit with this message (and author)."""

    def setup(c):
        (c.fork / "tests" / "e.py").write_text("E = 1\n")
        sh("git", "add", "-A", cwd=c.fork)
        sh("git", "commit", "-q", "-m", message, cwd=c.fork, env=env)

    return setup


def set_the_author(c, out) -> None:
    """'edit' in the rebase the message names, then its amend and continue commands."""
    (rebase,) = advice(
        out,
        r"Fix each commit named in (git -C fork -c commit.cleanup=\S+ -c commit.status=\S+ "
        r"rebase -i \w+)",
    )
    c.rebase_i(rebase, "Add e", "edit")
    run(r"Mark the commit 'edit', then (git -C fork commit --amend --no-edit --author=.+?) "
        r"and (git -C fork rebase --continue)")(c, out)  # fmt: skip


def port_tree(c) -> None:
    wheels(c.project, c.upstream, c.tmp_path, NEWER)
    assert c.te("port", "--release", "10.0.0", "--edit")[0] == 0


def without_patch_2(c) -> None:
    """The series without patch 2, the one on fuser.py (which prerequisite #42 changes)."""
    c.rebase_i(f"git -C fork rebase -i {worktree.read_state(c.fork).base}", "Make route", "drop")
    assert c.te("export", "--drop", P2)[0] == 0
    save(c.project)


def with_prerequisite(c) -> None:
    without_patch_2(c)
    add_prerequisite(c.project, c.upstream)


def rebuilt_with_a_pinned_prerequisite(c) -> None:
    """fork/ made with #42, then a colleague renames #42's subject in base.toml (committed),
    and a commit of mine."""
    with_prerequisite(c)
    assert c.te("apply", "--force", "--te-src", "PATH")[0] == 0
    save(c.project)  # what the rebuilt fork/ exports
    toml = c.project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace(SUBJECT, "Cache the fused ops (#42)"))
    save(c.project, "a colleague's new title")
    commit(c.fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))


def reword_head(c) -> None:
    """A change of mine in fork/: patch 3's subject."""
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more things"), cwd=c.fork)


def edit_patch_1(c) -> None:
    path = c.project / "patches" / P1
    path.write_text(path.read_text().replace("helps.", "really helps."))


def no_patch_record(c) -> None:
    path = state_file(c.fork)
    path.write_text(re.sub(r',\s*"recorded": \{[^}]*\}', "", path.read_text()))
    reword_head(c)


def pulled_patch_1(c) -> None:
    edit_patch_1(c)
    save(c.project, "a colleague's fix")
    reword_head(c)


def reordered_series(c) -> None:
    (c.project / "patches" / "series").write_text(f"# order\n{P2}\n{P1}\n{P3}\n")
    save(c.project, "reorder")
    reword_head(c)


def no_git_for_patches(c) -> None:
    shutil.rmtree(c.project / ".git")
    reword_head(c)


def edited_patch_1(c) -> None:
    edit_patch_1(c)
    reword_head(c)


def noted_patch_3(c) -> None:
    """A note of yours below patch 3's '---', not committed; its commit reworded in fork/."""
    path = c.project / "patches" / P3
    path.write_text(path.read_text().replace("\n---\n", "\n---\nA note of mine.\n\n", 1))
    reword_head(c)


def fork_is_a_file(c) -> None:
    shutil.rmtree(c.fork)
    c.fork.write_text("x\n")


def resolved_stop(c) -> None:
    stopped(c)
    (c.fork / FUSER_PATH).write_text(RESOLVED)
    sh("git", "add", "-A", cwd=c.fork)


def merging(c) -> None:
    side_branch(c, {"tests/side.py": "S = 1\n"})
    sh("git", "merge", "-q", "--no-ff", "--no-commit", "side", cwd=c.fork)


def merged(c) -> None:
    side_branch(c, {"tests/side.py": "S = 1\n"})
    sh("git", "merge", "-q", "--no-edit", "side", cwd=c.fork)


def cherry_picking(c) -> None:
    side_branch(c, CONFLICTING, "HEAD~2")
    sh("git", "cherry-pick", "side", cwd=c.fork, check=False)


def editing_in_a_rebase(tree: Path) -> None:
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"}
    sh("git", "rebase", "-q", "-i", "HEAD~1", cwd=tree, env=env)


def pypi_fork(c) -> None:
    wheel = make_wheel(c.upstream, c.tmp_path / "w")
    assert c.te("apply", "--force", "--wheel", str(wheel))[0] == 0


def off_the_base(c) -> None:
    """series reset onto an unrelated history (a checkout -B of the wrong thing)."""
    sh("git", "checkout", "-q", "--orphan", "other", cwd=c.fork)
    commit(c.fork, {"x.py": "X = 1\n"}, msg("Unrelated"))
    sh("git", "checkout", "-q", "-B", "series", "other", cwd=c.fork)


def empty_commit(c) -> None:
    sh("git", "commit", "-q", "--allow-empty", "-m", "[PyTorch] An empty marker", cwd=c.fork)


def empty_commit_below(c) -> None:
    """An empty commit, and a commit with a change after it."""
    empty_commit(c)
    commit(c.fork, {"tests/f.py": "F = 1\n"}, "[PyTorch] Add f")


def hand_rebase_onto_upstream(c) -> None:
    commit(c.upstream, {"README": "news\n"}, "Upstream news")
    sh("git", "fetch", "-q", "origin", cwd=c.fork)
    sh("git", "rebase", "-q", "--onto", "origin/main", "HEAD~3", "series", cwd=c.fork)


def notes_clash(c) -> None:
    """Patch 2's commit noted as patch 3, and patch 3's commit gone."""
    sh("git", "notes", f"--ref={NOTES_REF}", "add", "-f", "-m", P3, "HEAD~1", cwd=c.fork)
    sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=c.fork)


def notes_swapped(c) -> None:
    """The patch-name notes of patch 2's and patch 3's commits swapped by hand."""
    for rev, name in (("HEAD~1", P3), ("HEAD", P2)):
        sh("git", "notes", f"--ref={NOTES_REF}", "add", "-f", "-m", name, rev, cwd=c.fork)


def port_series_commit_changed(c) -> None:
    port_tree(c)
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/", "GIT_EDITOR": "sed -i s/list/List/"}
    sh("git", "rebase", "-q", "-i", "HEAD~2", cwd=c.project / "fork-port/10.0.0", env=env)


def news_on_a_branch_fork_lacks(c) -> None:
    upstream_news(c)
    sh("git", "branch", "news", "main", cwd=c.upstream)


def loose_upstream_commit(c) -> None:
    upstream_news(c)
    loose = sh("git", "commit-tree", "-p", "HEAD", "-m", "loose", "HEAD^{tree}", cwd=c.upstream)
    sh("git", "update-ref", "refs/loose/x", loose.strip(), cwd=c.upstream)


def skipped_at_a_conflict(c) -> None:
    conflicting_rebase(c)
    sh("git", "rebase", "--skip", cwd=c.fork)


def locked_rebase(c) -> None:
    """A rebase stopped at its conflict, resolved, and a .git/index.lock a killed git left."""
    conflicting_rebase(c)
    resolve_rebase(c, "")
    (c.fork / ".git/index.lock").write_text("")


def unapplied_stop(c) -> None:
    skip_case("unapplied")(c)
    assert c.te(*APPLY)[0] == 2


def untracked_during_a_rebase(c) -> None:
    conflicting_rebase(c)
    resolve_rebase(c, "")
    (c.fork / "tests/stray.py").write_text("S = 1\n")


def new_commit_skipped_at_a_conflict(c) -> None:
    commit(c.fork, {"tests/mine.py": "MINE = 1\n"}, msg("Work of mine"))
    commit(c.upstream, {"tests/mine.py": "MINE = 2\n"}, "Upstream adds mine")
    assert c.te("rebase", "--onto", "main", "--te-src", "PATH")[0] == 2
    sh("git", "rebase", "--skip", cwd=c.fork)


def news_fetched(c) -> None:
    upstream_news(c)
    sh("git", "fetch", "-q", "origin", cwd=c.fork)


def unfinished_rebuild(c) -> None:
    interrupted(c, "am", ("apply", "--force", "--te-src", "PATH"))


def complete_rebuild(c) -> None:
    interrupted(c, "swap_in", ("apply", "--force", "--te-src", "PATH"), 1)


def git_dir_elsewhere(c) -> None:
    (c.fork / ".git").rename(c.project / ".sepgit")
    (c.fork / ".git").write_text("gitdir: ../.sepgit\n")


def backup_folder_is_a_file(c) -> None:
    (c.project / ".te-series-backup").write_text("x\n")


def backup_folder_is_a_link(to: str):
    """.te-series-backup a link to a disk not mounted, or to another file system (v12 #10)."""

    def setup(c):
        other = c.tmp_path / "unmounted"
        if to != "nothing":
            other = Path(tempfile.mkdtemp(prefix="te-series-test-", dir="/dev/shm"))
        (c.project / ".te-series-backup").symlink_to(other)

    return setup


def drop_the_other_disk(c, out) -> None:
    """Clean up /dev/shm (the link's target; nothing was moved there)."""
    target = Path(os.readlink(c.project / ".te-series-backup"))
    if target.is_dir():
        assert not any(target.iterdir())
        target.rmdir()


def complete_rebuild_and_backup_file(c) -> None:
    complete_rebuild(c)
    backup_folder_is_a_file(c)


def series_changed_during_apply(c) -> None:
    unfinished_rebuild(c)
    (c.project / "patches/series").write_text(f"# order\n{P1}\n{P2}\n")
    save(c.project, "patch 3 out")


def rebase_during_apply(c) -> None:
    unfinished_rebuild(c)
    editing_in_a_rebase(c.project / "fork.new")


def stopped_on_a_damaged_file_then_fixed(c) -> None:
    path = c.project / "patches" / P2
    path.write_text(path.read_text().replace(' """Return values as a tuple."""', " damaged"))
    save(c.project, "damage")
    assert c.te("apply", "--force", "--te-src", "PATH")[0] == 2
    sh("git", "checkout", "HEAD~1", "--", f"patches/{P2}", cwd=c.project)  # fixed, uncommitted


def file_where_pr_writes_a_folder(c) -> None:
    (c.tmp_path / "f").write_text("x\n")
    group_all(Series(c.project / "patches", c.project), c.project)


def fix_the_stopped_patch(c, out) -> None:
    commit(c.fork, GOOD_CHANGE, GOOD_MSG)


def stage_all(c, out) -> None:
    sh("git", "add", "-A", cwd=c.fork)


def then(verb: tuple, pattern: str):
    """A step: run te-series `verb`, which refuses, and the commands its message's pattern
    finds (the next stop's advice)."""

    def step(c, out) -> None:
        rc, said = c.te(*verb)
        assert rc == 2, said
        run(pattern)(c, said)

    return step


def with_abort(pattern: str):
    """A step: the command a message names as `CMD --continue, or --abort`, with --abort."""
    return lambda c, out: c.do(advice(out, pattern)[0] + " --abort")


def rebase_again_resolving(c, out) -> None:
    """ "rebase again, resolving each conflict": the same rebase, its conflict resolved."""
    assert c.te("rebase", "--onto", "main", "--te-src", "PATH")[0] == 2
    resolve_rebase(c, out)
    c.do("te-series rebase --continue")


def remove_group_b(c, out) -> None:
    advice(out, r"remove its '# pr:' line from patches/series, commit")
    path = c.project / "patches/series"
    path.write_text(path.read_text().replace("# pr: b\n", ""))
    save(c.project, "no group b")


def give_the_empty_patch_a_diff(c, out) -> None:
    path = c.project / "patches" / EMPTY
    path.write_text(path.read_text().split("---\n")[0] + "---\n" + A_DIFF)
    save(c.project, "its diff")


def untracked_new(c) -> None:
    (c.fork / "tests/new.py").write_text("N = 1\n")


def dirty_fork(c) -> None:
    (c.fork / "tests/test_fuser.py").write_text("edited = 1\n")


def detached_work(at: str):
    """A commit of mine on a detached HEAD at `at` (tool-review-v9 #2a)."""

    def setup(c):
        sh("git", "checkout", "-q", "--detach", at, cwd=c.fork)
        commit(c.fork, {"tests/mine.py": "MINE = 1\n"}, msg("Detached work"))

    return setup


def amended_on_a_branch(own_commit_on_series: bool):
    """Patch 2 amended on a branch `work` by a rebase (its and patch 3's notes go with the
    rewrites); series may have a commit of its own since (tool-review-v22 R2)."""

    def setup(c):
        if own_commit_on_series:
            sh("git", "branch", "-q", "work", cwd=c.fork)
            commit(c.fork, {"tests/mine.py": "MINE = 1\n"}, msg("Series work"))
            sh("git", "checkout", "-q", "work", cwd=c.fork)
        else:
            sh("git", "checkout", "-q", "-b", "work", cwd=c.fork)
        c.rebase_i("git -C fork rebase -i HEAD~2", "Make route", "edit")
        (c.fork / FUSER_PATH).write_text((c.fork / FUSER_PATH).read_text() + "# tweak\n")
        c.do("git -C fork commit -q -a --amend --no-edit && git -C fork rebase --continue")

    return setup


def amended(adds: list[str]):
    """A step: export would now write the amend as a change of patch 2, and add only `adds`."""

    def step(c, out):
        rc, said = c.te("export", "--dry-run")
        assert rc == 0 and f"would change {P2}" in said, out + said
        assert re.findall(r"would add (\S+)", said) == adds, out + said

    return step


def series_in_a_worktree(c) -> None:
    """series checked out in a linked worktree of fork/, with a commit there (v9 #6)."""
    sh("git", "checkout", "-q", "-b", "other", cwd=c.fork)
    sh("git", "worktree", "add", "-q", str(c.tmp_path / "wt"), "series", cwd=c.fork)
    commit(c.tmp_path / "wt", {"tests/wt.py": "WT = 1\n"}, msg("Worktree work"))


def on_series(subject: str):
    """A step: the commit titled `subject` is on series now."""

    def step(c, out):
        assert subject in sh("git", "log", "--format=%s", "series", cwd=c.fork), out

    return step


def record_less_rebuild(c) -> None:
    """A fork.new/ that a SIGTERM left before its record (tool-review-v9 #3)."""
    sh("git", "init", "-q", str(c.project / "fork.new"), cwd=c.project)


def line_removed_since_apply(c) -> None:
    """A colleague's commit (pulled) takes patch 2's line out of series (v11 #4)."""
    path = c.project / "patches/series"
    path.write_text(path.read_text().replace(P2 + "\n", ""))
    save(c.project, "hold back patch 2")


def the_same_change_in_fork(c, out) -> None:
    """ "make the same change in fork/": patch 2's commit out of series there too."""
    advice(out, r"or make the same change in fork/, so that export has nothing to undo")
    c.rebase_i(f"git -C fork rebase -i {worktree.read_state(c.fork).base}", "Make route", "d")


def lock_in_the_second_am(c) -> None:
    """A fresh apply whose second git am finds a .git/index.lock (a git killed there, an IDE's
    git status): git am fails though the patch applies (v11 #5; a full disk goes the same)."""
    shutil.rmtree(c.fork)
    real, calls = worktree.am, []

    def am(repo, patch, include=None):
        calls.append(1)
        if len(calls) == 2:
            (repo / ".git/index.lock").write_text("")
        return real(repo, patch, include)

    c.monkeypatch.setattr(worktree, "am", am)


def full_disk_in_the_second_am(c) -> None:
    """A fresh apply whose second git am runs out of room after it wrote the patched files,
    before the index (v12 #7): an am in progress, its files changed but not recorded."""
    shutil.rmtree(c.fork)
    real, calls = worktree.am, []

    def am(repo, patch, include=None):
        calls.append(1)
        if len(calls) != 2:
            return real(repo, patch, include)
        (repo / ".git/index.lock").write_text("")  # the am fails to record anything
        proc = real(repo, patch, include)
        (repo / ".git/index.lock").unlink()
        sh("git", "apply", str(patch), cwd=repo)  # ... but its files were written
        return proc

    c.monkeypatch.setattr(worktree, "am", am)


def full_disk_at_a_record(c) -> None:
    """A fresh apply whose record after patch 2 finds the disk full (tool-review-v11 #5): the
    tool's own write fails (a raw "[Errno 28]" before); the space is back at once."""
    shutil.rmtree(c.fork)
    real, calls = worktree.write_atomic, []

    def write_atomic(path, data):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, data)

    c.monkeypatch.setattr(worktree, "write_atomic", write_atomic)


def again(*verb: str):
    """A step: the message's "run the command again", as it says."""

    def step(c, out):
        advice(out, r"(then run the command again)")
        rc, said = c.te(*verb)
        assert rc == 0, said

    return step


def status_says(*words: str):
    """A step: te-series status says the same as the stop."""

    def step(c, out):
        rc, said = c.te("status")
        assert rc == 0 and all(w in said for w in words), said

    return step


def fork_is_a_link(to: str):
    """fork/ is a symbolic link to a disk that is not mounted (v11 #6), or to itself (#9)."""

    def setup(c):
        shutil.rmtree(c.fork)
        c.fork.symlink_to(c.tmp_path / "unmounted" / "fork" if to == "nothing" else "fork")

    return setup


def rebuilt_then_link_to_nothing(c) -> None:
    complete_rebuild(c)
    shutil.rmtree(c.fork)
    c.fork.symlink_to(c.tmp_path / "unmounted" / "fork")


def crlf_committed(c) -> None:
    """Patch 1 saved by a CRLF editor and committed so (v11 #7)."""
    path = c.project / "patches" / P1
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    save(c.project, "patch 1 reworded in a CRLF editor")


def fork_port_is_a_file(c) -> None:
    wheels(c.project, c.upstream, c.tmp_path, NEWER)
    (c.project / "fork-port").write_text("x\n")


def port_tree_is_a_file(c) -> None:
    wheels(c.project, c.upstream, c.tmp_path, NEWER)
    (c.project / "fork-port").mkdir()
    (c.project / "fork-port/10.0.0").write_text("x\n")


def status_names_no_other_tree(c, out) -> None:
    """status names nothing more to move (it named fork-port/10.0.0.old next, forever)."""
    rc, said = c.te("status")
    assert rc == 0 and "no work tree" not in said, said


def port_tree_on_another_disk(c) -> None:
    """fork-port a link to a folder of another file system (v16 #7), a port tree made there."""
    wheels(c.project, c.upstream, c.tmp_path, NEWER)
    other = Path(tempfile.mkdtemp(prefix="te-series-test-", dir="/dev/shm"))
    (c.project / "fork-port").symlink_to(other)
    assert c.te("port", "--edit", "--release", "10.0.0")[0] == 0
    assert os.stat(other).st_dev != os.stat(c.project).st_dev


def move_it_off_on_its_disk(c, out) -> None:
    """The refusal's mv, PLACE a folder of that file system; nothing was built, or moved."""
    tree = Path(os.path.realpath(c.project / "fork-port/10.0.0"))
    assert (tree / ".git").is_dir() and not tree.with_name("10.0.0.new").exists()
    (mv,) = advice(out, r"then move it off yourself \((mv \S+) PLACE, a folder of its file")
    c.do(f"{mv} {tree.parent.parent / 'kept-10.0.0'}")


def drop_the_port_disk(c, out) -> None:
    """Clean up /dev/shm."""
    shutil.rmtree(os.path.realpath(c.project / "fork-port"))
    shutil.rmtree(Path(os.path.realpath(c.project / "fork-port")).parent / "kept-10.0.0")


EXPORT = ("export", "--dry-run")
APPLY = ("apply", "--te-src", "PATH")
FORCE = ("apply", "--force", "--te-src", "PATH")
ONTO_MAIN = ("rebase", "--onto", "main", "--te-src", "PATH")
REBUILD = r"\((te-series apply --force --te-src PATH)"
# fmt: off
CASES = {  # name: (set-up, verb, words of the refusal, steps that follow it, verb that then works)
    # export.check_tree
    "export-no-fork": (
        lambda c: shutil.rmtree(c.fork), EXPORT, "fork/ does not exist. Make it first",
        [run(r"Make it first: (te-series apply --te-src PATH)")], EXPORT,
    ),
    "export-fork-is-a-file": (
        fork_is_a_file, EXPORT, "fork is no work tree",
        [run(r"\((mv fork fork\.old)\), then (te-series apply --te-src PATH)")], EXPORT,
    ),
    "export-rebuild-waits-continue": (
        complete_rebuild, EXPORT, "fork.new/ holds a rebuild of fork/ that is not swapped in",
        [run(r"complete: (te-series apply --continue) swaps it in")], EXPORT,
    ),
    "export-rebuild-waits-no-fork": (  # v10 #3: it said "fork/ does not exist. Make it first"
        lambda c: c.fork.rename(c.project / "fork.new"), EXPORT,
        "fork.new/ holds a rebuild of fork/ that is not swapped in",
        [run(r"complete: (te-series apply --continue) swaps it in")], EXPORT,
    ),
    "export-rebuild-waits-move-it": (
        unfinished_rebuild, EXPORT, "not swapped in yet",
        [run(r"\(e\.g\. (mv fork\.new fork\.new\.old)\)")], EXPORT,
    ),
    "export-record-less-rebuild": (
        record_less_rebuild, EXPORT, "fork.new/: not made by te-series apply",
        [lambda c, out: advice(out, r"for\. (Give it up): move") and c.do(
            advice(out, r"\(e\.g\. (mv fork\.new fork\.new\.old)\)")[0])], EXPORT,
    ),
    "continue-record-less-rebuild-move-it": (  # v22 R10: it said "nothing to continue"
        record_less_rebuild, ("apply", "--continue"), "fork.new/: not made by te-series apply",
        [run(r"\(e\.g\. (mv fork\.new fork\.new\.old)\)")], EXPORT,
    ),
    "continue-record-less-rebuild-again": (
        record_less_rebuild, ("apply", "--continue"), "fork.new/: not made by te-series apply",
        [run(r"start the rebuild again: (te-series apply --force --te-src PATH)")], EXPORT,
    ),
    "export-am-continue": (
        resolved_stop, EXPORT, "fork/ has a git am in progress",
        [run(r"\((te-series apply --continue) for a stopped apply")], EXPORT,
    ),
    "export-merge-abort": (
        merging, EXPORT, "fork/ has a git merge in progress",
        [run(r"\((git -C fork merge --abort)\)")], EXPORT,
    ),
    "export-cherry-pick-abort": (
        cherry_picking, EXPORT, "fork/ has a git cherry-pick in progress",
        [with_abort(r"\((git -C fork -c \S+ -c \S+ cherry-pick) --continue, or --abort")], EXPORT,
    ),
    "export-rebase-continue": (
        lambda c: editing_in_a_rebase(c.fork), EXPORT, "fork/ has a git rebase in progress",
        [run(r"\((git -C fork -c commit.cleanup=whitespace -c commit.status=false rebase --continue), or --abort\)")], EXPORT,
    ),
    "export-rebase-abort": (
        lambda c: editing_in_a_rebase(c.fork), EXPORT, "fork/ has a git rebase in progress",
        [with_abort(r"\((git -C fork -c \S+ -c \S+ rebase) --continue, or --abort\)")], EXPORT,
    ),
    "export-no-record": (
        lambda c: state_file(c.fork).unlink(), EXPORT, "no te-series apply record",
        [run(r"Rebuild it: (te-series apply --force --te-src PATH)")], EXPORT,
    ),
    "export-other-branch": (
        lambda c: sh("git", "checkout", "-q", "-b", "elsewhere", cwd=c.fork), EXPORT,
        "not on 'series'", [run(r"\((git -C fork checkout series)\)")], EXPORT,
    ),
    "export-detached-ahead-of-series": (
        detached_work("HEAD"), EXPORT, "HEAD has commit(s) that 'series' lacks",
        [run(r"\((git -C fork checkout -B series HEAD)\)"), on_series("[PyTorch] Detached work")],
        EXPORT,
    ),
    "export-detached-off-series": (
        detached_work("HEAD~1"), EXPORT, "HEAD has commit(s) that 'series' lacks",
        [run(r"\((git -C fork checkout series && git -C fork cherry-pick \w+)\)"),
         on_series("[PyTorch] Detached work")], EXPORT,
    ),
    "export-amended-on-a-branch": (
        amended_on_a_branch(False), EXPORT, "rewrites of its patches",
        [run(r"\((git -C fork checkout -B series HEAD)\)"), amended([])], EXPORT,
    ),
    "export-amended-on-a-branch-series-moved-on": (
        amended_on_a_branch(True), EXPORT, "rewrites of its patches",
        [run(r"\((git -C fork checkout -B series HEAD && git -C fork cherry-pick \w+)\)"),
         amended(["0004-PyTorch-Series-work.patch"])],
        EXPORT,
    ),
    "export-series-in-a-worktree": (
        series_in_a_worktree, EXPORT, "'series' is checked out in the worktree",
        [run(r"\((git -C \S+ checkout --detach);", r"\((git -C fork checkout series)\)"),
         on_series("[PyTorch] Worktree work")], EXPORT,
    ),
    "export-pypi-fork": (
        pypi_fork, EXPORT, "was built from a PyPI base",
        [run(r"Rebuild it from a git base: (te-series apply --force --te-src PATH)")], EXPORT,
    ),
    "export-stopped-apply": (
        lambda c: stopped(c, abort=True), EXPORT, f"apply stopped on {P2}",
        [fix_the_stopped_patch, run(rf"the stopped patch {P2}, then (te-series apply --continue)")],
        EXPORT,
    ),
    "export-rebase-unfinished-continue": (
        lambda c: rebased_by_git_only(c.project, c.upstream), EXPORT, "is not finished in fork/",
        [run(r"fork/: (te-series rebase --continue) \(or --abort\)")], EXPORT,
    ),
    "export-rebase-unfinished-abort": (
        lambda c: rebased_by_git_only(c.project, c.upstream), EXPORT, "is not finished in fork/",
        [with_abort(r"fork/: (te-series rebase) --continue \(or --abort\)")], EXPORT,
    ),
    "export-uncommitted-commit": (
        dirty_fork, EXPORT, "fork/ has uncommitted edits",
        [run(r"\((git -C fork commit -a)\)", env=MESSAGE)], EXPORT,
    ),
    "export-uncommitted-stash": (
        dirty_fork, EXPORT, "fork/ has uncommitted edits", [run(r"\((git -C fork stash)\)")],
        EXPORT,
    ),
    "export-untracked-commit": (
        untracked_new, EXPORT, "untracked files",
        [lambda c, out: [c.do(cmd.replace("...", "tests/new.py"), MESSAGE) for cmd in advice(
            out, r"Commit them \((git -C fork add \.\.\.) && (git -C fork commit)\)")]], EXPORT,
    ),
    "export-untracked-delete": (
        untracked_new, EXPORT, "delete them", [edit("tests/new.py", None)], EXPORT,
    ),
    "export-untracked-exclude": (
        untracked_new, EXPORT, "or list them in",
        [lambda c, out: (c.project / advice(out, r"or list them in (\S+); then")[0]).open(
            "a").write("tests/new.py\n")], EXPORT,
    ),
    # export.own_commits
    "export-off-the-base": (
        off_the_base, EXPORT, "HEAD does not descend from the series' base",
        [run(r"(git -C fork reset --keep series@\{N\}) puts it back")], EXPORT,
    ),
    "export-merge-commit": (
        merged, EXPORT, "has merge commit(s)",
        [run(r"Rebase them away \((git -C fork rebase \w+)\)")], EXPORT,
    ),
    "export-empty-commit-drop": (
        empty_commit, EXPORT, "commit(s) that change no file",
        [mark(r"Drop each \((git -C fork rebase -i \w+), 'drop'", "empty marker", "drop")],
        EXPORT,
    ),
    "export-empty-commit-amend": (
        empty_commit, EXPORT, "commit(s) that change no file",
        [edit("tests/e.py", "E = 1\n"), stage_all,
         run(r"give it a change \((git -C fork commit --amend)\)")], EXPORT,
    ),
    "export-empty-commit-below-head-edit": (  # v37 #4: --amend reached HEAD only
        empty_commit_below, EXPORT, "commit(s) that change no file",
        [mark(r"give it a change \((git -C fork rebase -i \w+), 'edit'", "empty marker",
              "edit"),
         edit("tests/e.py", "E = 1\n"), stage_all,
         run(r"the change, (git -C fork commit --amend) and (git -C fork rebase --continue)\)")],
        EXPORT,
    ),
    "export-upstream-onto": (
        hand_rebase_onto_upstream, EXPORT, "1 upstream commit(s)",
        [run(r"Take them out: (git -C fork rebase --onto \S+ \S+ series)"),
         lambda c, out: c.do(advice(out, r"then move the series with (te-series rebase --onto "
                                         r"COMMIT)\.")[0].replace("COMMIT", "origin/main"))],
        EXPORT,
    ),
    "export-upstream-delete-its-line": (
        upstream_copy_above_the_series, EXPORT, "Upstream follow-up (an upstream prerequisite",
        [mark(r"Take them out: (git -C fork rebase -i \w+) and", "Upstream follow-up", "d")],
        EXPORT,
    ),
    "export-mine-below-the-series": (
        mine_below_the_series, EXPORT, "Mine (below the first series patch)",
        [run(r"not upstream's: say so \((git -C fork notes --ref=te-series add -m new \w+)\), "
             r"then export again")], EXPORT,
    ),
    # export.check_roundtrip
    **{
        f"export-message-line[{line[:4]}]": (
            new_file(cut_message(line)), EXPORT, "Indent that line", [indent_the_line(line)],
            EXPORT,
        )
        for line in ("---", "diff --git a/foo b/foo")
    },
    **{
        f"export-subject[{key}]": (
            new_file(msg(subject)), EXPORT,
            "'Re:', a ':' after a bracket" if key == "Re" else "Reword it to one line as am",
            [reword_to_what_am_reads(msg(subject), match)], EXPORT,
        )
        for key, subject, match in (
            ("two-lines", "Two line\nsubject here", "Two line"),
            ("spaces", "  Many   spaces", "Many"),
            ("tab", "\tTab", "Tab"),
            ("PATCH", "[PATCH] Pre", "Pre"),
            ("Re", "Re: fix the op", "fix the op"),  # v10 #4 (msg() puts [PyTorch] before it)
        )
    },
    "export-author": (
        new_file(msg("Add e"), {"GIT_AUTHOR_NAME": 'Jöhn "Q." Dœ'}), EXPORT,
        "would come back from the patch as 'Jöhn Q. Dœ <dev@example.com>'", [set_the_author],
        EXPORT,
    ),
    # export.refuse_conflict_markers
    "export-conflict-markers": (
        lambda c: commit(c.fork, {"tests/c.py": "<<<<<<< a\nA = 1\n=======\nA = 2\n>>>>>>> b\n"},
                         msg("Add c")),
        EXPORT, "conflict markers",
        [edit("tests/c.py", "A = 2\n"), stage_all,
         run(r"amend that commit \((git -C fork commit --amend)\)")], EXPORT,
    ),
    "export-conflict-markers-below-head": (  # v23 #3: it said to amend, which fixed HEAD
        lambda c: (commit(c.fork, {"tests/c.py": "<<<<<<< a\nA = 1\n=======\nA = 2\n>>>>>>> b\n"},
                          msg("Add c")), commit(c.fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))),
        EXPORT, "conflict markers",
        [mark(r"\((git -C fork rebase -i \w+\^), with 'edit'", "Add c", "edit"),
         edit("tests/c.py", "A = 2\n"), stage_all,
         run(r"the files and (git -C fork commit --amend --no-edit), then (git -C fork -c \S+ -c "
             r"\S+ rebase --continue)")], EXPORT,
    ),
    # export.refuse_changed_pins
    "export-pins-rebuild": (
        rebuilt_with_a_pinned_prerequisite, EXPORT, "another upstream prerequisite #42",
        [run(r"Rebuild fork/ \((te-series apply --force --te-src PATH), which"),
         lambda c, out: commit(c.fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))], EXPORT,
    ),
    "export-pins-restore": (
        rebuilt_with_a_pinned_prerequisite, EXPORT, "another upstream prerequisite #42",
        [lambda c, out: advice(out, r"restore the table \((git log -p -- patches/base.toml)\)")
         and c.do("git checkout HEAD~1 -- patches/base.toml && git commit -q -m restored")],
        EXPORT,
    ),
    # export.plan
    "export-base-toml-moved": (
        lambda c: move_upstream(c.project, c.upstream, {"README": "news\n"}), EXPORT,
        "but patches/base.toml says", [run(r"Rebuild fork/ " + REBUILD + ", which")], EXPORT,
    ),
    "export-other-prerequisites": (
        with_prerequisite, EXPORT, "lists #42",
        [run(r"Rebuild fork/ " + REBUILD + ", which")], EXPORT,
    ),
    "export-drop-held-leave-it-out": (
        lambda c: None, ("export", "--drop", P2), "still holds it", [], ("export",),
    ),
    "export-drop-held-remove-it": (
        lambda c: None, ("export", "--drop", P2), "still holds it",
        [mark(r"Remove that commit first \((git -C fork rebase -i \w+), 'drop'\)", "Make route",
              "drop")],
        ("export", "--drop", P2),
    ),
    "export-lost-rebuild": (
        lambda c: sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=c.fork), EXPORT,
        f"would drop {P3}", [run(REBUILD + " keeps")], EXPORT,
    ),
    "export-notes-swapped-rebuild": (
        notes_swapped, EXPORT, f"the commit noted as {P3} as {P2}, over another patch",
        [run(r"else rebuild the tree " + REBUILD + ";")], EXPORT,
    ),
    "export-notes-swapped-noted": (
        notes_swapped, EXPORT, f"the commit noted as {P3} as {P2}, over another patch",
        [run(r"note it so \((git -C fork notes --ref=te-series add -f -m \S+ \w+); "
             r"(git -C fork notes --ref=te-series add -f -m \S+ \w+)\)")], EXPORT,
    ),
    "export-notes-clash-noted": (  # v35 #4: the commit named by its change, before --drop
        notes_clash, ("export", "--drop", P2), f"is {P2}: git -C fork notes",
        [run(rf"is {P2}: (git -C fork notes --ref=te-series add -f -m \S+ \w+)")],
        ("export", "--drop", P3),
    ),
    # export.changed_since_apply, export.uncommitted
    "export-no-patch-record": (
        no_patch_record, EXPORT, "made by an earlier te-series", [run(r"Rebuild it " + REBUILD)],
        EXPORT,
    ),
    "export-patch-changed-since-apply": (
        pulled_patch_1, EXPORT, f"patches/{P1} changed since fork/ was made from it",
        [run(r"as they are now " + REBUILD)], EXPORT,
    ),
    "export-series-reordered-since-apply": (
        reordered_series, EXPORT, "patches/series (its list of patches) changed since",
        [run(r"as they are now " + REBUILD)], EXPORT,
    ),
    "export-series-line-removed-same-change-in-fork": (  # v11 #4: it refused again
        line_removed_since_apply, EXPORT, "patches/series (its list of patches) changed since",
        [the_same_change_in_fork], ("export",),
    ),
    "export-patches-not-in-git": (
        no_git_for_patches, EXPORT, "Commit patches/ to git first",
        [lambda c, out: c.do("git init -q && git add patches && git commit -q -m patches")],
        EXPORT,
    ),
    "export-uncommitted-patch-edit-keep": (  # committed, a message edit is a change since
        edited_patch_1, EXPORT, "uncommitted edits",
        [run(r"To keep them, commit them \((git add \S+ && git commit)\)", env=MESSAGE),
         then(EXPORT, r"as they are now " + REBUILD)], EXPORT,
    ),
    "export-uncommitted-note-keep": (  # v38 #1: a note, committed, is kept; no rebuild
        noted_patch_3, EXPORT, "uncommitted edits",
        [run(r"To keep them, commit them \((git add \S+ && git commit)\): export keeps",
             env=MESSAGE)],
        ("export",),
    ),
    # export.refuse_emptied_groups
    "export-emptied-group-note": (
        lost_note_in_group_b, ("export", "--drop", P3), "PR group(s) 'b'",
        [lambda c, out: c.do(advice(out, r"give it back: (git -C fork notes --ref=te-series add "
                                         r"-f -m PATCH-NAME COMMIT)")[0]
                             .replace("PATCH-NAME", P3).replace("COMMIT", "HEAD"))], ("export",),
    ),
    "export-emptied-group-remove-its-line": (
        lost_note_in_group_b, ("export", "--drop", P3), "PR group(s) 'b'", [remove_group_b],
        ("export", "--drop", P3),
    ),
    # export.own_commits, in a port tree
    "export-port-series-commit-changed": (
        port_series_commit_changed, ("export", "--port", "10.0.0"),
        "Port patches go on top of it",
        [run(r"(git -C fork-port/10\.0\.0 reset --keep series@\{N\}) puts")],
        ("export", "--port", "10.0.0"),
    ),
    # rebase.resolve, rebase.refuse_own
    "rebase-not-a-commit-in-fork": (
        news_on_a_branch_fork_lacks, ("rebase", "--onto", "news"),
        "name a TE checkout that has it with --te-src",
        [lambda c, out: c.do("te-series rebase --onto news " + advice(
            out, r"name a TE checkout that has it with (--te-src)")[0] + " PATH")], EXPORT,
    ),
    "rebase-on-no-upstream-ref": (
        loose_upstream_commit, ("rebase", "--onto", "refs/loose/x", "--te-src", "PATH"),
        "is on no branch or tag of",
        [lambda c, out: c.do("te-series rebase --onto " + " ".join(advice(
            out, r"Name an upstream commit \(e\.g\. (origin/main)\), with (--te-src PATH)")))],
        EXPORT,
    ),
    "rebase-onto-a-series-commit": (
        upstream_news, ("rebase", "--onto", "HEAD", "--te-src", "FORK"),
        "is a commit of the series itself",
        [lambda c, out: c.do("te-series rebase --onto " + advice(
            out, r"--onto takes an upstream commit \(e\.g\. (origin/main --te-src PATH)\)")[0])],
        EXPORT,
    ),
    # rebase.conflict
    "rebase-conflict-resolved-as-said": (
        lambda c: commit(c.upstream, CONFLICTING, "Upstream returns sets"), ONTO_MAIN,
        "conflicts in transformer_engine/pytorch/fuser.py",
        [edit(FUSER_PATH, RESOLVED),
         naming(r"Resolve it in fork/, (git -C fork add) the files", FUSER_PATH),
         run(r"the files, then (te-series rebase --continue) \(it keeps")],
        EXPORT,
    ),
    "rebase-no-markers-give-up": (
        locked_rebase, ("rebase", "--continue"), "no file has conflict markers",
        [run(r"Fix that first: .*remove it \((rm fork/\.git/index\.lock)\); then "
             r"te-series rebase --continue, or give up"),
         run(r"or give up: (te-series rebase --abort)\.")], EXPORT,
    ),
    "rebase-no-markers-remove-the-lock": (
        locked_rebase, ("rebase", "--continue"), "no file has conflict markers",
        [run(r"remove it \((rm fork/\.git/index\.lock)\); then (te-series rebase --continue),")],
        EXPORT,
    ),
    "rebase-conflict-give-up": (
        lambda c: commit(c.upstream, CONFLICTING, "Upstream returns sets"), ONTO_MAIN,
        "conflicts in transformer_engine/pytorch/fuser.py",
        [run(r"Or give up: (te-series rebase --abort)\.")], EXPORT,
    ),
    # rebase.finish
    "rebase-skipped-abort-and-again": (
        skipped_at_a_conflict, ("rebase", "--continue"), "does not have their changes",
        [run(r"(te-series rebase --abort) \(fork/ goes back"), rebase_again_resolving], EXPORT,
    ),
    "rebase-skipped-drop": (
        skipped_at_a_conflict, ("rebase", "--continue"), "does not have their changes",
        [run(r"Only if you mean to drop them: (te-series rebase --continue --drop \S+\.patch)")],
        EXPORT,
    ),
    "rebase-export-guard-after-git-rebase": (
        untracked_during_a_rebase, ("rebase", "--continue"),
        "(After a rebase: te-series rebase --continue",
        [edit("tests/stray.py", None),  # "delete them"
         run(r"\(After a rebase: (te-series rebase --continue) \[--drop NAME\]")], EXPORT,
    ),
    # rebase.refuse_lost_commits
    "rebase-left-out-cherry-pick": (
        new_commit_skipped_at_a_conflict, ("rebase", "--continue"),
        "left out commit(s) not yet exported",
        [lambda c, out: c.do(advice(out, r"To keep them: (git -C fork cherry-pick \w+),")[0],
                             check=False),  # it stops at the conflict
         edit("tests/mine.py", "MINE = 3\n"),  # resolved as git says: add, cherry-pick --continue
         lambda c, out: c.do("git -C fork add tests/mine.py && git -C fork cherry-pick --continue"),
         run(r"resolve as git says, then (te-series rebase --continue)\.")], EXPORT,
    ),
    "rebase-left-out-give-up": (
        new_commit_skipped_at_a_conflict, ("rebase", "--continue"),
        "left out commit(s) not yet exported",
        [run(r"Or give up: (te-series rebase --abort) \(fork/")], EXPORT,
    ),
    # rebase.abort, rebase.run
    "rebase-abort-of-a-git-rebase": (
        lambda c: editing_in_a_rebase(c.fork), ("rebase", "--abort"),
        "that te-series did not start", [run(r"Finish it: (git -C fork .* rebase --continue) \(")],
        EXPORT,
    ),
    "rebase-nothing-to-continue": (
        news_fetched, ("rebase", "--continue"), "no te-series rebase to continue",
        [lambda c, out: c.do("te-series rebase " + advice(out, r"start one with (--onto COMMIT)")[0]
                             .replace("COMMIT", "origin/main"))], EXPORT,
    ),
    "rebase-say-where": (
        upstream_news, ("rebase",), "say where to",
        [lambda c, out: c.do(advice(out, r"say where to: (te-series rebase --onto COMMIT) \[")[0]
                             .replace("COMMIT", "main") + " --te-src PATH")], EXPORT,
    ),
    # worktree.read_state
    "state-unreadable": (
        lambda c: state_file(c.fork).write_text('{"kind": "git"'), EXPORT, "cannot be read",
        [run(r"Rebuild the tree " + REBUILD + ",")], EXPORT,
    ),
    # worktree.WorkTree.build, worktree.backup_stamp
    "apply-unfinished-rebuild-continue": (
        unfinished_rebuild, APPLY, "fork.new/ holds an unfinished apply",
        [run(r"go on: (te-series apply --continue);")], EXPORT,
    ),
    "apply-unfinished-rebuild-force": (
        unfinished_rebuild, APPLY, "fork.new/ holds an unfinished apply",
        [lambda c, out: advice(out, r"Or start over with (--force)")
         and c.do("te-series apply --force --te-src PATH")], EXPORT,
    ),
    "apply-fork-exists": (
        lambda c: commit(c.fork, {"tests/d.py": "D = 1\n"}, msg("Add d")), APPLY, "fork/ exists",
        [run(r"Export its work first \((te-series export)\)"),
         lambda c, out: advice(out, r"then rerun with (--force)") and c.do(
             "te-series apply --force --te-src PATH")], EXPORT,
    ),
    "apply-fork-is-a-file": (
        fork_is_a_file, APPLY, "fork is no work tree",
        [run(r"\((mv fork fork\.old)\), then (te-series apply --te-src PATH)")], EXPORT,
    ),
    "apply-fork-git-dir-elsewhere": (
        git_dir_elsewhere, FORCE, "fork/.git is a file",
        [run(r"Export its work first \((te-series export)\)"),
         lambda c, out: shutil.rmtree(c.fork),  # "remove fork/ yourself"
         lambda c, out: c.do("te-series apply --te-src PATH")], EXPORT,  # "and apply again"
    ),
    "apply-fork-has-a-linked-worktree": (
        series_in_a_worktree, FORCE, "fork/ has linked worktree(s)",
        [run(r"Keep their work first \(commit it; export what is the series'\), then remove "
             r"each \((git -C fork worktree remove \S+)\)")], FORCE,
    ),
    "apply-backup-folder-is-a-file": (
        backup_folder_is_a_file, FORCE, ".te-series-backup is a file",
        [run(r"\((mv \.te-series-backup \.te-series-backup\.old)\), then run the command again"),
         lambda c, out: c.do("te-series apply --force --te-src PATH")], EXPORT,
    ),
    **{
        f"apply{'-continue' * (verb[1] == '--continue')}-backup-folder-a-link-to-{to}": (
            lambda c, to=to, verb=verb: (verb[1] == "--continue" and complete_rebuild(c),
                                         backup_folder_is_a_link(to)(c)),
            verb, ".te-series-backup is a link to nothing or a folder on another file system",
            [drop_the_other_disk, run(r"Remove the link \((rm \.te-series-backup);"),
             lambda c, out, verb=verb: c.do("te-series " + " ".join(verb))], EXPORT,
        )
        for to in ("nothing", "another-disk") for verb in (FORCE, ("apply", "--continue"))
    },
    **{  # v17 F7: a move into fork/ copied fork/ into itself, 386 levels deep
        f"apply-backup-folder-a-link-into-{into}": (
            lambda c, into=into: (c.project / ".te-series-backup").symlink_to(into), FORCE,
            f".te-series-backup leads into {into}/",
            [run(r"Remove the link \((rm \.te-series-backup);"),
             lambda c, out: c.do("te-series apply --force --te-src PATH")], EXPORT,
        )
        for into in ("fork", "patches")
    },
    "apply-continue-fork-has-a-linked-worktree": (  # the swap of --continue moves fork/ too
        lambda c: (complete_rebuild(c), series_in_a_worktree(c)), ("apply", "--continue"),
        "fork/ has linked worktree(s)",
        [run(r"then remove each \((git -C fork worktree remove \S+)\)"),
         lambda c, out: c.do("te-series apply --continue")], EXPORT,
    ),
    "apply-continue-backup-folder-is-a-file": (
        complete_rebuild_and_backup_file, ("apply", "--continue"), ".te-series-backup is a file",
        [run(r"\((mv \.te-series-backup \.te-series-backup\.old)\), then run the command again"),
         lambda c, out: c.do("te-series apply --continue")], EXPORT,
    ),
    # worktree.stopped_message, worktree.apply_one: not the patch (v11 #5); CRLF committed (#7)
    "apply-not-the-patch-a-lock": (
        lock_in_the_second_am, APPLY, "this is not the patch: git could not do its work there",
        [status_says(f"next is {P2}", "remove it (rm fork/.git/index.lock); then te-series apply "
                     "--continue"),  # the stop's words (v20 #2)
         run(r"remove it \((rm fork/\.git/index\.lock)\); then `(te-series apply --continue)` "
             rf"applies {P2} again")], EXPORT,
    ),
    "apply-not-the-patch-a-full-disk": (
        full_disk_in_the_second_am, APPLY, "this is not the patch: git could not do its work",
        [status_says(f"next is {P2}", "go on: te-series apply --continue"),
         run(rf"a full disk, .+\); then `(te-series apply --continue)` applies {P2} again")],
        EXPORT,
    ),
    "apply-full-disk-at-the-tools-own-write": (
        full_disk_at_a_record, APPLY, "No space left on device (not the series': fix that",
        [status_says("no fork/: te-series apply makes one"), again(*APPLY)], EXPORT,
    ),
    "apply-crlf-committed": (
        crlf_committed, FORCE, "It was committed so",
        [run(r"and commit that: (sed -i .+? && git commit -q -m 'LF line ends' \S+); then "
             r"rebuild \((te-series apply --force --te-src PATH)\)")], EXPORT,
    ),
    # worktree.refuse_unmovable, worktree.not_a_work_tree: links to nothing, loops (v11 #6, #9)
    **{
        f"{named}-fork-is-a-link-to-{to}": (
            fork_is_a_link(to), verb, "fork is no work tree (a file, a link to nothing",
            [status_says("fork/: fork is no work tree"),
             run(r"\((mv fork fork\.old)\), then (te-series apply --te-src PATH)")], EXPORT,
        )
        for to in ("nothing", "itself")
        for named, verb in {"apply": APPLY, "apply-force": FORCE, "export": EXPORT,
                            "rebase": ONTO_MAIN, "apply-continue-no-rebuild": ("apply", "--continue"),
                            "rebase-abort": ("rebase", "--abort"),  # v15 #7
                            "rebase-continue": ("rebase", "--continue")}.items()  # fmt: skip
    },
    "apply-continue-fork-is-a-link-to-nothing": (
        rebuilt_then_link_to_nothing, ("apply", "--continue"), "fork is no work tree",
        [run(r"\((mv fork fork\.old)\), then (te-series apply --continue)")], EXPORT,
    ),
    "port-edit-fork-port-is-a-file": (
        fork_port_is_a_file, ("port", "--edit", "--release", "10.0.0"),
        "fork-port is a file, not the folder of the port trees",
        [status_says("fork-port is a file, not the folder of the port trees"),
         run(r"\((mv fork-port fork-port\.old)\), then (te-series port --edit --release "
             r"10\.0\.0)")], ("export", "--port", "10.0.0", "--dry-run"),
    ),
    "port-edit-port-tree-is-a-file": (  # its mv stays out of what status lists (issue 30)
        port_tree_is_a_file, ("port", "--edit", "--release", "10.0.0"),
        "fork-port/10.0.0 is no work tree",
        [status_says("fork-port/10.0.0 is no work tree"),
         run(r"\((mv fork-port/10\.0\.0 \S+)\), then (te-series port --edit --release 10\.0\.0)"),
         status_names_no_other_tree], ("export", "--port", "10.0.0", "--dry-run"),
    ),
    "port-edit-force-port-tree-on-another-disk": (  # a rename, never a copy (v16 #7)
        port_tree_on_another_disk, ("port", "--edit", "--force", "--release", "10.0.0"),
        "is on another file system than .te-series-backup/",
        [run(r"Export its work first \((te-series export --port 10\.0\.0)\)"),
         move_it_off_on_its_disk,
         lambda c, out: c.do("te-series port --edit --force --release 10.0.0"),  # "run this again"
         drop_the_port_disk], ("status",),
    ),
    # worktree.stopped_message: the skip of a stop without conflict; a diff for an empty patch
    **{
        f"apply-stop-skip[{kind}]": (
            skip_case(kind), APPLY, "or skip it", [skip_then_drop], EXPORT,
        )
        for kind in ("unapplied", "already", "empty")
    },
    "apply-stop-give-the-patch-its-diff": (
        skip_case("empty"), APPLY, "give the patch file its diff",
        [give_the_empty_patch_a_diff, run(r"and rebuild " + REBUILD + r"\)")], EXPORT,
    ),
    # apply.resume
    "apply-continue-series-changed": (
        series_changed_during_apply, ("apply", "--continue"),
        "patches/series changed since this apply started",
        [run(r"Start over from the new one: (te-series apply --force --te-src PATH)")], EXPORT,
    ),
    "export-rebuild-waits-series-changed": (  # v23 #12: it said apply --continue, which refuses
        series_changed_during_apply, EXPORT, "patches/series changed since this apply started",
        [lambda c, out: advice(c.te("status")[1], r"(Start over) from the new one: [^;]*[^.]; "),
         run(r"Start over from the new one: (te-series apply --force --te-src PATH)")], EXPORT,
    ),
    "apply-continue-while-a-rebase": (
        rebase_during_apply, ("apply", "--continue"),
        "a git rebase is in progress in fork.new/; finish or abort it",
        [lambda c, out: c.do("git -C fork.new rebase --abort")], ("apply", "--continue"),
    ),
    "apply-continue-refiled-rebuild": (
        stopped_on_a_damaged_file_then_fixed, ("apply", "--continue"),
        f"patches/{P2} changed since apply stopped on it",
        [run(r"Or rebuild " + REBUILD + r"\)")], EXPORT,
    ),
    "apply-am-continue-failed-resolve": (
        stopped, ("apply", "--continue"), "git am --continue in fork/ failed",
        [edit(FUSER_PATH, RESOLVED),
         naming(r"and `(git -C fork add)` the files", FUSER_PATH),
         run(r"then run (te-series apply --continue) again")], EXPORT,
    ),
    "apply-am-continue-failed-by-hand": (
        unapplied_stop, ("apply", "--continue"), "No file of fork/ has conflict markers",
        [lambda c, out: [(c.fork / p).write_text(t) for p, t in GOOD_CHANGE.items()],
         naming(r"by hand and `(git -C fork add)` the files", " ".join(GOOD_CHANGE)),
         run(r"then run (te-series apply --continue) again")], EXPORT,
    ),
    "apply-am-continue-failed-abort": (
        stopped, ("apply", "--continue"), "git am --continue in fork/ failed",
        [run(r"\(or `(git -C fork am --abort)`"), fix_the_stopped_patch,
         run(r"yourself, and (te-series apply --continue)\)")], EXPORT,
    ),
    "apply-continue-still-not-in-commit": (
        lambda c: stopped(c, abort=True), ("apply", "--continue"), "no git am is stopped there",
        [fix_the_stopped_patch, run(r"then run (te-series apply --continue) \(or")], EXPORT,
    ),
    "apply-continue-still-not-in-skip": (
        lambda c: stopped(c, abort=True), ("apply", "--continue"), "(or --skip it)",
        [lambda c, out: c.do("te-series apply --continue --skip")], ("export", "--drop", P2),
    ),
    "apply-port-without-continue": (
        lambda c: wheels(c.project, c.upstream, c.tmp_path, NEWER), ("apply", "--port", "10.0.0"),
        "--port goes with --continue", [run(r"make a port tree with (te-series port --edit)")],
        ("export", "--port", "10.0.0", "--dry-run"),
    ),
    # worktree.refuse_out
    "out-file-for-a-folder": (
        file_where_pr_writes_a_folder, ("pr", "--te-src", "PATH", *WHO, "--out", "FILE"),
        "is a file; name a folder", [], ("pr", "--te-src", "PATH", *WHO, "--out", "DIR"),
    ),
    "out-folder-for-a-file": (
        lambda c: (c.tmp_path / "d").mkdir(),
        ("range-diff", "HEAD", "--te-src", "PATH", "--out", "DIR"), "is a folder; name a file",
        [], ("range-diff", "HEAD", "--te-src", "PATH", "--out", "FILE"),
    ),
    "out-inside-the-series": (
        lambda c: None, ("range-diff", "HEAD", "--te-src", "PATH", "--out", "PATCHES"),
        "is inside patches/",
        [lambda c, out: c.do("te-series range-diff HEAD --te-src PATH --out " + advice(
            out, r"Name a path outside them \(e\.g\. (\S+)\)\.")[0])], EXPORT,
    ),
}
# fmt: on


@pytest.mark.parametrize("case", CASES)
def test_each_advice_gets_past_its_refusal(three, project, upstream, capsys, monkeypatch,
                                           tmp_path, case):  # fmt: skip
    setup, verb, said, steps, then = CASES[case]
    c = Ctx(project, upstream, capsys, monkeypatch, tmp_path)
    setup(c)
    rc, out = c.te(*verb)
    assert rc == 2 and said in out, out
    assert "Traceback" not in out and "Errno" not in out, out
    for step in steps:
        step(c, out)
    rc, out = c.te(*then)
    assert rc == 0, out


@pytest.mark.parametrize(
    "step",
    [
        r"\(e\.g\. (mv fork\.new fork\.new\.old)\)",
        r"start the rebuild again: (te-series apply --force --te-src PATH)",
    ],
    ids=["move-it", "again"],
)
def test_status_gives_a_way_on_from_a_record_less_rebuild(three, project, upstream, capsys,
                                                          monkeypatch, tmp_path, step):  # fmt: skip
    """v22 R10: status said only "not made by te-series apply (no recorded state)"."""
    c = Ctx(project, upstream, capsys, monkeypatch, tmp_path)
    record_less_rebuild(c)
    rc, out = c.te("status")
    run(step)(c, out)
    assert not (project / "fork.new").exists()
    assert c.te("status")[0] == 0 and c.te(*EXPORT)[0] == 0


def test_the_fetch_back_advice_of_both_backups_works_as_written(three, project, upstream, capsys):
    """tool-review-v8 #8: --force over a stopped fork.new/ backs up fork.new/ and fork/; each
    fetch command runs as written (fork.new/ is gone by then: both go into fork/) and lands
    on refs of its own."""
    path = three.dir / P2
    good = path.read_text()
    path.write_text(good.replace(' """Return values as a tuple."""', " damaged"))
    save(project, "damage")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2  # waits in fork.new/
    path.write_text(good)
    save(project, "fixed")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    fetches = re.findall(r"get its commits back with: (git -C \S+ fetch \S+ '\S+')", out)
    assert len(fetches) == 2, out
    ctx = Ctx(project, upstream, capsys, None, project)
    for command in fetches:
        ctx.do(command)
    (stamp,) = [p.name for p in (project / ".te-series-backup").iterdir()]
    count = lambda ref: sh("git", "rev-list", "--count", ref, cwd=project / "fork").strip()
    assert count(f"refs/backup/{stamp}/fork.new/heads/series") == "2"  # base + patch 1
    assert count(f"refs/backup/{stamp}/fork/heads/series") == "4"  # base + 3 patches


@pytest.mark.parametrize("origin", ["there", "moved"])
def test_a_tag_of_mine_does_not_make_my_commit_upstream(three, project, upstream, capsys, origin):
    """tool-review-v8 #11: a tag made in fork/ (a bookmark) leaves the commit a new patch of
    mine; v11 #3: also once the TE checkout fork/ was cloned from has moved (then every tag
    counted, and the advice took the commit out of series). Export writes it, and it stays
    on series."""
    fork = project / "fork"
    commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))
    sh("git", "tag", "wip", cwd=fork)
    if origin == "moved":
        upstream.rename(upstream.with_name("upstream.moved"))
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "add 0004-PyTorch-Add-d.patch (a new commit)" in out, out
    assert "[PyTorch] Add d" in sh("git", "log", "--format=%s", "series", cwd=fork)


def test_a_rebase_onto_the_commit_fork_is_on_does_nothing(three, project, upstream, capsys):
    """A rebase onto the commit fork/ and base.toml are on (named by a short id; what a
    Ctrl-C after a rebase's writes leaves) has nothing to do (it was refused with "export
    says how to bring them together", and export had nothing to say). base.toml itself
    holds full ids only (tool-review-v9 #4)."""
    rc, out = te("rebase", "--onto", three.base_commit[:12], "--te-src", str(upstream),
                 capsys=capsys)  # fmt: skip
    assert rc == 0 and "are on" in out and "already" in out, out


def test_the_fetch_back_advice_brings_a_detached_head_and_every_stash(
    three, project, upstream, capsys
):
    """tool-review-v9 #2b: refs/* held neither a detached HEAD's commit nor any stash but the
    newest; the one printed fetch now brings both."""
    fork = project / "fork"
    for text in ("first", "second"):
        (fork / "tests/test_fuser.py").write_text(f"{text} = 1\n")
        sh("git", "stash", "push", "-q", "-m", text, cwd=fork)
    detached_work("HEAD")(Ctx(project, upstream, capsys, None, project))
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    (command,) = re.findall(r"get its commits back with: (git -C \S+ fetch \S+ '\S+')", out)
    Ctx(project, upstream, capsys, None, project).do(command)
    (stamp,) = [p.name for p in (project / ".te-series-backup").iterdir()]
    kept = f"refs/backup/{stamp}/fork/te-series-kept"
    assert f"{kept}/HEAD and .../stash/N" in out, out
    subject = lambda ref: sh("git", "log", "-1", "--format=%s", ref, cwd=fork).strip()
    assert subject(f"{kept}/HEAD") == "[PyTorch] Detached work"
    assert [subject(f"{kept}/stash/{n}") for n in (0, 1)] == [
        "On series: second",
        "On series: first",
    ]


def test_a_fork_that_is_a_relative_link_is_kept_and_fetched_back_as_said(
    three, project, upstream, capsys
):
    """fork a relative link to a bigger disk's folder (here ../bigfork): --force moved the link
    into the backup, where it pointed at nothing, so the fetch command it printed failed (v16
    #7). The backup's link points at the tree itself; the command runs as written."""
    shutil.move(project / "fork", project.parent / "bigfork")
    (project / "fork").symlink_to("../bigfork")
    mine = commit(project / "fork", {"tests/mine.py": "MINE = 1\n"}, msg("Mine"))
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    fetch, ref = advice(out, r"get its commits back with: (git -C fork fetch \S+ 'refs/\*:(\S+)/\*')")
    Ctx(project, upstream, capsys, None, None).do(fetch)
    assert sh("git", "rev-parse", f"{ref}/heads/series", cwd=project / "fork").strip() == mine
