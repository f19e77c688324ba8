"""export's writes: byte-identical round trips, renames, series comments and `# pr:` groups
kept, all or nothing (README guarantees).
"""

from __future__ import annotations

from pathlib import Path
import errno
import os
import re
import shutil

import pytest

from te_series import export as export_mod
from te_series.git import blob_id
from te_series.series import read_patch
from te_series.worktree import make_tree
from series_helpers import (
    commit,
    FUSER,
    GOOD_CHANGE,
    GOOD_MSG,
    make_series,
    msg,
    reword_line,
    patch_bytes,
    rename_patch_2,
    save,
    sh,
    SPACED,
    te,
)


def change_second_commit(fork) -> None:
    """Change the commit of patch 0002 in fork/ (tests/test_fuser.py), by a fixup squashed in."""
    (fork / "tests/test_fuser.py").write_text("def test_x():\n    assert [1] == [1]\n\n\nY = 2\n")
    sh("git", "commit", "-q", "-a", "--fixup=HEAD~1", cwd=fork)
    sh("git", "rebase", "-q", "-i", "--autosquash", "HEAD~3", cwd=fork,
       env={"GIT_SEQUENCE_EDITOR": "true"})  # fmt: skip


def split_second_commit(fork, name: str, path: str, subject: str, files: dict | None = None):
    """Split patch 0002's commit in fork/: its change to `path` (and new `files`) goes into a
    new commit after it, titled `subject`; the first keeps the patch-name note `name`."""
    sh("git", "rebase", "-q", "-i", "HEAD~2", cwd=fork,
       env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})  # fmt: skip
    sh("git", "reset", "-q", "--soft", "HEAD~1", cwd=fork)
    sh("git", "reset", "-q", "HEAD", "--", path, cwd=fork)
    sh("git", "commit", "-q", "-C", "ORIG_HEAD", cwd=fork)
    sh("git", "notes", "--ref=te-series", "add", "-f", "-m", name, "HEAD", cwd=fork)
    for f, text in (files or {}).items():
        (fork / f).write_text(text)
    sh("git", "add", "-A", cwd=fork)
    sh("git", "commit", "-q", "-m", subject, cwd=fork)
    sh("git", "rebase", "--continue", cwd=fork)


def rebuild_and_export_unchanged(project, upstream, capsys, path, text: bytes) -> None:
    """Commit the patch file `path` as `text`, rebuild fork/ from the series, and see an export
    that changes nothing in fork/ leave the file byte for byte."""
    path.write_bytes(text)
    save(project, f"{path.name}: hand-written text")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"unchanged {path.name}" in out, out
    assert path.read_bytes() == text


def test_export_roundtrip_is_byte_identical(project, upstream):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    (name,) = series.names()
    first = (series.dir / name).read_bytes()
    assert b"From 0000000000000000000000000000000000000000" in first
    assert b"Subject: [PATCH] [PyTorch] Make route return a list" in first
    export_mod.export(project / "fork", series)
    assert (series.dir / name).read_bytes() == first
    shutil.rmtree(project / "fork")
    make_tree(series, project / "fork", te_src=upstream)
    export_mod.export(project / "fork", series)
    assert (series.dir / name).read_bytes() == first
    assert series.names() == [name]
    info = read_patch(series.dir / name)
    fuser = next(f for f in info.files if f.path == "transformer_engine/pytorch/fuser.py")
    assert fuser.old_blob == blob_id(FUSER.encode())


def test_export_keeps_comments_and_groups(project, upstream, capsys):
    series = make_series(
        project,
        upstream,
        [({f"tests/t{i}.py": f"T = {i}\n"}, msg(f"Add test {i}")) for i in range(1, 5)],
    )
    n = series.names()
    series.series_file.write_text(
        f"# Patches in order.\n\n# pr: first\n{n[0]}\n  # indented note\n{n[1]}\n\n"
        f"# pr: second\n{n[2]}\n{n[3]}\n# end\n"
    )
    save(project)
    fork = project / "fork"
    # Reword patch 1, add a commit after patch 2, drop patch 4.
    sh(
        "git", "rebase", "-q", "-i", "HEAD~4", cwd=fork,
        env={
            "GIT_SEQUENCE_EDITOR": "sed -i -e 1s/^pick/reword/ -e 4s/^pick/drop/",
            "GIT_EDITOR": "sed -i 1s/Add.test.1/Add.first.test/",
        },
    )  # fmt: skip
    sh(
        "git",
        "rebase",
        "-q",
        "-i",
        "HEAD~2",
        cwd=fork,
        env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"},
    )
    commit(fork, {"tests/t_new.py": "NEW = 1\n"}, msg("Add new test"))
    sh("git", "rebase", "--continue", cwd=fork)
    rc, out = te("export", "--drop", n[3], capsys=capsys)
    assert rc == 0, out
    assert series.series_file.read_text() == (
        "# Patches in order.\n\n# pr: first\n0001-PyTorch-Add.first.test.patch\n"
        f"  # indented note\n{n[1]}\n0003-PyTorch-Add-new-test.patch\n\n"
        "# pr: second\n0004-PyTorch-Add-test-3.patch\n# end\n"
    )
    assert sorted(p.name for p in series.dir.glob("*.patch")) == sorted(series.names())


