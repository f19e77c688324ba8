"""Guards added after the fourth adversarial review (N rows of its table)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from te_series.check import lint
from series_helpers import (
    ROOT_DIR,
    CONFLICTING,
    commit,
    move_upstream,
    msg,
    patch_bytes,
    save,
    sh,
    te,
)


def fork_log(fork: Path, fmt: str = "%B") -> str:
    return sh("git", "log", f"--format={fmt}", "-1", cwd=fork)


# --------------------------------------------------------------------------- N1


@pytest.mark.parametrize("where", ["xdg", "home", "fork-config"])
def test_export_ignores_the_users_git_attributes(three, project, tmp_path, monkeypatch, where):
    attrs = tmp_path / "attrs"
    attrs.write_text("*.py -diff\n")
    if where == "xdg":
        (tmp_path / "xdg" / "git").mkdir(parents=True)
        (tmp_path / "xdg" / "git" / "attributes").write_text("*.py diff=foo\n*.py -diff\n")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    elif where == "home":
        (tmp_path / "home" / ".config" / "git").mkdir(parents=True)
        (tmp_path / "home" / ".config" / "git" / "attributes").write_text("*.py -diff\n")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    else:
        sh("git", "config", "core.attributesFile", str(attrs), cwd=project / "fork")
    before = patch_bytes(three)
    rc, _ = te("export")
    assert rc == 0
    assert patch_bytes(three) == before
    assert not any(b"GIT binary patch" in data for data in before.values())


@pytest.mark.parametrize("line", ["*.py -diff", "*.py binary", "*.py diff=foo"])
def test_export_refuses_info_attributes_that_change_the_diff(three, project, capsys, line):
    fork = project / "fork"
    sh("git", "config", "diff.foo.xfuncname", "^(zzz)$", cwd=fork)
    (fork / ".git" / "info" / "attributes").write_text(f"# mine\n{line}\n")
    before = patch_bytes(three)
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    assert "fork/.git/info/attributes sets the diff attribute" in out
    assert "transformer_engine/pytorch/other.py: diff" in out
    assert patch_bytes(three) == before


def test_info_attributes_for_other_files_are_fine(three, project, capsys):
    fork = project / "fork"
    (fork / ".git" / "info" / "attributes").write_text("*.png binary\n*.py text eol=lf\n")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out


def test_check_reports_a_binary_patch(three, project, tmp_path):
    """A patch written as binary (git attributes at export time) is named by check."""
    fork = project / "fork"
    attrs = tmp_path / "attrs"
    attrs.write_text("*.py -diff\n")
    name = three.names()[0]
    data = sh(
        "git", "-c", f"core.attributesFile={attrs}", "format-patch", "-1", "--binary",
        "--stdout", "HEAD~2", cwd=fork,
    )  # fmt: skip
    assert "GIT binary patch" in data
    (three.dir / name).write_text(data)
    problems = lint(three)
    assert any(p.startswith(f"{name}: a binary diff") for p in problems), problems


# --------------------------------------------------------------------------- N3

HOOK = '#!/bin/sh\necho "Change-Id: I1234" >> "$1"\n'


@pytest.mark.parametrize("how", ["hooksPath", "templateDir"])
def test_apply_runs_none_of_the_users_hooks(three, project, upstream, isolated, tmp_path, how):
    hooks = tmp_path / "tpl" / "hooks"
    hooks.mkdir(parents=True)
    for hook, body in (("applypatch-msg", HOOK), ("pre-applypatch", "#!/bin/sh\nexit 1\n")):
        (hooks / hook).write_text(body)
        (hooks / hook).chmod(0o755)
    key = (
        ("core.hooksPath", str(hooks))
        if how == "hooksPath"
        else ("init.templateDir", str(hooks.parent))
    )
    sh("git", "config", "-f", str(isolated), *key, cwd=tmp_path)
    before = patch_bytes(three)
    rc, _ = te("apply", "--force", "--te-src", str(upstream))
    assert rc == 0
    assert "Change-Id" not in fork_log(project / "fork")
    rc, _ = te("export")
    assert rc == 0 and patch_bytes(three) == before


# --------------------------------------------------------------------------- N2


@pytest.mark.parametrize("key", ["i18n.logOutputEncoding", "i18n.commitEncoding"])
def test_non_ascii_authors_survive_an_encoding_setting(three, project, upstream, isolated, key):
    fork = project / "fork"
    author = {"GIT_AUTHOR_NAME": "Jöhn Dœ", "GIT_AUTHOR_EMAIL": "j@corp.com"}
    (fork / "docs").mkdir()
    (fork / "docs" / "naïve é.md").write_text("hi\n")
    sh("git", "add", "docs", cwd=fork)
    sh("git", "commit", "-q", "-m", msg("Naïve fix — ünïcode"), cwd=fork, env=author)
    assert te("export")[0] == 0
    save(project, "unicode")
    before = patch_bytes(three)
    # In fork/'s config (export) and in the user's global config (apply's git am).
    sh("git", "config", key, "ISO-8859-1", cwd=fork)
    assert te("export")[0] == 0
    assert patch_bytes(three) == before
    sh("git", "config", "-f", str(isolated), key, "ISO-8859-1", cwd=project)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    got = sh("git", "-c", f"{key}=UTF-8", "log", "-1", "--format=%an | %s", cwd=fork)
    assert got.strip() == "Jöhn Dœ | [PyTorch] Naïve fix — ünïcode"
    assert te("export")[0] == 0
    assert patch_bytes(three) == before


# --------------------------------------------------------------------------- N5

SPACED = "0002 route é.patch"


def rename_patch_2(three, project) -> list[str]:
    """Give patch 2 a file name with spaces (and a non-ASCII letter); return the names."""
    names = three.names()
    sh("git", "mv", f"patches/{names[1]}", f"patches/{SPACED}", cwd=project)
    three.series_file.write_text(three.series_file.read_text().replace(names[1], SPACED))
    save(project, "spaced name")
    return three.names()


def test_a_patch_name_with_spaces_is_one_name(three, project, upstream, capsys):
    names = rename_patch_2(three, project)
    assert names[1] == SPACED
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    capsys.readouterr()
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0, out
    assert f"rename {SPACED} -> 0002-PyTorch-Make-route-return-a-list.patch\n" in out


def test_suggested_drop_commands_are_quoted(three, project, upstream, capsys):
    rename_patch_2(three, project)
    move_upstream(project, upstream, CONFLICTING)
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "export then needs --drop '0002 route é.patch'" in out
    rc, out = te("apply", "--continue", "--skip", capsys=capsys)
    assert rc == 0 and "say --drop '0002 route é.patch'" in out
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    command = out.split("say so: ")[1].split(". Otherwise")[0]
    assert command == "te-series export --drop '0002 route é.patch'"
    rc, out = te(*shlex.split(command)[1:], capsys=capsys)
    assert rc == 0, out
    assert SPACED not in three.names()


# --------------------------------------------------------------------------- N6


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


# --------------------------------------------------------------------------- N7


def test_status_does_not_count_skipped_patches_as_applied(three, project, upstream, capsys):
    names = three.names()
    move_upstream(project, upstream, {**CONFLICTING, "tests/test_more.py": "X = 1\n"})
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 2
    assert te("apply", "--continue", "--skip")[0] == 2  # patch 3 stops too
    rc, out = te("status", capsys=capsys)
    assert f"fork.new/: 1 of 3 patch(es) of patches/ applied, 1 skipped, last {names[0]}" in out
    assert te("apply", "--continue", "--skip")[0] == 0
    rc, out = te("status", capsys=capsys)
    assert "fork/: 1 of 3 patch(es) of patches/ applied, 2 skipped (complete; skipped" in out


# --------------------------------------------------------------------------- N8


@pytest.mark.parametrize("where", ["patches/x", "fork/sub", "link/sub"])
def test_pr_out_is_never_inside_the_series_or_a_work_tree(three, project, upstream, capsys, where):
    group_all(three, project)
    (project / "link").symlink_to(project / "fork")
    out = project / where
    rc, said = te("pr", "--te-src", str(upstream), "--out", str(out), *WHO, capsys=capsys)
    assert rc == 2 and "which te-series keeps" in said
    assert not out.exists()


def test_pr_removes_only_files_it_wrote(three, project, upstream, tmp_path, capsys):
    group_all(three, project)
    out = tmp_path / "pr-out"
    assert te("pr", "--te-src", str(upstream), "--out", str(out), *WHO)[0] == 0
    wrote = sorted(p.relative_to(out) for p in out.rglob("*"))
    (out / "all" / "notes.txt").write_text("mine\n")
    rc, said = te("pr", "--te-src", str(upstream), "--out", str(out), *WHO, capsys=capsys)
    assert rc == 2 and "te-series pr did not write: all/notes.txt" in said
    assert (out / "all" / "notes.txt").read_text() == "mine\n"
    (out / "all" / "notes.txt").unlink()
    assert te("pr", "--te-src", str(upstream), "--out", str(out), *WHO)[0] == 0
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == wrote


WHO = ("--identity", "Jane Doe <jane@doe.dev>")


def group_all(three, project) -> None:
    """One `# pr: all` group with its description."""
    three.series_file.write_text("# pr: all\n" + "\n".join(three.names()) + "\n")
    (three.dir / "pr").mkdir()
    (three.dir / "pr" / "all.md").write_text(
        "# Description\n\nx\n\nFixes # (issue)\n\n## Type of change\n\n## Changes\n\n"
        "# Checklist\n"
    )
    save(project, "group")


# --------------------------------------------------------------------------- N10


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


# --------------------------------------------------------------------------- N11


def test_apply_says_a_patch_has_no_diff(three, project, upstream, capsys):
    first = three.names()[0]
    text = (three.dir / first).read_text()
    empty = "0004-PyTorch-Nothing.patch"
    (three.dir / empty).write_text(
        text.split("\n---\n")[0].replace("Raise VALUE", "Nothing") + "\n---\n2.39.5\n\n"
    )
    three.series_file.write_text(three.series_file.read_text() + empty + "\n")
    save(project, "empty patch")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"patch {empty} has no diff (an empty patch)" in out
    assert "remove its line from patches/series" in out and "--continue --skip" in out
    assert "no conflict markers" not in out


# --------------------------------------------------------------------------- N4


def test_a_commit_that_lost_its_note_is_named_not_dropped(three, project, capsys):
    names = three.names()
    fork = project / "fork"
    sh("git", "notes", "--ref=te-series", "remove", "HEAD", cwd=fork)
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
