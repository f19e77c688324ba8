"""One git door (git.git_run): nothing in the user's git config or environment changes what
apply and export make. For each hostile setting or variable, a rebuild and an export are
byte-identical to a clean run: the same commits' trees in fork/, the same patch files."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from series_helpers import ROOT_DIR, commit, msg, patch_bytes, save, sh, te

# Content that whitespace fixing, line-ending conversion and `git mailsplit` would change.
TRICKY = {
    "docs/NOTES.md": "hard break  \ntab\t \nCRLF\r\nlast\r\n",
    "transformer_engine/pytorch/crlf.py": "A = 1\r\nB = 2\r\n",
}

HOSTILE_CONFIG = [
    ("apply", "whitespace", "fix"),
    ("core", "autocrlf", "input"),
    ("core", "autocrlf", "true"),
    ("core", "safecrlf", "true"),
    ("color", "ui", "always"),
    ("am", "keepcr", "false"),
    ("am", "threeWay", "false"),
    ("mailinfo", "scissors", "true"),
]
# What the tool's own rebase must not follow: the patch names ride on notes.
HOSTILE_REBASE_CONFIG = [
    '[notes "rewrite"]\n\trebase = false\n',
]
HOSTILE_ENV = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"]
# git's variables that override the notes settings a rebase needs (tool-review-v7 #3)
HOSTILE_REBASE_ENV = [
    ("GIT_NOTES_REWRITE_REF", "refs/notes/commits"),
]


@pytest.fixture
def tricky(three, project, upstream):
    """THREE plus a patch of trailing spaces and CRLF lines, exported and committed clean."""
    fork = project / "fork"
    commit(fork, TRICKY, msg("Add notes", "Keep\ttabs  and\r\nCRs."))
    assert te("export")[0] == 0
    save(project)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    return patch_bytes(three), trees(fork)


def trees(fork) -> list[str]:
    return sh("git", "log", "--format=%T %s", "series", cwd=fork).splitlines()


def rebuild_and_export(project, upstream):
    rc = te("apply", "--force", "--te-src", str(upstream))[0]
    assert rc == 0
    assert te("export")[0] == 0


@pytest.mark.parametrize("section,key,value", HOSTILE_CONFIG)
def test_a_hostile_setting_changes_nothing(tricky, three, project, upstream, isolated,
                                           section, key, value):  # fmt: skip
    want_patches, want_trees = tricky
    isolated.write_text(f"[{section}]\n\t{key} = {value}\n")
    rebuild_and_export(project, upstream)
    isolated.write_text("")
    assert trees(project / "fork") == want_trees
    assert patch_bytes(three) == want_patches


@pytest.mark.parametrize("var", HOSTILE_ENV)
def test_a_hostile_environment_changes_nothing(tricky, three, project, upstream, monkeypatch,
                                               var):  # fmt: skip
    """As in a hook of the project's own repository, which git runs with these set."""
    want_patches, want_trees = tricky
    git_dir = project / ".git"
    value = {
        "GIT_DIR": git_dir,
        "GIT_WORK_TREE": project,
        "GIT_INDEX_FILE": git_dir / "index",
        "GIT_OBJECT_DIRECTORY": git_dir / "objects",
    }[var]
    index = (git_dir / "index").read_bytes()
    with monkeypatch.context() as m:
        m.setenv(var, str(value))
        rebuild_and_export(project, upstream)
    assert trees(project / "fork") == want_trees
    assert patch_bytes(three) == want_patches
    assert (git_dir / "index").read_bytes() == index  # the project's own index untouched


@pytest.mark.parametrize("config", HOSTILE_REBASE_CONFIG)
def test_a_hostile_setting_changes_nothing_in_a_rebase(three, project, upstream, isolated,
                                                       capsys, config):  # fmt: skip
    before = patch_bytes(three)
    new = commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    isolated.write_text(config)
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    isolated.write_text("")
    assert rc == 0, out
    assert three.base_commit == new and patch_bytes(three) == before


@pytest.mark.parametrize("var,value", HOSTILE_REBASE_ENV)
def test_a_hostile_environment_changes_nothing_in_a_rebase(three, project, upstream, capsys,
                                                           monkeypatch, var, value):  # fmt: skip
    before = patch_bytes(three)
    new = commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    with monkeypatch.context() as m:
        m.setenv(var, value)
        rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert three.base_commit == new and patch_bytes(three) == before


def test_patches_gitattributes_keep_carriage_returns_under_any_autocrlf(tmp_path, isolated):
    """tool-review-v6 #3, issue 17 item 2: this project's patches/.gitattributes makes patch
    files bytes, so committing one and checking it out again keeps its CRs."""
    repo = tmp_path / "repo"
    (repo / "patches").mkdir(parents=True)
    shutil.copy(ROOT_DIR / "patches" / ".gitattributes", repo / "patches" / ".gitattributes")
    data = b"From 0000 Mon Sep 17 00:00:00 2001\n+a\r\n+b\r\n"
    (repo / "patches" / "0001-x.patch").write_bytes(data)
    isolated.write_text("[core]\n\tautocrlf = input\n")
    sh("git", "init", "-q", cwd=repo)
    sh("git", "add", "-A", cwd=repo)
    sh("git", "commit", "-q", "-m", "x", cwd=repo)
    blob = subprocess.run(["git", "show", "HEAD:patches/0001-x.patch"], cwd=repo,
                          capture_output=True, check=True).stdout  # fmt: skip
    assert blob == data
    isolated.write_text("[core]\n\tautocrlf = true\n")
    sh("git", "clone", "-q", str(repo), str(tmp_path / "clone"), cwd=tmp_path)
    assert (tmp_path / "clone" / "patches" / "0001-x.patch").read_bytes() == data


def test_apply_says_a_patch_file_has_crlf_line_ends_and_how_to_restore_it(
    three, project, upstream, capsys
):
    """tool-review-v6 #6: a checkout with core.autocrlf=true (before patches/.gitattributes)
    gave the patch files CRLF line ends; apply says so, and its advice gets past it."""
    shutil.copy(ROOT_DIR / "patches" / ".gitattributes", project / "patches" / ".gitattributes")
    save(project, "patches are bytes")
    before = patch_bytes(three)
    for p in three.paths():
        p.write_bytes(p.read_bytes().replace(b"\n", b"\r\n"))
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "CRLF line ends" in out and three.names()[0] in out, out
    advice = "git rm -r -q --cached patches && git checkout HEAD -- patches"
    assert advice in out
    subprocess.run(advice, shell=True, cwd=project, check=True)
    assert patch_bytes(three) == before
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