def test_a_full_disk_mid_export_writes_nothing(three, project, monkeypatch, capsys):
    """tool-review-v6 #14: every file is written aside first; a failure removes them all."""
    before = patch_bytes(three)
    series_before = three.series_file.read_bytes()
    fork = project / "fork"
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more", "Another body."), cwd=fork)
    commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))  # two patch files to write
    real, calls = Path.write_bytes, []

    def full(self, data):
        if self.name.endswith(".patch.te-series-tmp"):
            calls.append(self.name)
            if len(calls) == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", full)
    rc, out = te("export", capsys=capsys)
    monkeypatch.setattr(Path, "write_bytes", real)
    assert rc == 2 and "No space left on device" in out and "nothing was written" in out, out
    assert patch_bytes(three) == before and three.series_file.read_bytes() == series_before
    assert not list(three.dir.glob(".*te-series-tmp"))
    assert te("export")[0] == 0  # room again: the export goes through
    assert len(three.names()) == 4


# A git first in PATH that fails the first `git notes ... add` as on a full disk: with
# git's words for it, or (a lock file it could not write, v33 #4) without them.
NOTES_FULL = """#!/bin/sh
case " $* " in *" notes "*" add "*) if [ ! -e "{marker}" ]; then touch "{marker}"
  echo "{said}" >&2; exit 128; fi;; esac
exec "{git}" "$@"
"""
NO_SPACE = "fatal: No space left on device"
NO_LOCK = "fatal: update_ref failed for ref 'refs/notes/te-series': couldn't write 'x.lock'"


@pytest.mark.parametrize("said", [NO_SPACE, NO_LOCK])
@pytest.mark.parametrize("verb", [("export",), ("apply", "--force")])
def test_a_full_disk_at_a_note_says_so_and_the_same_command_again_gets_past(
    three, project, upstream, monkeypatch, capsys, tmp_path, verb, said
):  # fmt: skip
    """v28 #3: a git notes that the disk stopped gave git's words only, and for apply
    --force named the fork.new/ it had already removed. The stop says the disk is full and
    to run the same command again once there is room; that gets past it. v33 #4: git's
    words for a lock it could not write name no full disk: less than 1 MiB left does."""
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more things"), cwd=project / "fork")
    args = (*verb, "--te-src", str(upstream)) if verb[0] == "apply" else verb
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git").write_text(
        NOTES_FULL.format(marker=tmp_path / "full", git=shutil.which("git"), said=said)
    )
    (shim / "git").chmod(0o755)
    room = os.statvfs
    with monkeypatch.context() as m:
        m.setenv("PATH", f"{shim}:{os.environ['PATH']}")
        m.setattr(os, "statvfs", lambda path: room(path) if "fork" not in str(path) else
                  os.statvfs_result((4096, 4096, 100, 0, 0, 100, 0, 0, 0, 255)))  # fmt: skip
        rc, out = te(*args, capsys=capsys)
    assert rc == 2 and "the disk is full" in out and "run the same te-series command" in out, out
    assert "fork.new" not in out.split("error:")[-1]
    rc, out = te(*args, capsys=capsys)
    assert rc == 0, out


# A git first in PATH whose first mailsplit fails as on a full disk.
MAILSPLIT_FULL = """#!/bin/sh
case " $* " in *" mailsplit "*) if [ ! -e "{marker}" ]; then touch "{marker}"
  echo "fatal: cannot write output: No space left on device" >&2; exit 128; fi;; esac
exec "{git}" "$@"
"""


