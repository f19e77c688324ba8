"""One git door (git.git_run): nothing in the user's git config or environment changes what
apply and export make. For each hostile setting or variable, a rebuild and an export are
byte-identical to a clean run: the same commits' trees in fork/, the same patch files."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from te_series import export as export_mod
from te_series.git import patch_ids
from te_series.series import read_patch
from te_series.worktree import read_state
from series_helpers import (
    commit,
    CONFLICTING,
    CRLF,
    FORK_CONFIG,
    fetch_pr_branches,
    fork_log,
    group_all,
    GOOD_CHANGE,
    GOOD_MSG,
    HOOK,
    make_series,
    move_upstream,
    msg,
    patch_bytes,
    RESOLVED,
    ROOT_DIR,
    save,
    sh,
    te,
    THREE,
    WHO,
)


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
    ("am", "messageid", "true"),  # v22 R1: one more Message-Id line in a message per round
]
# What the tool's own rebase must not follow: the patch names ride on notes.
HOSTILE_REBASE_CONFIG = [
    '[notes "rewrite"]\n\trebase = false\n',
    "[rebase]\n\tupdateRefs = true\n",  # tool-review-v13 #3: it moved the branch `mark`
    "[rebase]\n\tbackend = apply\n\tautoStash = true\n\tautoSquash = true\n",
    "[rerere]\n\tenabled = true\n\tautoUpdate = true\n",
]
HOSTILE_ENV = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
               "GIT_DIFF_OPTS"]  # fmt: skip
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
    mailed = three.dir / sorted(patch_bytes(three))[0]  # a patch as it came by mail
    mailed.write_bytes(mailed.read_bytes().replace(b"\n\n", b"\nMessage-Id: <1@x.org>\n\n", 1))
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
        "GIT_DIFF_OPTS": "--unified=0",  # zero context in every patch (tool-review-v8)
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
    before, fork = patch_bytes(three), project / "fork"
    sh("git", "branch", "mark", "HEAD~1", cwd=fork)  # a bookmark of mine
    mark = sh("git", "rev-parse", "mark", cwd=fork)
    new = commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    isolated.write_text(config)
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    isolated.write_text("")
    assert rc == 0, out
    assert three.base_commit == new and patch_bytes(three) == before
    assert sh("git", "rev-parse", "mark", cwd=fork) == mark


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


@pytest.mark.parametrize("key", ["ui", "diff"])
def test_a_colour_setting_leaves_the_patch_ids_alone(three, project, isolated, key):
    """v16 #3: color.diff=always (it wins over the pinned color.ui) coloured `git log -p`,
    its patch ids came out empty, and export took upstream's commit for one of ours."""
    fork = project / "fork"
    want = patch_ids(fork, "-3")
    isolated.write_text(f"[color]\n\t{key} = always\n")
    assert patch_ids(fork, "-3") == want and len(want) == 3


def test_a_fork_git_cannot_read_is_never_taken_for_the_projects_repository(three, project,
                                                                          capsys):  # fmt: skip
    """v16 #6: with an empty fork/.git/HEAD, git looked above fork/ and the tool worked on
    the project's own repository. Following the advice gets export past."""
    fork, before = project / "fork", patch_bytes(three)
    refs = sh("git", "for-each-ref", cwd=project)
    (fork / ".git" / "HEAD").write_text("")
    for verb in (("status",), ("export",), ("rebase", "--abort"), ("apply", "--force")):
        rc, out = te(*verb, capsys=capsys)
        assert "git cannot read it as a repository" in out and "Traceback" not in out, out
    assert sh("git", "for-each-ref", cwd=project) == refs and patch_bytes(three) == before
    fix = re.search(r"HEAD file: (printf .*?/\.git/HEAD);", out)[1]
    subprocess.run(fix, shell=True, check=True)
    assert te("export")[0] == 0 and patch_bytes(three) == before


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


