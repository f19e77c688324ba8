"""apply and export: stable round trips, and the guards that keep the series and fork/ work."""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
from pathlib import Path

import pytest

from te_series import worktree
from te_series import export as export_mod
from te_series.git import blob_id
from te_series.series import read_patch
from te_series.worktree import make_tree, read_state
from series_helpers import (
    CONFLICTING,
    FUSER,
    GOOD_CHANGE,
    GOOD_MSG,
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


def test_user_format_config_does_not_change_export(project, upstream, isolated):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    before = patch_bytes(series)
    isolated.write_text(
        "[diff]\n\tnoprefix = true\n\tsuppressBlankEmpty = true\n[format]\n\tsignature = me\n"
        "\tnumbered = true\n\tto = someone@example.com\n\theaders = X-Extra: 1\n"
    )
    export_mod.export(project / "fork", series)
    assert patch_bytes(series) == before


def test_failed_apply_names_patch_file_hunk_and_git_message(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    name = three.names()[1]
    assert f"patch {name} does not apply" in out
    assert "file transformer_engine/pytorch/fuser.py, hunk at line 3 @@ -3,4 +3,4 @@" in out
    assert "Patch failed at" in out  # git's own words, not only CONFLICT lines
    assert "fork/ holds patches 1-1 of 3" in out
    assert "te-series apply --continue" in out
    state = read_state(project / "fork")
    assert (state.applied, state.failed) == (1, name)


def test_failed_apply_then_advice_then_export_refuses_and_names_drops(
    three, project, upstream, capsys
):
    before = patch_bytes(three)
    names = three.names()
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    fork = project / "fork"
    # While git am is stopped, export says so.
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "git am in progress" in out
    # The v1 advice: abort, fix the change by hand, commit, export.
    sh("git", "am", "--abort", cwd=fork)
    commit(fork, GOOD_CHANGE, GOOD_MSG)
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    assert "holds only 1 of the 3 patches" in out
    assert f"would drop {names[1]}, {names[2]}" in out
    assert patch_bytes(three) == before
    assert three.names() == names


def test_resume_after_fixed_patch_then_export_rewrites_only_it(three, project, upstream, capsys):
    before = patch_bytes(three)
    names = three.names()
    fork = stop_and_resolve(project, upstream)
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0, out
    assert read_state(fork).complete
    assert te("export")[0] == 0
    after = patch_bytes(three)
    assert after[names[0]] == before[names[0]]
    assert after[names[2]] == before[names[2]]
    assert b"list(set(values))" in after[names[1]]
    assert three.names() == names


def test_resume_after_user_commits_the_fixed_change(three, project, upstream):
    names = three.names()
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    fork = project / "fork"
    sh("git", "am", "--abort", cwd=fork)
    commit(fork, GOOD_CHANGE, GOOD_MSG)
    assert te("apply", "--continue")[0] == 0
    assert te("export")[0] == 0
    assert three.names() == names


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


def test_series_missing_patch_is_refused_before_apply(three, project, upstream, capsys):
    shutil.rmtree(project / "fork")
    lines = three.series_file.read_text().splitlines()
    lines.insert(2, "0042-missing.patch")
    three.series_file.write_text("\n".join(lines) + "\n")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert "patches/series line 3 names 0042-missing.patch, which does not exist" in out
    assert "Traceback" not in out
    assert not (project / "fork").exists() and not (project / "fork.new").exists()


def test_series_duplicate_line_is_named_with_lines(three, project, upstream, capsys):
    shutil.rmtree(project / "fork")
    names = three.names()
    three.series_file.write_text("\n".join(["# order", *names, names[0]]) + "\n")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"lists {names[0]} twice (lines 2 and 5)" in out
    assert not (project / "fork").exists()


@pytest.mark.parametrize(
    "text, says",
    [
        (None, "patches/base.toml not found"),
        ("[upstream\ncommit = 1\n", "patches/base.toml is not valid TOML"),
        ('[pypi]\nrelease = "9.9.9"\n', "patches/base.toml lacks `commit` in [upstream]"),
    ],
)
def test_corrupt_base_toml_is_a_clear_error(project, upstream, capsys, text, says):
    toml = project / "patches" / "base.toml"
    if text is None:
        toml.unlink()
    else:
        toml.write_text(text)
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert says in out
    assert "Traceback" not in out


def test_force_keeps_the_old_fork_whole(three, project, upstream, capsys):
    """D3: commits, a stash, a tag-only commit, ignored and untracked files, a nested repo."""
    fork = project / "fork"
    wip = commit(fork, {"tests/wip.py": "WIP = 1\n"}, msg("Work in progress"))
    (fork / "tests/test_fuser.py").write_text("stashed = 1\n")
    sh("git", "stash", "-q", cwd=fork)
    tree = sh("git", "rev-parse", "HEAD^{tree}", cwd=fork).strip()
    tagged = sh("git", "commit-tree", "-p", "HEAD", "-m", "tag-only work", tree, cwd=fork).strip()
    sh("git", "tag", "keep", tagged, cwd=fork)
    (fork / ".git" / "info" / "exclude").write_text("*.log\n")
    (fork / "build.log").write_text("ignored\n")
    (fork / "notes.txt").write_text("my notes\n")
    sh("git", "init", "-q", str(fork / "scratch"), cwd=fork)
    (fork / "scratch" / "x.txt").write_text("nested\n")
    (fork / "tests/test_fuser.py").write_text("edited = 1\n")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    (backup,) = (project / ".te-series-backup").iterdir()
    kept = backup / "fork"
    assert f"fork/ moved whole to .te-series-backup/{backup.name}/fork/" in out
    assert f"git -C fork fetch ../.te-series-backup/{backup.name}/fork" in out
    assert (kept / "notes.txt").read_text() == "my notes\n"
    assert (kept / "build.log").read_text() == "ignored\n"
    assert (kept / "scratch" / "x.txt").read_text() == "nested\n"
    assert (kept / "tests/test_fuser.py").read_text() == "edited = 1\n"
    sh("git", "fetch", "-q", str(kept), "refs/*:refs/backup/*", cwd=fork)
    assert sh("git", "log", "-1", "--format=%s", wip, cwd=fork).strip().endswith("in progress")
    assert sh("git", "show", "refs/backup/stash:tests/test_fuser.py", cwd=fork) == "stashed = 1\n"
    assert sh("git", "log", "-1", "--format=%s", "refs/backup/tags/keep", cwd=fork).strip() == (
        "tag-only work"
    )
    assert read_state(fork).complete


def test_failed_force_apply_leaves_old_fork(three, project, upstream, capsys):
    fork = project / "fork"
    wip = commit(fork, {"tests/wip.py": "WIP = 1\n"}, msg("Work in progress"))
    move_upstream(project, upstream, CONFLICTING)
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert "Your old fork/ is untouched; the new tree waits in fork.new/" in out
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == wip
    assert read_state(project / "fork.new").applied == 1


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


def reword(fork, upto: str, sed: str) -> None:
    """Reword the first commit after `upto` with a sed expression."""
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/", "GIT_EDITOR": f"sed -i {sed}"}
    sh("git", "rebase", "-q", "-i", upto, cwd=fork, env=env)


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


def test_gpgsign_user_config_does_not_break_apply(three, project, upstream, isolated):
    isolated.write_text("[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n")
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 0
    assert read_state(project / "fork").complete


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
    assert patch_bytes(three) == before
    # The advice (tool-review-v6 #7): it takes out the upstream commit and nothing else.
    undo = re.search(r"Take them out: (git -C fork rebase --onto \S+ \S+ series)", out).group(1)
    sh("git", *undo.split()[3:], cwd=fork)
    assert sh("git", "log", "--format=%s", f"{base}..HEAD", cwd=fork).count("\n") == 3
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and out.count("unchanged") == 3, out


def test_a_push_to_a_remote_of_yours_does_not_make_a_commit_upstream(three, project, capsys):
    """tool-review-v6 #7: only origin's refs (and tags) are upstream's."""
    fork = project / "fork"
    commit(fork, {"tests/d.py": "D = 1\n"}, msg("Add d"))
    sh("git", "update-ref", "refs/remotes/mine/series", "HEAD", cwd=fork)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "add 0004-PyTorch-Add-d.patch (a new commit)" in out, out


def test_export_refuses_when_base_toml_moved(three, project, upstream, capsys):
    move_upstream(project, upstream, {"README": "news\n"})
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "but patches/base.toml says" in out


def test_export_refuses_merge_commits(three, project, capsys):
    fork = project / "fork"
    sh("git", "checkout", "-q", "-b", "side", "HEAD~1", cwd=fork)
    commit(fork, {"tests/side.py": "S = 1\n"}, msg("Side"))
    sh("git", "checkout", "-q", "series", cwd=fork)
    sh("git", "merge", "-q", "--no-edit", "side", cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "merge commit" in out


def test_ctrl_c_during_export_writes_waits_for_the_writes(three, project, monkeypatch):
    fork = project / "fork"
    sh("git", "commit", "-q", "--amend", "-m", msg("Test more things"), cwd=fork)
    real = export_mod.write_all

    def write_then_interrupt(root, files):  # Ctrl-C while the patch files are written
        real(root, files)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(export_mod, "write_all", write_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        export_mod.export(fork, three)
    names = three.names()
    assert names[-1] == "0003-PyTorch-Test-more-things.patch"
    assert sorted(p.name for p in three.dir.glob("*.patch")) == sorted(names)
    assert read_state(fork).patches == names


def test_apply_refuses_existing_fork(three, project, upstream, capsys):
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "fork/ exists" in out


def test_skip_then_export_needs_drop(three, project, upstream, capsys):
    names = three.names()
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    assert te("apply", "--continue", "--skip")[0] == 0
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"would drop {names[1]}" in out
    assert te("export", "--drop", names[1])[0] == 0
    assert len(three.names()) == 2


@pytest.mark.parametrize("kind", ["missing", "not-zip", "no-package"])
def test_bad_wheel_is_a_clear_error(project, tmp_path, capsys, kind):
    wheel = tmp_path / "w.whl"
    if kind == "not-zip":
        wheel.write_text("not a zip")
    elif kind == "no-package":
        import zipfile

        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr("other/x.py", "x = 1\n")
    rc, out = te("apply", "--wheel", str(wheel), capsys=capsys)
    assert rc == 2 and "Traceback" not in out
    says = {
        "missing": "does not exist",
        "not-zip": "not a zip",
        "no-package": "no transformer_engine/",
    }
    assert says[kind] in out
    assert not (project / "fork").exists() and not (project / "fork.new").exists()


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


def test_force_over_a_stopped_rebuild_keeps_it_whole(three, project, upstream, capsys):
    move_upstream(project, upstream, CONFLICTING)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    assert (project / "fork.new").exists()  # stopped on patch 2, conflict markers in it
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2  # stops again on the same patch
    assert "fork.new/ moved whole to .te-series-backup/" in out
    (backup,) = (project / ".te-series-backup").iterdir()
    kept = backup / "fork.new"
    assert read_state(kept).failed == three.names()[1]
    assert "<<<<<<<" in (kept / "transformer_engine/pytorch/fuser.py").read_text()


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
    assert rc == 2 and "was made from these edits, so it holds them" in out, out
    save(project, "the edit")
    assert te("export")[0] == 0


def test_a_byte_order_mark_in_series_and_base_toml_is_read_past(three, project, upstream):
    """tool-review-v6 #12: an editor's BOM is no part of the first line."""
    for f in (three.series_file, project / "patches" / "base.toml"):
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    save(project, "BOMs")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    assert len(three.names()) == 3


def test_a_patch_file_holding_two_mails_stops_apply_naming_the_line(three, project, upstream,
                                                                   capsys):  # fmt: skip
    """tool-review-v6 #23: git am would make two commits of it."""
    first, second = three.paths()[1:]
    first.write_bytes(first.read_bytes() + second.read_bytes())
    three.series_file.write_text(three.series_file.read_text().replace(second.name + "\n", ""))
    second.unlink()
    save(project, "two mails in one file")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"{first.name} is 2 mails to git am" in out and "From 0000" in out, out


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


def test_a_crlf_series_keeps_its_line_ends(three, project, capsys):
    """tool-review-v6 #24."""
    three.series_file.write_bytes(three.series_file.read_bytes().replace(b"\n", b"\r\n"))
    save(project, "CRLF series")
    commit(project / "fork", {"tests/d.py": "D = 1\n"}, msg("Add d"))
    assert te("export")[0] == 0
    data = three.series_file.read_bytes()
    assert b"0004-PyTorch-Add-d.patch\r\n" in data and data.count(b"\n") == data.count(b"\r\n")


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
    assert draft.read_text() == "my draft\n"
    draft.rename(tmp_path / "draft.patch")  # the advice: move it out
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert (tmp_path / "draft.patch").read_text() == "my draft\n"


def test_continue_after_the_stopped_patch_file_was_fixed(three, project, upstream, capsys):
    """tool-review-v7 #5b: apply stopped on a damaged patch file, the file was fixed in
    patches/, and --continue said "resolve the conflicts" (there are none) and would have
    gone on with the old file. Its advice (abort that am, continue) applies the new file."""
    name = three.names()[1]
    path = three.dir / name
    good = path.read_bytes()
    path.write_bytes(good.replace(b' """Return values as a tuple."""', b" damaged context"))
    save(project, "damage")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    new = project / "fork.new"
    path.write_bytes(good)  # fixed, not committed yet
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 2 and f"patches/{name} changed since apply stopped on it" in out, out
    assert "Resolve the conflicts" not in out
    sh("git", "am", "--abort", cwd=new)  # the advice
    rc, out = te("apply", "--continue", capsys=capsys)
    assert rc == 0 and "(complete)" in out, out
    assert not new.exists()
    assert sh("git", "rev-list", "--count", "HEAD", cwd=project / "fork").strip() == "4"