@pytest.mark.parametrize("step", ["mailsplit", "mailinfo"])
def test_a_full_disk_at_exports_read_back_says_so(three, project, monkeypatch, capsys, tmp_path,
                                                  step):  # fmt: skip
    """v32 #1, #2: export reads each patch back as git am would, through files of git
    mailsplit and git mailinfo. On a full disk mailsplit's failure was told as a damaged
    patch (to restore from a path that is no file), and mailinfo, which cuts its output short
    there and exits 0, made a sound message look unreadable (to reword, again and again)."""
    before = patch_bytes(three)
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more things"), cwd=project / "fork")
    marker = tmp_path / "full"
    with monkeypatch.context() as m:
        if step == "mailsplit":
            (tmp_path / "git").write_text(MAILSPLIT_FULL.format(marker=marker, git=shutil.which("git")))
            (tmp_path / "git").chmod(0o755)
            m.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
        else:  # less than 1 MiB left where mailinfo wrote
            room = os.statvfs

            def statvfs(path):
                if marker.exists() or "te-series-mailinfo-" not in str(path):
                    return room(path)
                marker.touch()
                return os.statvfs_result((4096, 4096, 100, 0, 0, 100, 0, 0, 0, 255))

            m.setattr(os, "statvfs", statvfs)
        rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"the disk is full: git {step} could not write" in out, out
    assert "restore it" not in out and "reads it differently" not in out
    assert patch_bytes(three) == before
    rc, out = te("export", capsys=capsys)  # room again: the same command gets past it
    assert rc == 0 and "Test-more-things" in out, out


@pytest.mark.parametrize("stuck", ["series", "0003-PyTorch-Test-more.patch"])
def test_a_patch_file_that_cannot_be_replaced_leaves_every_file_as_it_was(three, project,
                                                                          monkeypatch, capsys,
                                                                          stuck):  # fmt: skip
    """v17 F1: a file that cannot be replaced or deleted (chattr +i) stops export after others
    were replaced: they get their bytes back, a new file goes, no temporary file stays, and
    the message names the file, not a temporary one."""
    before = patch_bytes(three)
    series_before = three.series_file.read_bytes()
    fork = project / "fork"
    env = {"GIT_SEQUENCE_EDITOR": "sed -i -e 1s/^pick/reword/ -e 3s/^pick/reword/",
           "GIT_EDITOR": "sed -i -e 's/^Because it helps/Because it helps a lot/' "
                         "-e 's/^\\[PyTorch\\] Test more/[PyTorch] Test more things/'"}
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=env)  # 0001 replaced, 0003 renamed
    blocked = three.dir / stuck  # replaced last, or deleted after the others are written
    real_replace, real_unlink = os.replace, Path.unlink

    def replace(src, dst):
        if Path(dst) == blocked:
            raise OSError(errno.EPERM, "Operation not permitted")
        return real_replace(src, dst)

    def unlink(self, missing_ok=False):
        if self == blocked:
            raise OSError(errno.EPERM, "Operation not permitted")
        return real_unlink(self, missing_ok)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(Path, "unlink", unlink)
    rc, out = te("export", capsys=capsys)
    monkeypatch.setattr(os, "replace", real_replace)
    monkeypatch.setattr(Path, "unlink", real_unlink)
    assert rc == 2 and f"could not write patches/{blocked.name} (Operation not permitted)" in out
    assert patch_bytes(three) == before and three.series_file.read_bytes() == series_before
    assert not list(three.dir.glob(".*te-series-tmp")), out
    assert te("export")[0] == 0  # once it can be replaced, the export goes through
    assert three.names()[2] == "0003-PyTorch-Test-more-things.patch"


def test_a_crlf_series_keeps_its_line_ends(three, project, capsys):
    """tool-review-v6 #24."""
    three.series_file.write_bytes(three.series_file.read_bytes().replace(b"\n", b"\r\n"))
    save(project, "CRLF series")
    commit(project / "fork", {"tests/d.py": "D = 1\n"}, msg("Add d"))
    assert te("export")[0] == 0
    data = three.series_file.read_bytes()
    assert b"0004-PyTorch-Add-d.patch\r\n" in data and data.count(b"\n") == data.count(b"\r\n")


def test_a_patch_name_with_spaces_is_one_name(three, project, upstream, capsys):
    names = rename_patch_2(three, project)
    assert names[1] == SPACED
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    capsys.readouterr()
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0, out
    assert f"rename {SPACED} -> 0002-PyTorch-Make-route-return-a-list.patch\n" in out


