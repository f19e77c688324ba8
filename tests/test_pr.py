"""te-series pr: stacked PR branches, re-signed by the submitter."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from series_helpers import fetch_pr_branches, group_all, PLACEHOLDER, save, sh, te, WHO


TEMPLATE = """# Description

{what}

Fixes # (issue)

## Type of change

- [x] Bug fix (non-breaking change which fixes an issue)

## Changes

- {what}

# Checklist:

- [x] I have read and followed the contributing guidelines
"""


def group(three, project) -> None:
    a, b, c = three.names()
    three.series_file.write_text(f"# Our PRs.\n# pr: values\n{a}\n{b}\n\n# pr: tests\n{c}\n")
    (three.dir / "pr").mkdir()
    for slug in ("values", "tests"):
        (three.dir / "pr" / f"{slug}.md").write_text(TEMPLATE.format(what=slug))
    save(project, "group")


@pytest.mark.parametrize("who", [None, PLACEHOLDER])
def test_pr_refuses_without_identity_or_with_placeholder(three, project, upstream, capsys, who):
    group(three, project)
    if who:
        name, email = who[:-1].split(" <")
        sh("git", "config", "user.name", name, cwd=project)
        sh("git", "config", "user.email", email, cwd=project)
    rc, out = te("pr", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert ("placeholder identity" if who else "no submitter identity") in out
    assert not (project / "pr-out").exists()


def test_pr_stacked_branches_resigned_with_descriptions(three, project, upstream, capsys, tmp_path):
    group(three, project)
    # A commit with another trailer, which must stay.
    fork = project / "fork"
    env = {
        "GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/",
        "GIT_EDITOR": r"sed -i 's/^Signed-off-by/Reviewed-by: Rev <rev@example.com>\nSigned-off-by/'",
    }
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=env)
    assert te("export")[0] == 0
    save(project)
    sh("git", "config", "user.name", "Jane Dev", cwd=project)
    sh("git", "config", "user.email", "jane@doe.dev", cwd=project)
    rc, out = te("pr", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    out_dir = project / "pr-out"
    assert (out_dir / "values.md").read_text() == TEMPLATE.format(what="values")
    assert (out_dir / "tests.md").exists()
    summary = (out_dir / "SUMMARY.md").read_text()
    assert "| pr/values | main (upstream " in summary and "| pr/tests | pr/values | 1 |" in summary
    # Fetch the bundle into a TE checkout, as a contributor would.
    te_clone = tmp_path / "te"
    fetch_pr_branches(upstream, out_dir, te_clone)
    base = three.base_commit
    assert sh("git", "rev-list", "--count", f"{base}..pr/values", cwd=te_clone).strip() == "2"
    assert sh("git", "rev-list", "--count", f"{base}..pr/tests", cwd=te_clone).strip() == "3"
    assert sh("git", "merge-base", "--is-ancestor", "pr/values", "pr/tests", cwd=te_clone) == ""
    log = sh("git", "log", "--format=%an <%ae>|%cn|%B%x00", f"{base}..pr/tests", cwd=te_clone)
    for entry in filter(str.strip, log.split("\0")):
        # W2: the patches' real author (Dev) stays; the submitter commits and signs off.
        assert entry.strip().startswith("Dev <dev@example.com>|Jane Dev|")
        assert "Signed-off-by: Jane Dev <jane@doe.dev>" in entry
        assert PLACEHOLDER not in entry
    assert log.count("Reviewed-by: Rev <rev@example.com>") == 1
    assert len(list((out_dir / "tests").glob("*.patch"))) == 1
    # Run again (replaces its own output); a foreign folder is refused.
    assert te("pr", "--te-src", str(upstream))[0] == 0
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine\n")
    rc, out = te("pr", "--te-src", str(upstream), "--out", str(foreign), capsys=capsys)
    assert rc == 2 and "not written by te-series pr" in out
    assert (foreign / "keep.txt").exists()


def run_pr(project, upstream, capsys, *extra, who="Jane Doe <jane@doe.dev>"):
    return te("pr", "--te-src", str(upstream), "--identity", who, *extra, capsys=capsys)


def pr_log(project) -> str:
    """Authors, committers and raw messages of the PR commits (all branches)."""
    out = project / "pr-out"
    clone = project.parent / "prclone"
    if not clone.exists():
        sh("git", "clone", "-q", str(project.parent / "upstream"), str(clone), cwd=project.parent)
    sh("git", "fetch", "-q", str(out / "pr.bundle"), "+refs/heads/pr/*:refs/heads/pr/*", cwd=clone)
    log = ["git", "log", "--format=%an <%ae>|%cn <%ce>|%B%x00", "origin/main..pr/tests"]
    return sh(*log, cwd=clone)


def test_pr_removes_placeholder_sign_offs_left_in_the_body(three, project, upstream, capsys):
    group(three, project)
    a, b, c = three.names()
    fork = project / "fork"
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 2s/^pick/squash/", "GIT_EDITOR": "true"}
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=env)
    assert te("export", "--drop", b)[0] == 0
    save(project, "squash")
    from te_series import check as check_mod

    assert "stands in the body" in "\n".join(check_mod.lint(three))
    rc, out = run_pr(project, upstream, capsys)
    assert rc == 0, out
    log = pr_log(project)
    assert "maintainers@example.invalid" not in log
    assert log.count("Signed-off-by: Jane Doe <jane@doe.dev>") == 2


@pytest.mark.parametrize(
    "variant",
    ["Signed-off-by: Project maintainers <MAINTAINERS@example.invalid>",
     "Signed-off-by:  Project  maintainers <maintainers@example.invalid.>"],
)  # fmt: skip
def test_pr_replaces_placeholder_variants(three, project, upstream, capsys, variant):
    group(three, project)
    path = three.dir / three.names()[1]
    path.write_text(path.read_text().replace(f"Signed-off-by: {PLACEHOLDER}", variant))
    save(project, "variant")
    rc, out = run_pr(project, upstream, capsys)
    assert rc == 0, out
    assert "maintainers@example.invalid" not in pr_log(project).lower()


def test_pr_refuses_commits_that_still_name_the_placeholder(three, project, upstream, capsys):
    group(three, project)
    path = three.dir / three.names()[2]
    path.write_text(
        path.read_text().replace(
            f"Signed-off-by: {PLACEHOLDER}",
            f"Co-authored-by: {PLACEHOLDER}\nSigned-off-by: D <d@x.org>",
        )
    )
    save(project, "co-author")
    rc, out = run_pr(project, upstream, capsys)
    assert rc == 2 and "still name the project's placeholder identity" in out
    assert "Co-authored-by: Project maintainers" in out
    assert not (project / "pr-out").exists()


def test_pr_keeps_real_authors_and_replaces_the_placeholder_author(
    three, project, upstream, capsys
):
    group(three, project)
    name, email = PLACEHOLDER[:-1].split(" <")
    path = three.dir / three.names()[0]
    path.write_text(path.read_text().replace("From: Dev <dev@example.com>", f"From: {PLACEHOLDER}"))
    save(project, "authors")
    rc, out = run_pr(project, upstream, capsys)
    assert rc == 0, out
    authors = [e.split("|")[0].strip() for e in pr_log(project).split("\0") if e.strip()]
    assert authors == ["Dev <dev@example.com>", "Dev <dev@example.com>", "Jane Doe <jane@doe.dev>"]
    assert "authors: Jane Doe <jane@doe.dev> (1), Dev <dev@example.com> (2)" in out


@pytest.mark.parametrize(
    "who, says",
    [
        ("Somebody <Maintainers@Example.Invalid.>", "placeholder identity"),
        ("Jane Doe <jane@corp.example>", "reserved domain"),
        ("Jane Doe <jane@x.invalid>", "reserved domain"),
    ],
)
def test_pr_refuses_placeholder_lookalikes_and_reserved_domains(
    three, project, upstream, capsys, who, says
):
    group(three, project)
    rc, out = run_pr(project, upstream, capsys, who=who)
    assert rc == 2 and says in out
    assert not (project / "pr-out").exists()


def test_pr_summary_quotes_paths_and_messages_end_cleanly(three, project, upstream, capsys):
    group(three, project)
    out_dir = project.parent / "pr out"
    rc, out = run_pr(project, upstream, capsys, "--out", str(out_dir))
    assert rc == 0, out
    summary = (out_dir / "SUMMARY.md").read_text()
    assert f"git fetch '{out_dir}/pr.bundle'" in summary
    clone = project.parent / "c"
    fetch_pr_branches(upstream, out_dir, clone)
    for rev in sh("git", "rev-list", "origin/main..pr/tests", cwd=clone).split():
        raw = sh("git", "cat-file", "commit", rev, cwd=clone)
        if "Signed-off-by" in raw:
            assert raw.endswith("Signed-off-by: Jane Doe <jane@doe.dev>\n"), raw


def test_pr_refuses_to_overwrite_an_output_file_edited_since(three, project, upstream, capsys,
                                                             tmp_path):  # fmt: skip
    """tool-review-v6 #4: pr-out/ is git-ignored, so an overwritten edit is gone for good."""

    group_all(three, project)
    out = tmp_path / "po"
    assert te("pr", "--te-src", str(upstream), "--out", str(out), *WHO)[0] == 0
    md = next(p for p in out.glob("*.md") if p.name != "summary.md")
    md.write_text(md.read_text() + "EDITED\n")
    rc, said = te("pr", "--te-src", str(upstream), "--out", str(out), *WHO, capsys=capsys)
    assert rc == 2 and md.name in said and "changed since te-series pr wrote it" in said, said
    assert "EDITED" in md.read_text()
    md.unlink()  # the advice: keep the edit elsewhere, delete the file
    assert te("pr", "--te-src", str(upstream), "--out", str(out), *WHO)[0] == 0
    assert md.is_file() and "EDITED" not in md.read_text()


