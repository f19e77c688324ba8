"""export writes only from a fork/ that holds the whole series, never undoes a change to
patches/ it did not make, and refuses what git am would read back differently: each
refusal leaves patches/ as it was, and its advice gets export going (README guarantees).
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import shutil

import pytest

from te_series.git import NOTES_REF
from te_series.worktree import read_state
from te_series.worktree import state_file
from series_helpers import (
    pull_a_colleagues_rename,
    RENAMING_REWORD,
    commit,
    commit_amend,
    CONFLICTING,
    GOOD_CHANGE,
    GOOD_MSG,
    group_prs,
    make_series,
    make_wheel,
    move_upstream,
    msg,
    patch_bytes,
    reword,
    reword_line,
    save,
    sh,
    te,
)


def test_export_refuses_uncommitted_patch_edits(three, project, capsys):
    name = three.names()[0]
    path = three.dir / name
    path.write_text(path.read_text().replace("Because it helps.", "Because it helps a lot."))
    edited = path.read_bytes()
    reword(project / "fork", "HEAD~3", "s/helps/really.helps/")
    rc, out = te("export", capsys=capsys)
    assert rc == 2, out
    assert "uncommitted edits" in out and name in out
    assert path.read_bytes() == edited


@pytest.mark.parametrize("how", ["no-git", "link-outside-git"])
def test_patches_outside_git_is_refused_with_advice_that_gets_past(three, project, capsys,
                                                                   tmp_path, how):  # fmt: skip
    """A patches/ in no git repository: the files export replaces could not be got back.
    v31 #1: for a link to a folder outside git, "commit patches/" committed the link, and
    export refused the same way."""
    commit(project / "fork", {"tests/new.py": "N = 1\n"}, msg("New thing"))
    real = tmp_path / "patches-real"
    if how == "no-git":
        shutil.rmtree(project / ".git")
    else:
        shutil.move(three.dir, real)
        (project / "patches").symlink_to(real)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "patches/ is not in a git repository" in out, out
    if how == "no-git":
        assert "Commit patches/ to git first" in out
        sh("git", "init", "-q", cwd=project)
        save(project, "the patches")
    else:
        (command,) = re.findall(r"put that folder in its place \((.*?);", out)
        sh("sh", "-c", command, cwd=project)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "0004-PyTorch-New-thing.patch" in out, out


def test_a_merge_with_a_change_of_its_own_is_rebased_away_keeping_it(three, project, capsys):
    """v33 #1: a merge commit in fork/ whose tree has a change of its own (an edit made while
    merging): "rebase them away" dropped that change without a word, and export went on
    without it. The advice takes it back as a commit; followed, export keeps it."""
    fork = project / "fork"
    sh("git", "checkout", "-q", "-b", "side", "HEAD~1", cwd=fork)
    commit(fork, {"tests/side.py": "S = 1\n"}, msg("Side"))
    sh("git", "checkout", "-q", "series", cwd=fork)
    sh("git", "merge", "-q", "--no-commit", "side", cwd=fork)
    (fork / "tests" / "evil.py").write_text("E = 1\n")
    sh("git", "add", "tests/evil.py", cwd=fork)
    sh("git", "commit", "-q", "--no-edit", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "holds a change of its own" in out, out
    steps = re.findall(r"\((git -C fork rebase \w+)\), take that change back as a commit \((.*?)\),",
                       out)  # fmt: skip
    for step in steps[0]:
        sh("sh", "-c", step, cwd=project)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    text = "".join(p.read_text() for p in three.dir.glob("*.patch"))
    assert "+S = 1" in text and "+E = 1" in text


def test_export_refuses_untracked_files_in_fork(three, project, capsys):
    (project / "fork" / "tests" / "new_test.py").write_text("x = 1\n")
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    assert "untracked files" in out and "tests/new_test.py" in out


def test_export_refuses_uncommitted_fork_edits(three, project, capsys):
    (project / "fork" / "tests" / "test_fuser.py").write_text("edited = 1\n")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "uncommitted edits" in out


def test_export_refuses_other_branch(three, project, capsys):
    sh("git", "checkout", "-q", "-b", "elsewhere", cwd=project / "fork")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "not on 'series'" in out


@pytest.mark.parametrize("how", ["renamed", "tag", "bisect"])
def test_the_branch_advice_gets_back_to_series(three, project, capsys, how):
    """tool-review-v6 #13: a renamed branch, a tag named series, a bisect: each message's
    command gets export going."""
    fork = project / "fork"
    if how == "renamed":
        sh("git", "branch", "-m", "series", "my-work", cwd=fork)
    elif how == "tag":
        sh("git", "tag", "series", "HEAD~2", cwd=fork)
    else:
        sh("git", "bisect", "start", "HEAD", "HEAD~2", cwd=fork)
        assert "a git bisect is in progress" in te("status", capsys=capsys)[1]
    rc, out = te("export", "--dry-run", capsys=capsys)
    if how == "tag":  # a tag of that name is no reason to refuse: HEAD is the branch
        assert rc == 0 and out.count("unchanged") == 3, out
        return
    assert rc == 2, out
    command = re.search(r"\((git -C fork [^)]*)\)", out).group(1)
    sh("git", *command.split()[3:], cwd=fork)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and out.count("unchanged") == 3, out


def test_export_dry_run_writes_nothing(three, project, capsys):
    before = patch_bytes(three)
    series_text = three.series_file.read_text()
    fork = project / "fork"
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more things"), cwd=fork)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0
    assert f"would rename {three.names()[2]} -> 0003-PyTorch-Test-more-things.patch" in out
    assert "would rewrite patches/series" in out
    assert patch_bytes(three) == before
    assert three.series_file.read_text() == series_text


def test_export_drop_must_be_explicit(three, project, capsys):
    names = three.names()
    sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=project / "fork")
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    assert f"would drop {names[2]}" in out and f"--drop {names[2]}" in out
    assert (three.dir / names[2]).exists()
    rc, out = te("export", "--drop", "nope.patch", capsys=capsys)
    assert rc == 2 and "not in patches/series" in out
    rc, out = te("export", "--drop", names[1], capsys=capsys)
    assert rc == 2 and "still holds it" in out
    assert te("export", "--drop", names[2])[0] == 0
    assert three.names() == names[:2]
    assert not (three.dir / names[2]).exists()


def test_a_push_to_a_remote_of_yours_does_not_make_a_commit_upstream(three, project, capsys):
    """tool-review-v6 #7: only origin's refs (and tags) are upstream's."""
    fork = project / "fork"
    commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))
    sh("git", "update-ref", "refs/remotes/mine/series", "HEAD", cwd=fork)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "add 0004-PyTorch-Add-d.patch (a new commit)" in out, out