def test_a_body_that_starts_with_an_indented_line_round_trips(project, upstream):
    """tool-review-v12 #8: the body read back from the patch lost its first line's indent, so
    export refused it ("git am reads it differently"); git am keeps the indent."""
    code = msg("Make route return a list", "    route(x) == [x]\n\nA list, as the op expects.")
    series = make_series(project, upstream, [(GOOD_CHANGE, code)])
    (name,) = series.names()
    first = (series.dir / name).read_bytes()
    shutil.rmtree(project / "fork")
    make_tree(series, project / "fork", te_src=upstream)
    assert sh("git", "log", "-1", "--format=%B", cwd=project / "fork").rstrip("\n") == code
    export_mod.export(project / "fork", series)
    assert (series.dir / name).read_bytes() == first


def test_a_new_commit_between_two_prs_is_named_and_its_advice_moves_it(project, upstream,
                                                                        capsys):  # fmt: skip
    """tool-review-v12 #4: a commit inserted as the first of a PR (or split off its first
    patch) went into the PR above, silently. Export says where it went and how to move it."""
    series = make_series(
        project, upstream,
        [({f"tests/t{i}.py": f"T = {i}\n"}, msg(f"Add test {i}")) for i in range(1, 5)],
    )  # fmt: skip
    n = series.names()
    series.series_file.write_text(f"# pr: first\n{n[0]}\n{n[1]}\n# pr: second\n{n[2]}\n{n[3]}\n")
    save(project)
    fork = project / "fork"
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork,
       env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})  # fmt: skip
    commit(fork, {"tests/t_docs.py": "D = 1\n"}, msg("Document test 3"))
    sh("git", "rebase", "--continue", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    said = re.search(r"add (\S+) \(a new commit\) at the end of PR 'first'; if it belongs to PR "
                     r"'second', move its line below '(# pr: second)' in patches/series, commit",
                     out)  # fmt: skip
    assert said, out
    new, marker = said.groups()
    text = series.series_file.read_text()
    series.series_file.write_text(
        text.replace(f"{new}\n", "").replace(f"{marker}\n", f"{marker}\n{new}\n")
    )
    save(project, "the new commit belongs to PR second")
    groups = {slug: names for slug, names, _ in series.groups()[0]}
    assert groups["first"] == n[:2] and groups["second"][0] == new, groups
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "rewrite" not in out and "add" not in out, out


def test_a_series_file_that_is_a_link_is_written_through_it(three, project, capsys):
    """tool-review-v19 F6: a patches/series that is a symbolic link (series -> series.real)
    became a regular file on export, and the file it named kept the old list."""
    real = three.dir / "series.real"
    three.series_file.rename(real)
    three.series_file.symlink_to("series.real")
    save(project, "series via a link")
    commit(project / "fork", {"README": "x\n"}, msg("Note"))
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and three.series_file.is_symlink(), out
    assert "0004-PyTorch-Note.patch" in real.read_text()


NOTES = b"Changes since v13 (for reviewers): the lock is now taken at the\nfirst fused call.\n\n"


@pytest.mark.parametrize("also", [None, "renumbered", "reworded"])
def test_swapped_notes_never_swap_the_files_text_of_yours(three, project, upstream, capsys,
                                                          also):  # fmt: skip
    """v34 #1: the patch-name notes of two commits swapped by hand: export took it for two
    renames onto each other's files, and the notes for reviewers below patch 1's '---' went
    into patch 2's file. It refuses, with the notes commands that set them right. v35 #1:
    the same with the commits renumbered (a commit inserted before) or reworded: a commit
    is the patch whose change it has."""
    names, fork = three.names(), project / "fork"
    path = three.dir / names[0]
    path.write_bytes(path.read_bytes().replace(b"\n---\n", b"\n---\n" + NOTES, 1))
    save(project, "notes for reviewers")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    one, two = (sh("git", "rev-parse", r, cwd=fork).strip() for r in ("HEAD~2", "HEAD~1"))
    for rev, name in ((one, names[1]), (two, names[0])):
        sh("git", "notes", "--ref=te-series", "add", "-f", "-m", name, rev, cwd=fork)
    if also == "renumbered":
        stop = {"GIT_SEQUENCE_EDITOR": "sed -i 1ibreak"}  # a commit of mine before patch 1
        sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=stop)
        commit(fork, {"tests/e.py": "E = 1\n"}, msg("Add e"))
        sh("git", "notes", "--ref=te-series", "add", "-m", "new", "HEAD", cwd=fork)
        sh("git", "rebase", "--continue", cwd=fork)
    elif also == "reworded":
        reword_line(fork, "HEAD~3", 1, "s/^\\[PyTorch\\] .*/& (v2)/")
    before = patch_bytes(three)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "do not match its commits" in out and patch_bytes(three) == before, out
    (commands,) = re.findall(r"note it so \((.*?)\) and export again", out)
    for command in commands.split("; "):
        sh("sh", "-c", command, cwd=project)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    first = [f for f in three.dir.glob("*.patch") if NOTES in f.read_bytes()]
    assert len(first) == 1 and b"VALUE = 2" in first[0].read_bytes(), first  # patch 1's change