@pytest.mark.parametrize("edit", ["patch", "untracked"])
def test_pr_refuses_a_symlinked_folder_in_its_output(three, project, upstream, capsys, tmp_path,
                                                     edit):  # fmt: skip
    """tool-review-v7 #1: a sub-folder of pr-out/ that is a link to another folder was not
    walked, so an edited patch in it was overwritten and a file of yours went unseen."""

    group_all(three, project)
    out = tmp_path / "po"
    assert te("pr", "--te-src", str(upstream), "--out", str(out), *WHO)[0] == 0
    elsewhere = tmp_path / "elsewhere"
    (out / "all").rename(elsewhere)
    (out / "all").symlink_to(elsewhere)
    mine = next(elsewhere.glob("*.patch")) if edit == "patch" else elsewhere / "notes.txt"
    mine.write_text("hand-edited before sending\n")
    rc, said = te("pr", "--te-src", str(upstream), "--out", str(out), *WHO, capsys=capsys)
    assert rc == 2 and "all is a symbolic link" in said and "Remove the link" in said, said
    assert mine.read_text() == "hand-edited before sending\n"
    (out / "all").unlink()  # the advice: remove the link
    assert te("pr", "--te-src", str(upstream), "--out", str(out), *WHO)[0] == 0
    assert mine.read_text() == "hand-edited before sending\n"
    assert (out / "all").is_dir() and not (out / "all").is_symlink()