def test_user_format_config_does_not_change_export(project, upstream, isolated):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    before = patch_bytes(series)
    isolated.write_text(
        "[diff]\n\tnoprefix = true\n\tsuppressBlankEmpty = true\n[format]\n\tsignature = me\n"
        "\tnumbered = true\n\tto = someone@example.com\n\theaders = X-Extra: 1\n"
    )
    export_mod.export(project / "fork", series)
    assert patch_bytes(series) == before


def test_gpgsign_user_config_does_not_break_apply(three, project, upstream, isolated):
    isolated.write_text("[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n")
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 0
    assert read_state(project / "fork").complete


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


@pytest.mark.parametrize("how", ["committed", "ignored"])
def test_attributes_in_the_forks_files_do_not_change_the_patches(three, project, capsys, how):
    """tool-review-v9 #1: a .gitattributes of fork/ (committed by a new commit, or untracked
    and hidden by info/exclude) made format-patch write every patch as a binary one."""
    fork = project / "fork"
    before = patch_bytes(three)
    if how == "committed":
        (fork / ".gitattributes").write_text("*.py -diff\n")
        sh("git", "add", ".gitattributes", cwd=fork)
        sh("git", "commit", "-q", "-m", msg("Add attributes"), cwd=fork)
    else:
        (fork / "transformer_engine" / ".gitattributes").write_text("*.py -diff\n")
        with open(fork / ".git" / "info" / "exclude", "a") as f:
            f.write(".gitattributes\n")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    after = patch_bytes(three)
    assert {n: after[n] for n in before} == before
    assert not any(b"GIT binary patch" in data for data in after.values())


def test_info_attributes_for_other_files_are_fine(three, project, capsys):
    fork = project / "fork"
    (fork / ".git" / "info" / "attributes").write_text("*.png binary\n*.py text eol=lf\n")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out


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


def test_carriage_returns_survive_a_rebuild(three, project, upstream, capsys):
    """git am strips CRs unless told to keep them; a rebuilt fork/ must hold what was exported."""
    move_upstream(project, upstream, {"docs/win.txt": CRLF})
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    fork = project / "fork"
    commit(fork, {"docs/win.txt": "a\r\nB\r\n", "docs/new.txt": CRLF}, msg("Edit CRLF files"))
    assert te("export")[0] == 0
    save(project, "export")
    capsys.readouterr()
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert (fork / "docs" / "win.txt").read_bytes() == b"a\r\nB\r\n"
    assert (fork / "docs" / "new.txt").read_bytes() == CRLF.encode()
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "would change" not in out and "unchanged" in out, out


def test_global_ignores_do_not_hide_a_new_file_from_export(three, project, isolated, tmp_path,
                                                           capsys):  # fmt: skip
    """tool-review-v8: core.excludesFile would hide a new file in fork/ from export's
    untracked-file refusal (and so from the series)."""
    ignores = tmp_path / "ignores"
    ignores.write_text("*.py\n")
    isolated.write_text(f"[core]\n\texcludesFile = {ignores}\n")
    (project / "fork" / "tests" / "new_test.py").write_text("x = 1\n")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "untracked files" in out and "tests/new_test.py" in out, out