@pytest.mark.parametrize("committed", [True, False])
def test_text_git_am_leaves_out_of_the_commit_is_kept_by_export(three, project, upstream,
                                                                capsys, committed):  # fmt: skip
    """tool-review-v20 #1: notes for reviewers below a patch's '---' (and a mail header of
    the user's) are not in the commit git am makes; export rewrote the file without them and
    said only "change". First it said "fork/ was made from these edits, so it holds them:
    commit them first", and after that commit it deleted them. Export keeps them: with fork/
    as it was made nothing changes, and a commit reworded in fork/ (renamed or not) keeps its
    file's notes."""
    name = three.names()[1]
    path = three.dir / name
    text = path.read_bytes()
    text = text.replace(b"\n---\n", b"\n---\n" + NOTES, 1)
    head, _, rest = text.partition(b"\n\n")  # a header of the user's, after git's
    text = head + b"\nCc: Reviewer <r@example.org>\n\n" + rest
    path.write_bytes(text)
    if committed:
        save(project, "0002: notes for reviewers")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0  # fork/ made from it
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"unchanged {name}" in out, out
    assert path.read_bytes() == text
    fork = project / "fork"
    base = sh("git", "rev-parse", "HEAD~2", cwd=fork).strip()
    line = 1 if committed else 3  # the subject (a rename), or the body
    sh("git", "-c", "sequence.editor=sed -i 1s/^pick/reword/", "-c",
       f"core.editor=sed -i '{line}s/$/ (v2)/'", "rebase", "-q", "-i", base, cwd=fork)
    rc, out = te("export", capsys=capsys)
    if not committed:  # its advice, followed as written, is now true: fork/ and export keep it
        said = "so it holds them: commit them first (git add patches && git commit)"
        assert rc == 2 and said in out, out
        save(project, "0002: notes for reviewers")
        rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    (new,) = [n for n in three.names() if n.startswith("0002-")]
    got = (three.dir / new).read_bytes()
    assert b" (v2)" in got and (new != name) == committed
    assert b"\n---\n" + NOTES in got and b"\nCc: Reviewer <r@example.org>\n" in got, got[:600]