@pytest.mark.parametrize("given", [False, True])
def test_pr_out_a_link_to_nothing_is_named_and_making_its_folder_gets_past(
    three, project, upstream, capsys, tmp_path, given
):  # fmt: skip
    """v28 #6: pr-out a link to a folder that is not there (a disk not mounted) gave "File
    exists ... free space or a permission". v32 #4: given as --out, the link was resolved
    when parsed, and pr made the folders it names and wrote there."""
    group_all(three, project)
    target = tmp_path / "disk" / "pr-out"
    (project / "pr-out").symlink_to(target)
    out = ("--out", str(project / "pr-out")) if given else ()
    if given:
        with pytest.raises(SystemExit) as e:
            te("pr", "--te-src", str(upstream), *WHO, *out)
        said = capsys.readouterr().err
        assert e.value.code == 2 and not target.exists(), said
    else:
        rc, said = te("pr", "--te-src", str(upstream), *WHO, capsys=capsys)
        assert rc == 2, said
    assert "is a link to nothing" in said and "make or mount" in said, said
    target.mkdir(parents=True)  # the advice: make the folder it names
    assert te("pr", "--te-src", str(upstream), *WHO, *out)[0] == 0
    assert (target / "SUMMARY.md").is_file()


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


# te-series pr in a process of its own, SIGKILLed at its K-th file copy (shutil.copyfile).
KILLED_AT_COPY = """
import os, shutil, signal, sys
from te_series import cli
copyfile, n = shutil.copyfile, [0]
def dies(*args, **kwargs):
    n[0] += 1
    if n[0] == int(os.environ["KILL_AT"]):
        os.kill(os.getpid(), signal.SIGKILL)
    return copyfile(*args, **kwargs)
shutil.copyfile = dies
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("k", [1, 2, 4, 7])
def test_a_killed_pr_leaves_its_output_its_own(three, project, upstream, tmp_path, k):
    """v26 #3: pr SIGKILLed while it wrote OUT left its record of what it wrote empty, and
    the next pr refused pr's own files as "files te-series pr did not write"."""
    group_all(three, project)
    out = tmp_path / "pr-out"
    args = ["pr", "--te-src", str(upstream), "--out", str(out), *WHO]
    assert te(*args)[0] == 0
    wrote = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    env = {**os.environ, "KILL_AT": str(k), "TE_SERIES_ROOT": str(project)}
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_COPY, *args], env=env, cwd=project,
                            capture_output=True, check=False)  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    assert te(*args)[0] == 0
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == wrote