def test_a_rebase_refuses_a_message_line_that_starts_with_a_hash_before_it_moves(
    project, upstream, isolated, capsys
):
    """tool-review-v11 #1: the tool's rebase --continue (and a user's commit.cleanup=strip in
    any rebase) ran git's message cleanup, which dropped every line starting with '#', and
    export wrote the cut message. The door pins the cleanup; v13 #4: export refuses such a
    line, as check does, and rebase runs export's guards before it moves, so it names the
    line with fork/ as it was; the reword it says, under the user's strip, gets past it."""
    series = make_series(project, upstream, THREE)
    name = series.names()[1]
    path = series.dir / name
    path.write_text(
        path.read_text().replace("\nLists", "\n#3410 caches the fused op lists.\nLists")
    )
    save(project, "a '#' line from elsewhere")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    fork = project / "fork"
    head = sh("git", "rev-parse", "HEAD", cwd=fork)
    commit(upstream, {"README": "news\n"}, "Upstream news")
    isolated.write_text("[commit]\n\tcleanup = strip\n")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"({name}): message line 3, '#3410 caches the fused op lists.'" in out, out
    assert sh("git", "rev-parse", "HEAD", cwd=fork) == head and not read_state(fork).rebase_onto
    (fix,) = re.findall(r"Fix each commit named in (git -C fork .* rebase -i \w+)", out)
    todo, edit = "sed -i '/Make route/s/^pick/reword/'", "sed -i 's/^#3410/PR #3410/'"
    sh(*shlex.split(fix), cwd=project, env={"GIT_SEQUENCE_EDITOR": todo, "GIT_EDITOR": edit})
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert "\nPR #3410 caches the fused op lists.\nLists" in path.read_text()


@pytest.mark.parametrize("config", [
    '[core]\n\tcommentChar = ";"\n',  # git's cleanup drops the ';' line: the message cut
    "[commit]\n\tcleanup = verbatim\n\tstatus = true\n",  # git's help text kept: added to
], ids=["cut", "added-to"])  # fmt: skip
def test_a_rebase_conflicts_continue_keeps_the_message_as_it_was(project, upstream, isolated,
                                                                 config, capsys):  # fmt: skip
    """tool-review-v11 #1, both ways: te-series rebase --continue after a conflict commits with
    an editor step (GIT_EDITOR=true), so git cleans the message as the user's config says:
    the default cuts every comment line (a '#' one; here commentChar ';', as export refuses
    '#' lines), `verbatim` keeps git's help text and a blank line. The door pins whitespace
    cleanup and no status text: the message stays byte for byte as the patch has it."""
    series = make_series(project, upstream, THREE)
    name = series.names()[1]
    path = series.dir / name
    path.write_text(path.read_text().replace("\nLists", "\n; the callers index them.\nLists"))
    save(project, "a ';' line")
    before = read_patch(path).message
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    isolated.write_text(config)
    commit(upstream, CONFLICTING, "Upstream returns sets")
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    (project / "fork/transformer_engine/pytorch/fuser.py").write_text(RESOLVED)
    sh("git", "add", "-A", cwd=project / "fork")
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0, out
    mine = sh("git", "log", "-1", "--format=%B", "HEAD~1", cwd=project / "fork")
    assert mine == before + "\n" and read_patch(path).message == before, mine


@pytest.mark.parametrize("where", ["info", "ignored", "config", "git-dir-elsewhere"])
def test_a_merge_driver_never_resolves_a_conflict_of_a_rebase(three, project, upstream, isolated,
                                                              capsys, where):  # fmt: skip
    """v26 #1: `merge=union` in fork/.git/info/attributes (or in a .gitattributes of fork/'s
    files, or merge.default=union in the user's config) let the rebase resolve a conflict by
    keeping both sides, and the patch changed with no stop; v27 #1: in the info/attributes of
    a git dir that fork/.git names. A driver in an attributes file is refused before git
    merges, and the advice, followed, gets to the conflict's stop; the config setting is
    pinned."""
    fork, before = project / "fork", patch_bytes(three)
    commit(upstream, CONFLICTING, "Upstream returns sets")
    git_dir = fork / ".git"
    if where == "git-dir-elsewhere":
        git_dir = (fork / ".git").rename(project.parent / "fork.git")
        (fork / ".git").write_text(f"gitdir: {git_dir}\n")
    attrs = {"info": ".git/info/attributes", "ignored": "transformer_engine/.gitattributes",
             "git-dir-elsewhere": git_dir / "info/attributes"}  # fmt: skip
    if where == "config":
        isolated.write_text("[merge]\n\tdefault = union\n")
    else:
        (fork / attrs[where]).write_text("# mine\n*.py merge=union\n")
        with open(git_dir / "info/exclude", "a") as f:
            f.write(".gitattributes\n")  # export refuses an untracked file not hidden
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    if where != "config":
        shown = attrs[where] if where == "git-dir-elsewhere" else f"fork/{attrs[where]}"
        assert rc == 2 and f"{shown}, line 2, sets a merge driver (merge=union)" in out, out
        assert patch_bytes(three) == before and "go on as te-series status says" in out
        (fork / attrs[where]).write_text("# mine\n")
        rc, out = te("status", capsys=capsys)
        assert "te-series rebase --continue" in out, out
        rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 2 and "conflicts in transformer_engine/pytorch/fuser.py" in out, out
    assert "<<<<<<< " in (fork / "transformer_engine/pytorch/fuser.py").read_text()
    assert patch_bytes(three) == before