def test_notes_below_a_subject_only_patchs_dashes_are_kept(three, project, capsys):
    """A commit with a subject and no body: format-patch writes '---' right after the mail
    headers, which export did not find (it looked for a line break before it), so it took
    notes written below it for a change to the message that an export would undo, and
    refused the next change of that commit with only a rebuild as advice. They are kept."""
    name, fork = three.names()[2], project / "fork"
    sh("git", "commit", "-q", "--amend", "-m", "[PyTorch] Test more", cwd=fork)
    assert te("export", capsys=capsys)[0] == 0
    path = three.dir / name
    assert b"\n\n---\n" in path.read_bytes()
    path.write_bytes(path.read_bytes().replace(b"\n\n---\n", b"\n\n---\n" + NOTES, 1))
    save(project, "0003: notes for reviewers")
    (fork / "tests/test_more.py").write_text("changed = 2\n")
    sh("git", "commit", "-q", "-a", "--amend", "--no-edit", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"change {name}" in out, out
    assert b"\n\n---\n" + NOTES in path.read_bytes() and b"changed = 2" in path.read_bytes()


def test_notes_that_look_like_a_diffstat_and_text_after_it_are_kept(three, project, upstream,
                                                                     capsys):  # fmt: skip
    """tool-review-v21 #1: export took every indented line holding ' | ' for format-patch's
    diffstat, and kept nothing of what stood after it: a no-op export deleted such notes, and
    a changelog line between the diffstat and the diff. Only the file's own diffstat, as
    format-patch writes it for its diff, is export's; the rest stays byte for byte, also when
    the commit's diff (so its diffstat) changes."""
    name = three.names()[1]
    path = three.dir / name
    above = b"Timings per step:\n  - mlp: 41.0 us | 38.5 us\n  - moe: 88.1 us | 80.2 us\n\n"
    below = b"Changes since v14: reworded the second paragraph.\n\n"
    text = path.read_bytes().replace(b"\n---\n", b"\n---\n" + above, 1)
    text = text.replace(b"\ndiff --git ", b"\n" + below + b"diff --git ", 1)
    rebuild_and_export_unchanged(project, upstream, capsys, path, text)
    fork = project / "fork"  # the commit changes: its diffstat does, the notes stay
    change_second_commit(fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"change {name}" in out, out
    got = path.read_bytes()
    stat = b" tests/test_fuser.py                 | 5 ++++-\n"
    assert b"\n---\n" + above + b" tests/test_fuser.py" in got and stat in got, got[:900]
    assert b" insertions(+), 2 deletions(-)\n\n" + below + b"diff --git " in got, got[:900]
    assert got.count(b"files changed") == 1, got[:900]


def test_text_after_a_patchs_diff_is_kept_by_export(three, project, upstream, capsys):
    """tool-review-v22 R5: a `-- ` signature block or a note after the last hunk, which git
    am leaves out of the commit, was deleted by an export that changed nothing in fork/. It
    is kept, also when the commit is reworded."""
    name = three.names()[1]
    path = three.dir / name
    note = b"\n-- \nReviewed-on: https://example.invalid/r/123 (mine)\n"
    text = path.read_bytes() + note[1:]
    rebuild_and_export_unchanged(project, upstream, capsys, path, text)
    fork = project / "fork"
    sh("git", "-c", "sequence.editor=sed -i 1s/^pick/reword/", "-c",
       "core.editor=sed -i '3s/$/ (v2)/'", "rebase", "-q", "-i", "HEAD~2", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"change {name}" in out, out
    got = path.read_bytes()
    assert b" (v2)" in got and got.endswith(note), got[-300:]


@pytest.mark.parametrize("where", ["between-files", "after-the-last-hunk"])
def test_text_after_a_files_hunks_stays_with_the_file(three, project, upstream, capsys, where):
    """tool-review-v23 #1, #2: a note between two files' diffs was deleted by an export that
    changed nothing in fork/, and a note after the last hunk by an export of a change to the
    commit. git am leaves both out; each stays after its file's hunks, byte for byte."""
    name = three.names()[1]
    path = three.dir / name
    note = b"Reviewer note: run on an H100.\n"
    text, at = path.read_bytes(), b"\ndiff --git a/transformer_engine/"
    text = text.replace(at, b"\n" + note + at[1:], 1) if where == "between-files" else text + note
    rebuild_and_export_unchanged(project, upstream, capsys, path, text)
    change_second_commit(project / "fork")  # its first file's hunk
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"change {name}" in out, out
    got = path.read_bytes()
    assert b"+Y = 2\n" in got and got.count(note) == 1, got
    if where == "between-files":
        assert b"+Y = 2\n" + note + at[1:] in got, got
    else:
        assert got.endswith(b"+    return list(values)\n" + note), got


@pytest.mark.parametrize("written", ["before-apply", "after-apply"])
def test_text_after_a_files_hunks_follows_it_into_a_commit_split_off(three, project, upstream,
                                                                      capsys, written):  # fmt: skip
    """tool-review-v36 #2: a commit split in two in fork/, one file's change into a new commit
    after it: the note after that file's hunks stayed in the old patch, after another file's.
    It goes after that file's hunks in the new commit's patch. v40 L1: a note written after
    fork/ was made got "changed since ... rebuild" (the 3-way check read it as a change)."""
    name = three.names()[1]
    path = three.dir / name
    note = b"Reviewer note: about the test's hunk.\n"
    text, at = path.read_bytes(), b"\ndiff --git a/transformer_engine/"
    assert b"\ndiff --git a/tests/test_fuser.py " in text.split(at)[0]
    text = text.replace(at, b"\n" + note + at[1:], 1)
    if written == "before-apply":
        rebuild_and_export_unchanged(project, upstream, capsys, path, text)
    else:
        path.write_bytes(text)
        save(project, "a note")
    split_second_commit(project / "fork", name, "tests/test_fuser.py", "[PyTorch] Test the route")
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"change {name}" in out and "(a new commit)" in out, out
    (new,) = three.dir.glob("0003-PyTorch-Test-the-route.patch")
    assert note not in path.read_bytes(), out
    assert new.read_bytes().endswith(b"[1] == [1]\n" + note), new.read_bytes()[-300:]


def test_text_without_a_final_line_break_is_kept_and_moved_whole(three, project, upstream,
                                                                  capsys):  # fmt: skip
    """tool-review-v40 C1, C2: a note at the end of a patch file without a final line break
    was taken for part of the last file's diff and dropped by an export that changed nothing;
    moved into a commit split off, it was glued to the next file's `diff --git` line, and the
    next export doubled that file's diff. It is kept byte for byte, and moved with a line break
    where a file follows it; a second export changes nothing."""
    name = three.names()[1]
    path = three.dir / name
    rebuild_and_export_unchanged(project, upstream, capsys, path, path.read_bytes() + b"NOTE")
    zzz = {"transformer_engine/pytorch/zzz.py": "Z = 1\n"}  # a file after fuser.py's
    split_second_commit(project / "fork", name, "transformer_engine/pytorch/fuser.py",
                        "[PyTorch] Route lists", zzz)  # fmt: skip
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "(a new commit)" in out, out
    (new,) = three.dir.glob("0003-PyTorch-Route-lists.patch")
    assert b"NOTE\ndiff --git a/transformer_engine/pytorch/zzz.py " in new.read_bytes()
    save(project, "export")
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and "  change" not in out and new.read_bytes().count(b"zzz.py b/") == 1, out


@pytest.mark.parametrize("other", ["a later patch", "a new commit, not next to it"])
def test_text_after_a_files_hunks_stays_in_its_patch_when_another_changes_it(three, project,
                                                                            upstream, capsys,
                                                                            other):  # fmt: skip
    """tool-review-v37 #1: a commit that changes a file no more, while a later patch does:
    the note after that file's hunks went into that other patch, which it is not about (and
    the v36 #2 placement said nothing); v40 M1: or into any new commit that changes it. It
    stays in its own patch, at its end, and the report says so."""
    name = three.names()[1]
    path = three.dir / name
    note = b"Reviewer note: about the test's hunk.\n"
    text, at = path.read_bytes(), b"\ndiff --git a/transformer_engine/"
    rebuild_and_export_unchanged(project, upstream, capsys, path,
                                 text.replace(at, b"\n" + note + at[1:], 1))  # fmt: skip
    fork = project / "fork"
    sh("git", "rebase", "-q", "-i", "HEAD~2", cwd=fork,
       env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})  # fmt: skip
    sh("git", "checkout", "HEAD~1", "--", "tests/test_fuser.py", cwd=fork)
    sh("git", "commit", "-q", "--amend", "--no-edit", cwd=fork)
    sh("git", "rebase", "--continue", cwd=fork)
    (fork / "tests/test_fuser.py").write_text("def test_x():\n    assert 1\n")
    amend = ["--amend", "--no-edit"] if other == "a later patch" else ["-m", msg("Test later")]
    sh("git", "commit", "-q", "-a", *amend, cwd=fork)
    said = f"after the hunks of tests/test_fuser.py in {name}, which "
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "would keep the text of yours " + said in out, out
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and said + "changes that file no more, at its end" in out, out
    assert path.read_bytes().endswith(note) and b"tests/test_fuser.py" not in path.read_bytes()
    assert all(note not in (three.dir / n).read_bytes() for n in three.names() if n != name)


def test_a_dropped_patchs_file_name_can_be_taken_by_a_reworded_commit(three, project, upstream,
                                                                        capsys):  # fmt: skip
    """tool-review-v38 #3: patch 2's commit dropped and patch 3's reworded to patch 2's
    subject, then `export --drop` patch 2: export refused ("notes do not match") and advised
    a rebuild, after which --drop was refused. --drop gives up that file: it now holds patch
    3's commit, with patch 3's notes; patch 3's old file goes."""
    p2, p3 = three.names()[1:]
    notes = b"Reviewer notes of patch 3.\n\n"
    path = three.dir / p3
    path.write_bytes(path.read_bytes().replace(b"\n---\n", b"\n---\n" + notes, 1))
    save(project, "notes")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    fork = project / "fork"
    subject = read_patch(three.dir / p2).subject
    sh("git", "rebase", "-q", "-i", "HEAD~2", cwd=fork,
       env={"GIT_SEQUENCE_EDITOR": "sed -i '1d;2s/^pick/reword/'",
            "GIT_EDITOR": f"sed -i '1s/.*/{subject}/'"})  # fmt: skip
    rc, out = te("export", "--drop", p2, capsys=capsys)
    assert rc == 0, out
    assert f"drop {p2} (its file now holds the commit exported under that name)" in out, out
    assert three.names() == [three.names()[0], p2] and not (three.dir / p3).exists()
    got = (three.dir / p2).read_bytes()
    assert b"\n---\n" + notes in got and b"test_more.py" in got and b"fuser.py" not in got


def test_a_change_to_a_commit_whose_patch_got_notes_since_apply_is_exported(three, project,
                                                                            upstream, capsys):  # fmt: skip
    """tool-review-v21 #4: notes for reviewers added to a patch file (committed) after fork/
    was made from it; then its commit changed in fork/. Export refused: the file "changed
    since fork/ was made from it" and export "would undo that change", though it keeps notes;
    the ways out were a rebuild (losing the change from the tree) or the same change in fork/
    (impossible for notes). A change since apply in what export keeps is not undone: export
    writes the commit's change with the notes."""
    name = three.names()[1]
    path = three.dir / name
    notes = b"Reviewer notes: the route is a list now.\n\n"
    path.write_bytes(path.read_bytes().replace(b"\n---\n", b"\n---\n" + notes, 1))
    save(project, "0002: notes for reviewers")
    fork = project / "fork"
    change_second_commit(fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"change {name}" in out, out
    got = path.read_bytes()
    assert b"\n---\n" + notes + b" tests/test_fuser.py " in got and b"+Y = 2\n" in got, got


def test_a_shift_of_two_patches_whose_names_differ_only_in_number_is_written(project, upstream,
                                                                              capsys):  # fmt: skip
    """tool-review-v22 R4: two patches whose subjects share their first ~50 characters have
    the same name but for the number. A commit inserted before them shifts both (0002 to
    0003, 0003 to 0004); export refused that as "notes do not match; rebuild", and the
    rebuild changed nothing. It is a plain renumbering, and export writes it."""
    same = "[PyTorch] Support backward with retain_graph=True in fusible ops"
    series = make_series(project, upstream, [
        ({"transformer_engine/pytorch/a.py": "A = 1\n"}, msg("Add a")),
        ({"transformer_engine/pytorch/b.py": "B = 1\n"}, msg(same + ", part 1")),
        ({"transformer_engine/pytorch/c.py": "C = 1\n"}, msg(same)),
    ])  # fmt: skip
    old = series.names()
    assert old[1][5:] == old[2][5:]
    fork = project / "fork"
    add = 'exec echo "D = 1" > d.py && git add d.py && git commit -q -m "[PyTorch] Add d"'
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork,
       env={"GIT_SEQUENCE_EDITOR": f"sed -i '1a {add}'"})  # fmt: skip
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert series.names()[2:] == ["0003" + old[1][4:], "0004" + old[2][4:]]
    assert (project / "patches" / series.names()[3]).read_text().count("C = 1") == 1


def test_a_note_added_after_export_survives_a_reorder(three, project, capsys):
    """v36 #1: export, then notes for reviewers added below '---' of a file it wrote, then
    committed: after a reorder in fork/, export refused "changed since fork/ was made" (the
    version export wrote was in no commit, so it could not be read back), and "make the same
    change" cannot make a note. Export keeps the note and renumbers."""
    names, fork = three.names(), project / "fork"
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more things"), cwd=fork)
    assert te("export")[0] == 0
    path = three.dir / three.names()[2]
    path.write_bytes(path.read_bytes().replace(b"\n---\n", b"\n---\n" + NOTES, 1))
    save(project, "export, and notes for reviewers")
    swap = {"GIT_SEQUENCE_EDITOR": "sed -i -e 2h -e 2d -e 3G"}  # patches 2 and 3 change places
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=swap)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    moved = three.dir / three.names()[1]
    assert "Test-more-things" in moved.name and NOTES in moved.read_bytes()