def test_export_refuses_merge_commits(three, project, capsys):
    fork = project / "fork"
    sh("git", "checkout", "-q", "-b", "side", "HEAD~1", cwd=fork)
    commit(fork, {"tests/side.py": "S = 1\n"}, msg("Side"))
    sh("git", "checkout", "-q", "series", cwd=fork)
    sh("git", "merge", "-q", "--no-edit", "side", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "merge commit" in out


LATER = {"GIT_AUTHOR_DATE": "2030-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2030-01-01T00:00:00Z"}


def pull_upstream(project, upstream) -> str:
    """tool-review-v14 #1: an upstream commit (newer than the series') on a branch of the TE
    checkout, merged into fork/ the git way: git pull --no-rebase. Returns its id."""
    sh("git", "checkout", "-q", "-b", "up2", cwd=upstream)
    (upstream / "README").write_text("upstream line\n")
    sh("git", "add", "-A", cwd=upstream)
    sh("git", "commit", "-q", "-m", "[Common] Upstream unrelated change (#4000)", cwd=upstream,
       env={"GIT_AUTHOR_NAME": "Up", "GIT_AUTHOR_EMAIL": "up@nv.com", **LATER})  # fmt: skip
    sh("git", "checkout", "-q", "main", cwd=upstream)
    fork = project / "fork"
    sh("git", "pull", "-q", "--no-rebase", "--no-edit", str(upstream), "up2", cwd=fork, env=LATER)
    return sh("git", "rev-parse", "up2", cwd=upstream).strip()


@pytest.mark.parametrize("above", [False, True])
def test_the_advice_for_a_pulled_merge_drops_upstreams_side(three, project, upstream, capsys,
                                                            above):  # fmt: skip
    """tool-review-v14 #1 (a): the advice for a merge of upstream (git pull) takes the merge
    out with its upstream side, never replaying it (git rebase BASE did, above the series, and
    export wrote it as ours); then te-series rebase --onto moves the series to upstream."""
    before = patch_bytes(three)
    up = pull_upstream(project, upstream)
    if above:
        commit(project / "fork", {"tests/d.py": "D = 1\n"}, msg("Add d"))
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "has merge commit(s) after the base" in out, out
    undo = re.search(r": (git -C fork (reset|rebase) [^;(]*[^;(\s])", out)
    assert undo, out
    undo = undo.group(1)
    reset = "git -C fork reset --keep HEAD^1"
    assert undo.startswith("git -C fork rebase --onto ") if above else undo == reset, out
    assert "te-series rebase --onto COMMIT" in out, out
    sh(*shlex.split(undo.replace("git -C fork", "git")), cwd=project / "fork")
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "Upstream" not in out, out
    assert {n: b for n, b in patch_bytes(three).items() if n in before} == before
    assert len(patch_bytes(three)) == 3 + above
    save(project, "d")
    rc, out = te("rebase", "--onto", up, "--te-src", str(upstream), capsys=capsys)
    assert rc == 0 and "Upstream" not in out, out
    assert len(patch_bytes(three)) == 3 + above
    assert sh("git", "log", "-1", "--format=%an", f"{up}", cwd=project / "fork") == "Up\n"
    assert sh("git", "merge-base", "--is-ancestor", up, "HEAD", cwd=project / "fork") == ""


def test_a_pulled_upstream_commit_a_rebase_replayed_is_not_exported_as_mine(three, project,
                                                                           upstream, capsys):  # fmt: skip
    """tool-review-v14 #1 (b): the old advice, git -C fork rebase BASE, followed literally,
    replays upstream's merged commit above the series; export took it for a new commit of
    ours. The same change as a commit that a merge brought in from outside the series (fork/'s
    reflog of it) is upstream's: refused, and the advice given gets export through."""
    before = patch_bytes(three)
    pull_upstream(project, upstream)
    base = read_state(project / "fork").base
    sh("git", "rebase", "-q", base, cwd=project / "fork")
    subjects = sh("git", "log", "--format=%s", f"{base}..HEAD", cwd=project / "fork")
    assert subjects.startswith("[Common] Upstream unrelated change (#4000)\n"), subjects
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "(#4000) (upstream's change, which a merge (git pull)" in out, out
    assert "(a new commit)" not in out
    command = re.search(r"Take them out: (git -C fork rebase -i \w+) and delete", out).group(1)
    todo = {"GIT_SEQUENCE_EDITOR": "sed -i '/Upstream unrelated change/d'"}
    sh(*shlex.split(command.replace("git -C fork", "git")), cwd=project / "fork", env=todo)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and patch_bytes(three) == before, out


def test_export_refuses_head_not_on_the_base(three, project, capsys):
    fork = project / "fork"
    sh("git", "checkout", "-q", "--orphan", "other", cwd=fork)
    commit(fork, {"x.py": "X = 1\n"}, msg("Unrelated"))
    sh("git", "checkout", "-q", "-B", "series", "other", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "does not descend from the series' base" in out


def test_export_refuses_fork_without_apply_record(three, project, capsys):
    fork = project / "fork"
    (fork / sh("git", "rev-parse", "--git-path", "te-series/state.json", cwd=fork).strip()).unlink()
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "no te-series apply record" in out


def test_export_refuses_a_message_line_git_mailsplit_reads_as_a_new_mail(three, project, capsys):
    """tool-review-v6 #2: git am splits the file at a "From <word> <date>" line; export's
    round trip reads the patch the way am does (mailsplit, then mailinfo)."""
    before = patch_bytes(three)
    fork = project / "fork"
    line = "From upstream Mon Sep 17 00:00:00 2001"
    message = f"[PyTorch] Note\n\nQuoting:\n{line}\nkeeps this line.\n\nSigned-off-by: D <d@x.org>"
    commit(fork, {"tests/e.py": "E = 1\n"}, message)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"message line 4, {line!r}" in out and "mailsplit" in out, out
    assert patch_bytes(three) == before
    # The advice: indent the line; then the export goes through.
    sh("git", "commit", "-q", "--amend", "-m", message.replace(line, "  " + line), cwd=fork)
    assert te("export")[0] == 0


def test_export_says_a_rename_would_overwrite_a_file_in_no_series(three, project, capsys):
    """tool-review-v6 #11: the name a rename would take is held by an unlisted file."""
    (three.dir / "0003-PyTorch-Renamed.patch").write_text("old\n")
    save(project, "an old file")
    fork = project / "fork"
    sh("git", "commit", "-q", "--amend", "-m", msg("Renamed"), cwd=fork)  # the note follows
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "0003-PyTorch-Renamed.patch exist(s) but is in no series" in out, out
    sh("git", "rm", "-q", "patches/0003-PyTorch-Renamed.patch", cwd=project)
    save(project, "move it away")
    assert te("export")[0] == 0  # the advice gets past it


def test_uncommitted_edits_fork_was_made_from_are_named_as_in_fork(three, project, upstream,
                                                                    capsys):  # fmt: skip
    """tool-review-v6 #19: edits made before apply are in fork/; say to commit them."""
    p = three.paths()[2]
    p.write_text(p.read_text().replace("Because it helps.", "Because it helps a lot."))
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    fork = project / "fork"
    message = sh("git", "log", "-1", "--format=%B", "HEAD", cwd=fork)
    sh("git", "commit", "-q", "--amend", "-m", message.replace("a lot", "a lot, again"), cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "so it holds them: commit them first" in out, out
    save(project, "the edit")
    assert te("export")[0] == 0


def test_export_refuses_conflict_markers_added_by_a_commit(three, project, capsys):
    """tool-review-v6 #22: an unresolved conflict committed with git add -A."""
    before = patch_bytes(three)
    fork = project / "fork"
    marked = "<<<<<<< HEAD\nA = 1\n=======\nA = 2\n>>>>>>> theirs\n"
    commit(fork, {"tests/c.py": marked}, msg("Add c"))
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "conflict markers" in out and "tests/c.py" in out, out
    assert patch_bytes(three) == before
    commit(fork, {"tests/c.py": "A = 2\n"}, msg("Add c"))
    sh("git", "reset", "-q", "--soft", "HEAD~2", cwd=fork)
    sh("git", "commit", "-q", "-m", msg("Add c"), cwd=fork)
    assert te("export")[0] == 0  # resolved and amended: it goes through


def test_export_refuses_fixup_commits_and_autosquash_gets_past(three, project, capsys):
    """tool-review-v6 #21."""
    before = patch_bytes(three)
    fork = project / "fork"
    commit(fork, {"tests/test_more.py": "def test_y():\n    assert 2\n"}, "fixup! x")
    sh("git", "commit", "-q", "--amend", "-m",
       "fixup! " + sh("git", "log", "-1", "--format=%s", "HEAD~1", cwd=fork).strip(),
       cwd=fork)  # fmt: skip
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "fixup commit(s) not squashed yet" in out, out
    assert patch_bytes(three) == before
    command = re.search(r"Squash them: (git -C fork rebase -i --autosquash \S+),", out).group(1)
    sh("git", *command.split()[3:], cwd=fork, env={"GIT_SEQUENCE_EDITOR": "true"})
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "change 0003-PyTorch-Test-more.patch" in out, out


def test_the_advice_for_uncommitted_patch_edits_gets_export_going(three, project, capsys):
    """tool-review-v7 #5a: the advice names the edited files (not all of patches/) and its
    command to throw the edits away works."""
    name = three.names()[0]
    path = three.dir / name
    path.write_text(path.read_text().replace("Because it helps.", "Because it helps a lot."))
    reword(project / "fork", "HEAD~3", "s/helps/really.helps/")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"git checkout HEAD -- patches/{name}" in out, out
    assert "git checkout -- patches." not in out
    sh("git", "checkout", "HEAD", "--", f"patches/{name}", cwd=project)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out


def test_an_untracked_draft_in_patches_is_named_as_such(three, project, capsys, tmp_path):
    """tool-review-v7 #5a: an untracked draft with the name a new commit gets: the advice
    was to commit and rebuild (the draft is in no series) or `git checkout -- patches`
    (which leaves an untracked file, and reverts every other edit)."""
    fork = project / "fork"
    commit(fork, {"tests/new.py": "N = 1\n"}, msg("New thing"))
    draft = three.dir / "0004-PyTorch-New-thing.patch"
    draft.write_text("my draft\n")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "0004-PyTorch-New-thing.patch: in no commit (untracked)" in out, out
    assert "move it out of patches/" in out
    assert "git checkout" not in out and "rebuild" not in out
    assert "git mv" not in out  # v30 #4: git refuses to move or remove an untracked file
    assert draft.read_text() == "my draft\n"
    draft.rename(tmp_path / "draft.patch")  # the advice: move it out
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert (tmp_path / "draft.patch").read_text() == "my draft\n"


def test_export_refuses_to_revert_a_patch_committed_after_apply(three, project, capsys):
    name = three.names()[0]
    path = three.dir / name
    path.write_text(path.read_text().replace("Because it helps.", "Because it really helps."))
    save(project, "a colleague's fix")  # e.g. arrived with git pull
    pulled = path.read_bytes()
    fork = project / "fork"
    reword_line(fork, "HEAD~3", 3, "s/Test.more/Test.more.things/")  # a change of one's own too
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"patches/{name} changed since fork/ was made from it" in out
    assert path.read_bytes() == pulled
    # --dry-run shows the plan, then why export refuses (m3).
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "would rename" in out and "export refuses to write now" in out
    # Make the same change in fork/: now export has nothing to undo.
    reword_line(fork, "HEAD~3", 1, "s/Because.it.helps/Because it really helps/")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert path.read_bytes() == pulled


def test_a_pulled_change_made_in_fork_too_passes_beside_forks_own(three, project, capsys):
    """v28 #1: a colleague's change to a patch that fork/ changed too (its own change, not
    exported yet): "make the same change in fork/" refused again, as export would not write
    the pulled file's bytes. Export now writes both changes."""
    name, fork = three.names()[0], project / "fork"
    path = three.dir / name
    edit = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"}
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=edit)
    (fork / "transformer_engine/pytorch/other.py").write_text('"""Other."""\n\nVALUE = 3\n')
    sh("git", "commit", "-q", "-a", "--amend", "--no-edit", cwd=fork)
    sh("git", "rebase", "--continue", cwd=fork)
    path.write_text(path.read_text().replace("Because it helps.", "Because it really helps."))
    save(project, "a colleague's fix")  # e.g. arrived with git pull
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"patches/{name} changed since fork/ was made from it" in out
    reword_line(fork, "HEAD~3", 1, "s/Because.it.helps/Because it really helps/")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert "Because it really helps." in path.read_text() and "+VALUE = 3" in path.read_text()


def test_a_pulled_change_made_in_fork_too_passes_where_fork_renumbers_it(three, project,
                                                                          capsys):  # fmt: skip
    """v30 #3: a colleague's change to patch 2, made in fork/ too, was accepted, but not
    once fork/ also inserted a commit before it (patch 2 renumbered): the old file, which the
    rename deletes, was taken only when unchanged. Its commit's new file holds the change."""
    name, fork = three.names()[1], project / "fork"
    path = three.dir / name
    path.write_text(path.read_text().replace("Lists are", "Lists, as callers index them, are"))
    save(project, "a colleague's fix")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"patches/{name} changed since fork/ was made from it" in out, out
    reword_line(fork, "HEAD~3", 2, "s/Lists are/Lists, as callers index them, are/")
    insert = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"}
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=insert)
    commit(fork, {"tests/e.py": "E = 1\n"}, msg("Add e"))  # a commit of mine before patch 2
    sh("git", "rebase", "--continue", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    renamed = three.names()[2]
    assert renamed != name and "Lists, as callers index them, are" in (three.dir / renamed).read_text()


@pytest.mark.parametrize("own", ["part-of-a-deletion", "next-line"])
def test_a_pulled_change_fork_made_only_in_part_is_refused(three, project, capsys, own):
    """v30 #1: a colleague deleted two lines of a patch's message, fork/ reworded one of them;
    export wrote both back, undoing the deletion (a line check where git's merge conflicts
    took the deletion for kept). A change git's merge cannot take cleanly is refused; the
    next-line case (v29 #3) is refused with it."""
    name, fork = three.names()[0], project / "fork"
    path = three.dir / name
    reword_line(fork, "HEAD~3", 1, "s/^Because it helps.$/&\\nAnd it is small./")
    save(project, "before")  # fork/'s record: the message has both lines
    assert te("export")[0] == 0
    save(project, "exported")
    before = path.read_text()
    if own == "part-of-a-deletion":  # the colleague deletes both lines, fork/ edits one
        path.write_text(before.replace("Because it helps.\nAnd it is small.\n", ""))
        reword_line(fork, "HEAD~3", 1, "s/And it is small./And it is tiny./")
    else:  # the colleague edits one line, fork/ makes that change and one on the next line
        path.write_text(before.replace("Because it helps.", "Because it really helps."))
        reword_line(fork, "HEAD~3", 1, "s/Because it helps./Because it really helps./")
        reword_line(fork, "HEAD~3", 1, "s/And it is small./And it is tiny./")
    save(project, "a colleague's change")
    pulled = path.read_bytes()
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"patches/{name} changed since fork/ was made from it" in out, out
    assert path.read_bytes() == pulled


def test_a_pulled_change_next_to_forks_own_advises_the_rebuild(three, project, upstream,
                                                                capsys):  # fmt: skip
    """v29 #3: a colleague's change to a line next to one fork/ changed (not exported) was
    refused with "make the same change in fork/", which refused again, as git's merge cannot
    tell adjacent changes apart. The advice is the rebuild, then fork/'s own change again."""
    name, fork = three.names()[0], project / "fork"
    path = three.dir / name
    reword_line(fork, "HEAD~3", 1, "s/^Because it helps.$/&\\nAnd it is small./")
    assert te("export")[0] == 0
    save(project, "exported")
    reword_line(fork, "HEAD~3", 1, "s/And it is small./And it is tiny./")  # mine
    path.write_text(path.read_text().replace("Because it helps.", "Because it really helps."))
    save(project, "a colleague's change")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"patches/{name} changed since fork/ was made from it" in out, out
    assert "make the same change" not in out
    (rebuild,) = re.findall(r"rebuild fork/ from the files as they are now \((.*?);", out)
    assert rebuild == "te-series apply --force --te-src PATH"
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0 and "get its commits back with: git -C fork fetch" in out, out
    reword_line(fork, "HEAD~3", 1, "s/And it is small./And it is tiny./")  # mine, again
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert "Because it really helps.\nAnd it is tiny.\n" in path.read_text()


@pytest.mark.parametrize("own", [False, True])
def test_a_pulled_rename_made_in_fork_too_passes(three, project, capsys, own):
    """v28 #2: a colleague's export renamed a patch (its subject reworded), and fork/, made
    before, got the same reword: export still refused "patches/series (its list of patches)
    changed", as fork/'s commit is noted with the old name, which nothing advised changes.
    v29 #1: with a change of fork/'s own to that patch, it refused the renamed file for good
    (no version of it was recorded under its new name)."""
    fork, old = project / "fork", three.names()[2]
    pulled, names = pull_a_colleagues_rename(three, project)
    assert old not in names
    if own:  # a change of mine to that patch, not exported
        (fork / "tests/test_more.py").write_text("def test_y():\n    assert 2\n")
        sh("git", "commit", "-q", "-a", "--amend", "--no-edit", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "patches/series (its list of patches) changed since" in out, out
    reword_line(fork, *RENAMING_REWORD)  # the advice: the same change in fork/
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert three.names() == names
    if own:
        assert "+    assert 2" in (three.dir / names[2]).read_text()
    else:
        assert patch_bytes(three) == pulled


def test_export_refuses_to_undo_a_reordered_series(three, project, capsys):
    a, b, c = three.names()
    three.series_file.write_text(f"# order\n{b}\n{a}\n{c}\n")
    save(project, "reorder")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "patches/series (its list of patches) changed since" in out
    assert three.names() == [b, a, c]


def test_export_refuses_a_fork_without_a_patch_record(three, project, capsys):
    fork = project / "fork"
    path = state_file(fork)
    raw = json.loads(path.read_text())
    raw.pop("recorded")
    path.write_text(json.dumps(raw))
    reword_line(fork, "HEAD~3", 1, "s/Raise/Lift/")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "made by an earlier te-series" in out


@pytest.mark.parametrize("line", ["---", "diff --git a/foo b/foo", "---\t"])
def test_export_refuses_a_message_git_am_would_cut(three, project, capsys, line):
    before = patch_bytes(three)
    fork = project / "fork"
    message = f"[PyTorch] Add e\n\nNumbers:\n{line}\nbefore: 10 ms\n\nSigned-off-by: D <d@x.org>"
    (fork / "tests" / "e.py").write_text("E = 1\n")
    sh("git", "add", "-A", cwd=fork)
    sh("git", "commit", "-q", "--cleanup=verbatim", "-m", message, cwd=fork)  # '---\t' stays
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"message line 4, {line.rstrip()!r}" in out  # v9 #8: '---\t' too
    assert patch_bytes(three) == before


def test_a_message_am_would_strip_is_refused_and_rewording_it_keeps_export_stable(
    three, project, upstream, capsys
):
    """tool-review-v9 #5: trailing whitespace and repeated blank lines, kept by a verbatim
    commit, are dropped by git am, so the next export rewrote the patch. Export refuses,
    and its advice (reword, with git's cleanup) gets a stable export."""
    fork = project / "fork"
    (fork / "tests" / "e.py").write_text("E = 1\n")
    sh("git", "add", "-A", cwd=fork)
    message = "[PyTorch] Trailing  \n\nBody with trailing  \n\n\nand more.\n\nSigned-off-by: D <d@x.org>\n"
    sh("git", "commit", "-q", "--cleanup=verbatim", "-m", message, cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "message line 1 ends in whitespace" in out, out
    base = read_state(fork).base[:12]
    (command,) = re.findall(r"Fix each commit named in (git -C fork .*? rebase -i \w+)", out)
    assert command.endswith(f"-c commit.cleanup=whitespace -c commit.status=false rebase -i {base}")
    env = {"GIT_SEQUENCE_EDITOR": "sed -i /Trailing/s/^pick/reword/", "GIT_EDITOR": "true"}
    sh(*shlex.split(command.replace("-C fork ", "")), "-q", cwd=fork, env=env)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    save(project, "exported")
    written = patch_bytes(three)
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and patch_bytes(three) == written, out


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
    assert rc == 2 and "1 upstream commit(s)" in out, out
    assert "Upstream PR commit (below the first series patch)" in out, out
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


def test_a_commit_on_a_tag_alone_is_no_upstream_commit(project, upstream, capsys):
    """W10, turned round by tool-review-v11 #3: a tag says nothing of whose a commit is (one
    of yours, or one fetched from upstream, look the same without asking origin, which may
    have moved). Upstream's commits are below the series (v13 #2: origin's refs do not
    count either); a commit on a tag alone above the base of an empty series is a new one,
    and check names its subject and missing sign-off."""
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
    assert rc == 0 and "add 0001-Upstream-PR-commit.patch (a new commit)" in out, out


@pytest.mark.parametrize("how", ["pushed", "taken"])
def test_a_commit_on_origins_refs_above_the_series_is_mine(three, project, upstream, capsys, how):
    """tool-review-v13 #2: a new commit of mine, pushed to origin (my TE checkout, e.g. to build
    it there), was taken for upstream's, and the advice took it out of the series. Whose a
    commit is comes from base.toml's base and fork/'s history, not from origin's refs: above
    the series it is mine, also where upstream built on the series itself (W10, "taken")."""
    fork = project / "fork"
    if how == "pushed":
        commit(fork, {"tests/w.py": "W = 4\n"}, msg("My work in progress"))
        sh("git", "push", "-q", "origin", "HEAD:refs/heads/wip", cwd=fork)
        assert sh("git", "branch", "-r", "--contains", "HEAD", cwd=fork).strip() == "origin/wip"
    else:
        sh("git", "fetch", "-q", str(fork), "series", cwd=upstream)
        sh("git", "checkout", "-q", "-b", "taken", "FETCH_HEAD", cwd=upstream)
        commit(upstream, {"README": "later\n"}, msg("My work in progress"))
        sh("git", "checkout", "-q", "main", cwd=upstream)
        sh("git", "fetch", "-q", "origin", cwd=fork)
        sh("git", "merge", "-q", "--ff-only", "origin/taken", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "add 0004-PyTorch-My-work-in-progress.patch (a new commit)" in out, out
    assert "My work in progress" in sh("git", "log", "--format=%s", "series", cwd=fork)


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


def test_export_never_offers_a_misread_author_as_the_one_to_set(three, project, capsys):
    """v17 F3: git 2.39's mailinfo reads a name with an unbalanced quote back with bytes from
    elsewhere; export offered that reading as the --author to set, and, followed, exported
    the corrupted name. Only a reading that drops characters of the name is offered."""
    fork = project / "fork"
    odd = 'Dœ O\'Brien "OB'
    commit(fork, {"tests/e.py": "E = 1\n"}, msg("Add e"))
    sh("git", "commit", "-q", "--amend", "--no-edit", f"--author={odd} <o@x.org>", cwd=fork)
    rc, out = te("export", "--dry-run", capsys=capsys)
    read = re.search(r"would come back from the patch as (.+?)\. Mark", out)
    assert rc == 2 and read, out
    offered = re.search(r"--author=(.+?) and git -C fork rebase --continue", out)[1]
    have, chars = ast.literal_eval(read[1]), iter(odd)
    if not all(c in chars for c in have.rsplit(" <", 1)[0]):
        assert offered.startswith("'NAME <EMAIL>' (the author's own"), out
    else:  # a git that reads it well: its reading is what a commit can be given
        assert offered == shlex.quote(have), out


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
    assert "its author" not in out  # v17 F3: am's misreading, offered as the author to set
    assert patch_bytes(three) == before
    assert "Put another line of text above it" in out
    # The advice: a line above it; then export gets past it.
    reworded = f"[PyTorch] Add e\n\nAs said:\n{header}\n\nbody\n"
    sh("git", "commit", "-q", "--amend", "-m", reworded, cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out


def test_export_never_renames_a_commit_over_another_listed_patch(three, project, capsys):
    """Notes that point a commit at the wrong patch (as the F1 bug left them): export must not
    overwrite one listed patch with it and delete the other. Since v35 #4 the commit is named
    as the patch its change is, before the rename is tried."""
    names = three.names()
    fork = project / "fork"
    sh("git", "notes", f"--ref={NOTES_REF}", "add", "-f", "-m", names[2], "HEAD~1", cwd=fork)
    sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=fork)
    before = {n: (three.dir / n).read_bytes() for n in names}
    rc, out = te("export", "--drop", names[1], capsys=capsys)
    assert rc == 2
    assert f"is {names[1]}: git -C fork notes --ref=te-series add -f -m {names[1]}" in out
    assert {n: (three.dir / n).read_bytes() for n in names} == before
    assert three.names() == names


def test_export_names_an_empty_commit(three, project, capsys):
    fork = project / "fork"
    sh("git", "commit", "-q", "--allow-empty", "-m", "[PyTorch] An empty marker", cwd=fork)
    for args in (("export", "--dry-run"), ("export",)):
        rc, out = te(*args, capsys=capsys)
        assert rc == 2
        assert "commit(s) that change no file:" in out and "[PyTorch] An empty marker" in out
        assert "rebase -i" in out and "mailinfo" not in out


@pytest.mark.parametrize("note", [None, "another's", "none listed"])
def test_a_commit_that_lost_its_note_is_named_not_dropped(three, project, capsys, note):
    """A commit whose note is gone; v34 #3: or names another patch, or one that is not
    listed: "holds no commit of its own for it" and --drop, which moved the patch to another
    PR group and lost its notes below '---'. It is named, with the command that notes it."""
    names = three.names()
    fork = project / "fork"
    if note is None:
        sh("git", "notes", "--ref=te-series", "remove", "HEAD", cwd=fork)
    else:
        wrong = names[1] if note == "another's" else "9999-nothing.patch"
        sh("git", "notes", "--ref=te-series", "add", "-f", "-m", wrong, "HEAD", cwd=fork)
    before = patch_bytes(three)
    for extra in ([], ["--drop", names[2]]):
        rc, out = te("export", *extra, capsys=capsys)
        assert rc == 2, out
        assert f"is {names[2]}: git -C fork notes --ref=te-series add -f -m {names[2]}" in out
        assert patch_bytes(three) == before
    cmd = out.split(f"is {names[2]}: ")[1].split("\n")[0]
    sh(*shlex.split(cmd), cwd=project)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and f"unchanged {names[2]}" in out


@pytest.mark.parametrize("by", ["export", "apply"])
def test_a_series_file_fork_was_made_from_is_to_be_committed_not_rebuilt(three, project,
                                                                          upstream, capsys, by):  # fmt: skip
    """tool-review-v37 #2: the series file as an export wrote it (or as apply read it),
    uncommitted, then a new commit in fork/: export said its edits "are not in fork/" and
    advised a rebuild, which moves the new commit out of fork/. fork/ holds them: commit them
    first, as for a patch file; then export writes the new commit."""
    fork = project / "fork"
    if by == "export":
        commit(fork, {"tests/a.py": "A = 1\n"}, msg("Add a"))
        assert te("export", capsys=capsys)[0] == 0
    else:
        three.series_file.write_text("# mine\n" + three.series_file.read_text())
        assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    commit(fork, {"tests/b.py": "B = 1\n"}, msg("Add b"))
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "so it holds them: commit them first" in out, out
    sh("git", "add", "patches", cwd=project)
    sh("git", "commit", "-q", "-m", "export", cwd=project)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "Add-b.patch (a new commit)" in out, out


def test_files_an_uncommitted_export_wrote_are_to_be_committed_next_to_an_edit(three, project,
                                                                             capsys):  # fmt: skip
    """tool-review-v40 L2: an export (not committed) renumbered patches into new, untracked
    files; then a comment of yours in the series, not committed, and a reword in fork/: export
    took the edited series for a sign that none of the files was what fork/ was made from, and
    said to move the files it wrote itself out of patches/ (their notes went with them). It
    decides file by file: those export wrote are to be committed."""
    fork = project / "fork"
    sh("git", "rebase", "-q", "-i", "HEAD~2", cwd=fork,
       env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})  # fmt: skip
    commit(fork, {"tests/a.py": "A = 1\n"}, msg("Add a"))
    sh("git", "rebase", "--continue", cwd=fork)
    assert te("export", capsys=capsys)[0] == 0
    three.series_file.write_text("# mine\n" + three.series_file.read_text())
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more, reworded"), cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "so it holds them: commit them first" in out, out
    assert "move it out of" not in out, out
    sh("git", "add", "patches", cwd=project)
    sh("git", "commit", "-q", "-m", "export", cwd=project)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "reworded" in out, out
    assert three.series_file.read_text().startswith("# mine\n")


def test_a_patch_new_since_apply_made_in_fork_too_is_exported(three, project, upstream,
                                                              capsys):  # fmt: skip
    """tool-review-v41 #1: a colleague's new patch (pulled, listed) and a commit of yours in
    fork/: export advised a rebuild or the same change in fork/; made there (git am of that
    file, noted), export refused again: a file with no recorded version read as a change that
    would be lost. A file new since is all change: fork/ holding it is nothing to undo."""
    fork = project / "fork"
    commit(fork, {"tests/c.py": "C = 1\n"}, msg("Colleague change"))
    assert te("export", capsys=capsys)[0] == 0
    save(project, "colleague: a new patch")
    (new,) = [n for n in three.names() if n.startswith("0004-")]
    sh("git", "checkout", "-q", "HEAD~1", "--", "patches", cwd=project)
    sh("git", "rm", "-q", "--cached", f"patches/{new}", cwd=project)
    (three.dir / new).unlink()
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0  # fork/ without it
    sh("git", "checkout", "-q", "HEAD", "--", "patches", cwd=project)  # the pull
    commit(fork, {"tests/m.py": "M = 1\n"}, msg("My own change"))
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "or make the same change in fork/" in out, out
    sh("git", "am", "-q", "-3", "--keep-non-patch", str(three.dir / new), cwd=fork)
    sh("git", "notes", "--ref=te-series", "add", "-f", "-m", new, "HEAD", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "My-own-change.patch (a new commit)" in out, out
    assert any(n.endswith("-PyTorch-Colleague-change.patch") for n in three.names())


def test_a_note_copied_onto_an_earlier_commit_is_named(three, project, capsys):
    """tool-review-v35 #4: a later commit's note copied onto an earlier one by hand (git notes
    copy -f): export advised --drop of the earlier commit's patch, and then refused that
    --drop. The earlier commit is named by its change, with the command that notes it;
    followed, export has nothing to write."""
    names = three.names()
    fork = project / "fork"
    sh("git", "notes", "--ref=te-series", "copy", "-f", "HEAD", "HEAD~1", cwd=fork)
    before = patch_bytes(three)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "export --drop" not in out, out
    (cmd,) = re.findall(rf"is {names[1]}: (git -C fork notes .*)", out)
    assert patch_bytes(three) == before
    sh(*shlex.split(cmd), cwd=project)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and all(f"unchanged {n}" in out for n in names), out


def test_a_reworded_commit_that_lost_its_note_is_named_by_its_change(three, project, capsys):
    """tool-review-v24 #1: a reword with git's note rewriting off; the commit was matched by
    subject only, so export said the patch had no commit and advised --drop, which deleted
    the patch file with the notes written in it. It is matched by its change (patch-id);
    noted as said, export writes the reword into that file, the notes kept."""
    name, fork = three.names()[2], project / "fork"
    path = three.dir / name
    notes = b"Reviewer notes: keep me.\n\n"
    path.write_bytes(path.read_bytes().replace(b"\n---\n", b"\n---\n" + notes, 1))
    save(project, "notes for reviewers")
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "notes.rewrite.amend",
           "GIT_CONFIG_VALUE_0": "false"}  # fmt: skip
    commit_amend(fork, msg("Test more, reworded"), env)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "export --drop" not in out, out
    (cmd,) = re.findall(rf"is {name}: (git -C fork notes .*)", out)
    sh(*shlex.split(cmd), cwd=project)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"rename {name} -> " in out, out
    (new,) = [p for p in three.dir.glob("0003-*.patch")]
    assert b"reworded" in new.read_bytes() and b"\n---\n" + notes in new.read_bytes()


def test_export_refuses_to_empty_a_pr_group(three, project, upstream, capsys):
    """A commit that lost its note, its subject and its change (so nothing names its patch):
    --drop must not move it to another PR."""
    names = three.names()
    three.series_file.write_text(f"# pr: a\n{names[0]}\n{names[1]}\n\n# pr: b\n{names[2]}\n")
    save(project, "two groups")
    fork = project / "fork"
    (fork / "tests/test_more.py").write_text("changed = 1\n")
    sh("git", "add", "tests/test_more.py", cwd=fork)
    sh_env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "notes.rewrite.amend"}
    sh_env["GIT_CONFIG_VALUE_0"] = "false"
    commit_amend(fork, msg("Test more, reworded"), sh_env)
    before = three.series_file.read_text()
    rc, out = te("export", "--drop", names[2], capsys=capsys)
    assert rc == 2 and "PR group(s) 'b'" in out and "notes --ref=te-series add" in out, out
    assert three.series_file.read_text() == before and (three.dir / names[2]).is_file()


def test_export_refuses_mid_rebase_naming_it_not_head(three, project, capsys):
    fork = project / "fork"
    sh(
        "git", "rebase", "-q", "-i", "HEAD~2", cwd=fork,
        env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"},
    )  # fmt: skip
    assert sh("git", "rev-parse", "--abbrev-ref", "HEAD", cwd=fork).strip() == "HEAD"
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    assert "has a git rebase in progress" in out
    assert "'HEAD'" not in out


def test_export_refuses_hand_rebase_onto_upstream(three, project, upstream, capsys):
    before = patch_bytes(three)
    fork = project / "fork"
    commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    base = read_state(fork).base
    sh("git", "fetch", "-q", "origin", cwd=fork)
    sh("git", "rebase", "-q", "--onto", "origin/main", base, "series", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    assert "1 upstream commit(s)" in out and "Upstream news" in out
    assert "te-series rebase --onto" in out and "reset --hard" not in out
    assert "they stay on origin/main)" in out, out  # checked (v21 #5)
    assert patch_bytes(three) == before
    # The advice (tool-review-v6 #7): it takes out the upstream commit and nothing else.
    undo = re.search(r"Take them out: (git -C fork rebase --onto \S+ \S+ series)", out).group(1)
    sh("git", *undo.split()[3:], cwd=fork)
    assert sh("git", "log", "--format=%s", f"{base}..HEAD", cwd=fork).count("\n") == 3
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and out.count("unchanged") == 3, out


def test_a_new_first_patch_of_mine_is_named_so_and_its_advice_exports_it(three, project,
                                                                          capsys):  # fmt: skip
    """tool-review-v21 #5: a new commit of mine put below the first series patch was called
    upstream's, and the advice took it out of series "(they stay on upstream's refs)": it was
    on no ref, and export then went on without it; the other way offered moved it after the
    first patch, so a new first patch could not be exported. Where the commits stay is
    checked, and the way to say it is a new patch, followed as written, exports it first."""
    fork, names = project / "fork", three.names()
    base = read_state(fork).base
    sh("git", "checkout", "-q", "--detach", base, cwd=fork)
    mine = commit(fork, {"tests/prep.py": "P = 1\n"}, msg("Prepare"))
    sh("git", "rebase", "-q", "--onto", mine, base, "series", cwd=fork)  # notes carried
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "Prepare (below the first series patch)" in out, out
    assert "they are on no other branch or tag)" in out and "upstream's refs" not in out, out
    (say,) = re.findall(r"not upstream's: say so \((git -C fork notes [^)]*)\), then export", out)
    sh("git", *shlex.split(say)[3:], cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "add 0001-PyTorch-Prepare.patch (a new commit)" in out, out
    assert three.names() == ["0001-PyTorch-Prepare.patch"] + [
        "%04d%s" % (k + 2, n[4:]) for k, n in enumerate(names)]  # fmt: skip
    assert sh("git", "log", "--format=%s", f"{base}..series", cwd=fork).count("\n") == 4


def test_export_refuses_while_a_rebuild_waits(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    assert (project / "fork.new").exists()
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "fork.new/ holds a rebuild of fork/ that is not swapped in yet" in out


def test_export_refuses_when_base_toml_moved(three, project, upstream, capsys):
    move_upstream(project, upstream, {"README": "news\n"})
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "but patches/base.toml says" in out


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


def test_export_refuses_pypi_fork(project, upstream, tmp_path, capsys):
    make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheel = make_wheel(upstream, tmp_path / "w")
    assert te("apply", "--force", "--wheel", str(wheel))[0] == 0
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "PyPI base" in out


def test_emptying_a_pr_group_says_how_to_put_the_prs_on_it_on_its_base(three, project, capsys):
    """tool-review-v13 #5: after a squash emptied PR b, export's advice was only to remove b's
    '# pr:' line; followed, it left PR c on b, which is no PR, and export wrote that series,
    which check rejects. The advice now says how to put c on b's base and what to delete,
    and export refuses to write a series that check rejects."""
    from te_series.check import lint_groups

    p1, p2, p3 = three.names()
    group_prs(three, f"# pr: a on main\n{p1}\n# pr: b\n{p2}\n# pr: c on b\n{p3}\n", "three PRs")
    fork = project / "fork"
    todo = {"GIT_SEQUENCE_EDITOR": "sed -i '2s/^pick/fixup/'"}  # patch 2 into patch 1
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=todo)
    rc, out = te("export", "--drop", p2, capsys=capsys)
    said = (
        "If you mean to empty the group, remove its '# pr:' line from patches/series, change "
        "'# pr: c on b' to '# pr: c on a' (the PRs on it go on its base), and delete "
        "patches/pr/b.md, commit, and export again."
    )
    assert rc == 2 and said in out, out
    series = three.series_file.read_text()
    three.series_file.write_text(series.replace("# pr: b\n", ""))  # the first part alone
    save(project, "no PR b")
    rc, out = te("export", "--drop", p2, capsys=capsys)
    assert rc == 2 and "export would write a patches/series that check rejects" in out, out
    assert "PR 'c' is on 'b', which is no PR of patches/series" in out
    three.series_file.write_text(series.replace("# pr: b\n", "").replace("c on b", "c on a"))
    (three.dir / "pr" / "b.md").unlink()
    save(project, "c on a")
    rc, out = te("export", "--drop", p2, capsys=capsys)
    assert rc == 0, out
    assert three.groups()[1] == [] and lint_groups(three) == []
    renumbered = p3.replace("0003", "0002")
    assert three.series_file.read_text() == f"# pr: a on main\n{p1}\n# pr: c on a\n{renumbered}\n"


def move_line(line: int, after: int) -> str:
    """A GIT_SEQUENCE_EDITOR that moves the todo's line `line` to after line `after` (0: first)."""
    put = f'sed -i "1i $l" "$1"' if after == 0 else f'sed -i "{after}a $l" "$1"'
    return f'f(){{ l=$(sed -n {line}p "$1"); sed -i {line}d "$1"; {put}; }}; f'


# PRs a (patch 1), b (2, 3) and c (4), for prs_with_a_commit_moved
THREE_PRS = "# pr: a on main\n{}\n# pr: b on main\n{}\n{}\n# pr: c on a\n{}\n"


def prs_with_a_commit_moved(three, project, capsys, adds: str, groups: str, move: str):
    """Commits adding tests/<x>.py for each letter x of `adds`, exported; the series grouped
    as `groups` (its {} the patch names, in order); then fork/'s commits reordered by `move`.
    The patch names before the move."""
    fork = project / "fork"
    for x in adds:
        commit(fork, {f"tests/{x}.py": f"{x.upper()} = 1\n"}, msg(f"Add {x}"))
    assert te("export", capsys=capsys)[0] == 0
    names = three.names()
    group_prs(three, groups.format(*names), "PRs")
    sh("git", "rebase", "-q", "-i", f"HEAD~{len(names)}", cwd=fork,
       env={"GIT_SEQUENCE_EDITOR": move})  # fmt: skip
    return names


def test_a_pr_whose_commit_moved_is_told_to_move_its_block_not_to_go(three, project, capsys):
    """tool-review-v14 #2: PR c's only commit moved in fork/ (git rebase -i) to the end of PR
    a. The refusal offered a lost note, or emptying the group, which deleted PR c and put its
    patch into PR a. It now says the commits are there, only moved, and to move c's block in
    patches/series to where they stand; followed as written, export takes it as is."""
    p1, _, _, p4 = prs_with_a_commit_moved(three, project, capsys, "f", THREE_PRS, move_line(4, 1))
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and f"commit(s) ({p4}) are in fork/ with their notes, only moved" in out, out
    assert "empty the group" not in out and "delete" not in out, out
    said = re.search(r"Move its '# pr:' line, with its patches' lines, right after the line "
                     r"(\S+) in patches/series", out)  # fmt: skip
    assert said and said.group(1) == p1, out
    text = three.series_file.read_text().replace(f"# pr: c on a\n{p4}\n", "")
    three.series_file.write_text(text.replace(f"{p1}\n", f"{p1}\n# pr: c on a\n{p4}\n"))
    save(project, "move PR c after a")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    groups = three.groups()[0]
    assert [(g, len(names)) for g, names, _ in groups] == [("a", 1), ("c", 1), ("b", 2)], groups
    assert groups[1][1][0].startswith("0002-PyTorch-Add-f"), groups


# A commit moved inside another PR's run (tool-review-v24 #3): commits added, groups, the move,
# what export says (of the patch names), the move back. "regrouped": PR c's only commit between
# the two of PR b; export put b's second patch into PR c without a word. "emptied": between
# the first two of b's three; the advice was to move c's block right after b's first line,
# which put b's other patches into PR c. No line of the series can say either: move the commit.
MOVED_INSIDE = {
    "regrouped": ("f", THREE_PRS, move_line(4, 2), "would move {2} from PR 'b' to PR 'c'",
                  move_line(3, 3)),
    "emptied": ("fg", "# pr: a on main\n{}\n# pr: b on main\n{}\n{}\n{}\n# pr: c on a\n{}\n",
                move_line(5, 2), "now stand inside PR 'b', between {1} and {2}", move_line(3, 4)),
}  # fmt: skip


@pytest.mark.parametrize("case", MOVED_INSIDE)
def test_a_commit_moved_inside_another_pr_is_told_to_move_the_commit(three, project, capsys,
                                                                     case):  # fmt: skip
    """Export refuses, names what it would do, and the move back it gives, made as said,
    gets export through with the series as it was."""
    adds, groups, move, says, back = MOVED_INSIDE[case]
    names = prs_with_a_commit_moved(three, project, capsys, adds, groups, move)
    before = three.series_file.read_text()
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and says.format(*names) in out and "Move its '# pr:' line" not in out, out
    (cmd,) = re.findall(r"\((git -C fork rebase -i \w+)\)", out)
    sh(*shlex.split(cmd), cwd=project, env={"GIT_SEQUENCE_EDITOR": back})
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and three.series_file.read_text() == before, out


def test_a_prs_only_commit_moved_to_the_bottom_is_told_to_put_its_block_first(three, project,
                                                                              capsys):  # fmt: skip
    """tool-review-v24 #3b: the advice said "above the first patch line", which, read as
    written (below the first '# pr:' line), emptied the first PR and got an advice to delete
    it. Its block goes above the first '# pr:' line, on main; followed as written, export
    takes it."""
    groups = "# pr: a on main\n{}\n# pr: b on a\n{}\n{}\n# pr: c on b\n{}\n"
    *_, p4 = prs_with_a_commit_moved(three, project, capsys, "f", groups, move_line(4, 0))
    rc, out = te("export", "--dry-run", capsys=capsys)
    (line,) = re.findall(r"above the first '# pr:' line, on main \('(# pr: c on main)'\)", out)
    text = three.series_file.read_text().replace(f"# pr: c on b\n{p4}\n", "")
    three.series_file.write_text(f"{line}\n{p4}\n{text}")
    save(project, "PR c first")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert [g for g, _, _ in three.groups()[0]] == ["c", "a", "b"]


def test_an_export_undone_in_patches_is_named_as_a_change_not_a_lost_commit(
    three, project, upstream, capsys
):
    """tool-review-v20 #12: reword a commit, export (it renames the patch and its note in
    fork/), then undo that in patches/ (git checkout -- patches; git clean -fd patches). The
    next export said fork/ "holds no commit of its own" for the restored name and offered
    --drop; --drop refused to empty its PR group, and that advice, followed, deleted the PR's
    line before the real refusal came. The refusal now is that one: the list changed since."""
    names = three.names()
    three.series_file.write_text(f"# pr: a\n{names[0]}\n{names[1]}\n\n# pr: b\n{names[2]}\n")
    save(project, "two groups")
    before = patch_bytes(three), three.series_file.read_bytes()
    commit_amend(project / "fork", msg("Test more, reworded"), {})
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "rename" in out, out
    sh("git", "checkout", "-q", "--", "patches", cwd=project)  # not yet: undo the export
    sh("git", "clean", "-qfd", "patches", cwd=project)
    for drop in ([], ["--drop", names[2]]):  # --drop, as it was offered, leads there too
        rc, out = te("export", *drop, capsys=capsys)
        assert rc == 2 and "patches/series (its list of patches) changed since fork/ was" in out
        assert "--drop" not in out and "holds no commit" not in out, out
    (rebuild,) = re.findall(r"Either rebuild fork/ from the files as they are now \((.*?);", out)
    rc, out = te(*shlex.split(rebuild.replace("PATH", str(upstream)))[1:], capsys=capsys)
    assert rc == 0, out
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and (patch_bytes(three), three.series_file.read_bytes()) == before, out


def test_a_note_that_is_a_path_is_no_patch_name(three, project, capsys):
    """v35 #5: a note line `../build/NAME` made export delete build/NAME, outside patches/,
    as a file an earlier export had left. A line of a note that is no bare file name is no
    patch's name."""
    names, fork = three.names(), project / "fork"
    mine = project / "build" / names[2]
    mine.parent.mkdir()
    shutil.copyfile(three.dir / names[2], mine)  # e.g. a copy of mine, git-ignored
    note = f"{names[2]}\n../build/{names[2]}"  # a second line, as after a squash
    sh("git", "notes", "--ref=te-series", "add", "-f", "-m", note, "HEAD", cwd=fork)
    commit(fork, {"tests/e.py": "E = 1\n"}, msg("Add e"))
    rc, out = te("export", capsys=capsys)
    assert mine.is_file() and "build" not in out, out


def test_a_pulled_rename_noted_by_hand_is_refused_in_words(three, project, capsys):
    """v35 #2: after a colleague's rename was pulled, fork/'s commit noted by hand with the
    new name: export read the old file, gone since, and stopped with a raw "No such file"
    and advice about free space, on every run. It is a change since fork/ was made."""
    pulled, names = pull_a_colleagues_rename(three, project)
    fork = project / "fork"
    sh("git", "notes", "--ref=te-series", "add", "-f", "-m", names[2], "HEAD", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "No such file" not in out and "changed since fork/ was made" in out, out
    assert patch_bytes(three) == pulled