def test_export_at_a_rebase_stop_says_the_continue_that_keeps_the_message(three, project,
                                                                          upstream, capsys):  # fmt: skip
    """v12 #1: export at a te-series rebase's conflict said git's own rebase --continue; it
    says te-series', whose git keeps the message as it was (no status text from the editor
    step, commit.status=false: whitespace cleanup would keep it)."""
    name = three.names()[1]
    before = read_patch(three.dir / name).message
    commit(upstream, CONFLICTING, "Upstream returns sets")
    assert te("rebase", "--onto", "main", "--te-src", str(upstream))[0] == 2
    (project / "fork" / "transformer_engine/pytorch/fuser.py").write_text(RESOLVED)
    sh("git", "add", "-A", cwd=project / "fork")
    rc, out = te("export", capsys=capsys)
    (go_on,) = re.search(r"Finish or abort it \((.+?), or --abort\)", out).groups()
    assert rc == 2 and go_on == "te-series rebase --continue", out
    rc, out = te(*shlex.split(go_on)[1:], capsys=capsys)
    assert rc == 0, out
    assert read_patch(three.dir / name).message == before


def test_a_signed_commit_and_log_show_signature_do_not_stop_a_rebase(three, project, upstream,
                                                                     isolated, tmp_path, capsys):  # fmt: skip
    """tool-review-v11 #2: with log.showSignature=true, git log printed a signature line
    before each signed commit, which rebase read as a commit id ("git diff-tree Good
    failed"), every time. The door pins it off: the rebase goes through."""
    if not shutil.which("ssh-keygen"):
        pytest.skip("needs ssh-keygen to sign a commit")
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed"
    allowed.write_text(f"dev@example.com {(tmp_path / 'key.pub').read_text()}")
    isolated.write_text(
        f'[user]\n\tsigningkey = {key}.pub\n[gpg]\n\tformat = ssh\n[gpg "ssh"]\n\t'
        f"allowedSignersFile = {allowed}\n[commit]\n\tgpgsign = true\n[log]\n\tshowSignature = true\n"
    )
    fork = project / "fork"
    commit(fork, {"tests/d.py": "D = 1\n"}, msg("A signed change"))
    assert "Good" in sh("git", "log", "-1", "--format=%H", cwd=fork)  # what git log prints
    commit(upstream, {"README": "news\n"}, "Upstream news")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0 and "add 0004-PyTorch-A-signed-change.patch" in out, out
    rc, out = te("status", capsys=capsys)
    assert "(complete)" in out and "not finished" not in out, out


def test_a_users_autocrlf_leaves_no_edits_in_fork_after_a_rebase(three, project, isolated,
                                                                 capsys):  # fmt: skip
    """tool-review-v12 #11: a global core.autocrlf=true made the user's rebase -i write CRLF
    files, which export (line ends not converted) refused as uncommitted edits, and its advice
    `git -C fork commit -a` found nothing to commit. fork/'s own config says no conversion."""
    isolated.write_text("[core]\n\tautocrlf = true\n")
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/", "GIT_EDITOR": "sed -i 1s/$/!/"}
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=project / "fork", env=env)
    assert sh("git", "status", "--short", cwd=project / "fork") == ""
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert b"\r" not in (project / "fork/tests/test_more.py").read_bytes()