def test_pr_marker_cannot_remove_files_outside_out(three, project, upstream, tmp_path):
    group_all(three, project)
    out = tmp_path / "po"
    out.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep\n")
    series = three.series_file
    (out / ".te-series-pr").write_text(
        "written by te-series pr; the next run replaces these files:\n"
        f"../precious.txt\n{series}\n"
    )
    assert te("pr", "--te-src", str(upstream), "--out", str(out), *WHO)[0] == 0
    assert precious.read_text() == "keep\n" and series.is_file()


def test_pr_builds_a_pr_on_main_without_the_earlier_prs_commits(three, project, upstream,
                                                                capsys, tmp_path):  # fmt: skip
    """issue 26 item 2: `# pr: tests on main` is built from the upstream base alone, and
    SUMMARY.md names each PR's base."""
    group(three, project)
    path = three.series_file
    path.write_text(path.read_text().replace("# pr: tests", "# pr: tests on main"))
    save(project, "tests on main")
    rc, out = te("pr", "--te-src", str(upstream), *WHO, capsys=capsys)
    assert rc == 0, out
    assert "pr/tests on main: 0003-PyTorch-Test-more.patch" in out, out
    summary = (project / "pr-out" / "SUMMARY.md").read_text()
    assert "| pr/values | main (upstream " in summary and "| pr/tests | main (upstream " in summary
    clone = tmp_path / "te"
    fetch_pr_branches(upstream, project / "pr-out", clone)
    base = three.base_commit
    log = sh("git", "log", "--format=%s", f"{base}..pr/tests", cwd=clone).splitlines()
    assert log == ["[PyTorch] Test more"], log
    assert sh("git", "rev-list", "--count", f"{base}..pr/values", cwd=clone).strip() == "2"
    assert len(list((project / "pr-out" / "tests").glob("*.patch"))) == 1