# A locale whose charset is not UTF-8 (ASCII: C without Python's UTF-8 mode or coercion).
LEGACY = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
          "PYTHONPATH": str(ROOT_DIR / "src")}  # fmt: skip


def in_legacy_locale(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "te_series", *args], env={**os.environ,
                          **LEGACY}, capture_output=True, text=True, errors="replace")  # fmt: skip


def test_a_legacy_locale_reads_and_writes_messages_as_utf8(three, project, capsys):
    """tool-review-v19 F1: in a locale whose charset is not UTF-8 (Latin-1 there, ASCII here)
    git's output was decoded and its input encoded by the locale, mailinfo's as UTF-8: a
    non-ASCII message ended export in "internal error: UnicodeEncodeError", or was refused as
    one am reads back differently, and so was a series that exported fine in UTF-8. Export
    there writes what it writes in UTF-8, and then finds every patch unchanged."""
    who = {"GIT_AUTHOR_NAME": "Jürgen Müller", "GIT_AUTHOR_EMAIL": "jm@example.com"}
    fork = project / "fork"
    (fork / "transformer_engine/pytorch/other.py").write_text('"""Other."""\n\nVALUE = 3\n')
    sh("git", "commit", "-qam", msg("Note the fuser's naïve path", "A note → for readers."),
       cwd=fork, env=who)  # fmt: skip
    run = in_legacy_locale
    proc = run("export")
    assert proc.returncode == 0 and "add 0004-PyTorch-Note-the" in proc.stdout, proc.stderr
    written = patch_bytes(three)
    assert "A note → for readers.".encode() in written[three.names()[3]]
    rc, out = te("export", "--dry-run", capsys=capsys)  # in UTF-8: the same patches
    assert rc == 0 and out.count("unchanged") == 4, out
    proc = run("export", "--dry-run")
    assert proc.returncode == 0 and proc.stdout.count("unchanged") == 4, proc.stderr


def test_a_legacy_locale_resigns_a_non_ascii_message_for_pr(three, project, upstream, tmp_path):
    """v19 F1, pr: the message it signs off is read from git as UTF-8 and goes back to git
    as UTF-8 (it was written to a file in the locale's charset: a '→' ended pr in an
    internal error there)."""
    fork = project / "fork"
    (fork / "transformer_engine/pytorch/other.py").write_text('"""Other."""\n\nVALUE = 3\n')
    sh("git", "commit", "-qam", msg("Note the naïve path", "A note → for readers."), cwd=fork)
    assert te("export")[0] == 0
    group_all(three, project)
    proc = in_legacy_locale("pr", "--te-src", str(upstream), *WHO, "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    fetch_pr_branches(upstream, tmp_path / "o", tmp_path / "clone")
    said = sh("git", "log", "-1", "--format=%B", "pr/all", cwd=tmp_path / "clone")
    assert "A note → for readers.\n\nSigned-off-by: Jane Doe <jane@doe.dev>" in said, said


def test_a_non_english_git_gives_the_stop_its_file_and_hunk(three, project, upstream, capsys,
                                                            monkeypatch):  # fmt: skip
    """tool-review-v20 #11: with LANGUAGE=de the stop lost the file and hunk (the tool reads
    git's English) and passed on git am's own "git am --continue / --skip / --abort" hints.
    The tool's git speaks English, whatever the user's language."""
    move_upstream(project, upstream, CONFLICTING)
    monkeypatch.setenv("LANGUAGE", "de")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "does not apply: file transformer_engine/pytorch/fuser.py, hunk at" in out
    assert "git am --continue" not in out and "git am --skip" not in out, out