def test_pr_keeps_a_last_hash_paragraph_above_the_sign_off(three, project, upstream, capsys,
                                                          tmp_path):  # fmt: skip
    """tool-review-v12 #2: git's trailer code took a last `#` paragraph for a comment and put
    the new sign-off above it. (Export refuses such a line since v13 #4, as check does: the
    patch comes from elsewhere.)"""
    group(three, project)
    path = three.dir / three.names()[-1]
    text = path.read_text()
    at = text.index("\nSigned-off-by: ") + 1
    path.write_text(
        text[:at] + "#3320 review thread: the example follows its guide.\n\n" + text[at:]
    )
    save(project, "a last # paragraph")
    rc, out = run_pr(project, upstream, capsys)
    assert rc == 0, out
    last = pr_log(project).split("\0")[0].strip()
    assert last.endswith("#3320 review thread: the example follows its guide.\n\n"
                         "Signed-off-by: Jane Doe <jane@doe.dev>"), last  # fmt: skip


TRAILER_CONFIG = [
    "[trailer]\n\tifMissing = doNothing\n",
    "[trailer]\n\twhere = start\n",
    "[trailer]\n\tifExists = replace\n",
    "[trailer]\n\tseparators = =\n",
    '[trailer "sign"]\n\tkey = Signed-off-by\n\twhere = start\n',
]


@pytest.mark.parametrize("config", TRAILER_CONFIG)
def test_the_users_trailer_config_changes_no_pr_commit_and_no_check(three, project, upstream,
                                                                     capsys, isolated, config):  # fmt: skip
    """tool-review-v12 #3: with trailer.ifMissing=doNothing no PR commit was signed off; with
    trailer.separators check told to remove the sign-off."""
    from te_series import check as check_mod

    group(three, project)
    a, b, c = three.names()
    path = three.dir / b  # a commit with another trailer, which must stay where it is
    path.write_text(path.read_text().replace(
        f"Signed-off-by: {PLACEHOLDER}", f"Reviewed-by: Rev <rev@example.com>\nSigned-off-by: {PLACEHOLDER}"))  # fmt: skip
    save(project, "a reviewer")
    lint = check_mod.lint(three)
    assert run_pr(project, upstream, capsys)[0] == 0
    want = pr_log(project)
    isolated.write_text(config)
    assert check_mod.lint(three) == lint
    rc, out = run_pr(project, upstream, capsys)
    assert rc == 0, out
    assert pr_log(project) == want
    assert want.count("Signed-off-by: Jane Doe <jane@doe.dev>") == 3


def test_pr_keeps_a_carriage_return_in_a_message(three, project, upstream, capsys):
    """tool-review-v20 #8: git's output was read with universal newlines, so a carriage
    return inside a commit message came back as a line break, and pr posted a commit whose
    message differs from the patch (which export and git am keep byte for byte)."""
    group(three, project)
    path = three.dir / three.names()[-1]
    text = path.read_bytes()
    at = text.index(b"\nSigned-off-by: ") + 1
    path.write_bytes(text[:at] + b"Line with a\rcarriage return inside.\n\n" + text[at:])
    save(project, "a carriage return")
    rc, out = run_pr(project, upstream, capsys)
    assert rc == 0, out
    pr_log(project)  # fetches the branches into the clone
    msg = subprocess.run(["git", "log", "-1", "--format=%B", "pr/tests"], cwd=project.parent /
                         "prclone", capture_output=True, check=True).stdout  # fmt: skip
    assert b"Line with a\rcarriage return inside.\n" in msg, msg


def test_a_stopped_pr_runs_part_file_is_no_file_of_yours(three, project, upstream, capsys):
    """v35 #3: a pr that the disk stopped while it put a file in place left only its
    .te-series-pr.part: the same pr again refused "pr-out is not empty and was not written
    by te-series pr". That file is pr's own; the run again gets past it."""
    group_all(three, project)
    (project / "pr-out").mkdir()
    (project / "pr-out" / ".te-series-pr.part").write_text("half")
    rc, said = te("pr", "--te-src", str(upstream), *WHO, capsys=capsys)
    assert rc == 0, said
    assert (project / "pr-out" / "SUMMARY.md").is_file()
