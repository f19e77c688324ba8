"""te-series pr: stacked PR branches, re-signed by the submitter."""

from __future__ import annotations


import pytest

from series_helpers import (
    PLACEHOLDER,
    save,
    sh,
    te,
)

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
    sh("git", "config", "user.email", "jane@example.com", cwd=project)
    rc, out = te("pr", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    out_dir = project / "pr-out"
    assert (out_dir / "values.md").read_text() == TEMPLATE.format(what="values")
    assert (out_dir / "tests.md").exists()
    summary = (out_dir / "SUMMARY.md").read_text()
    assert "| pr/values | upstream " in summary and "| pr/tests | pr/values | 1 |" in summary
    # Fetch the bundle into a TE checkout, as a contributor would.
    te_clone = tmp_path / "te"
    sh("git", "clone", "-q", str(upstream), str(te_clone), cwd=tmp_path)
    sh(
        "git",
        "fetch",
        "-q",
        str(out_dir / "pr.bundle"),
        "refs/heads/pr/*:refs/heads/pr/*",
        cwd=te_clone,
    )
    base = three.base_commit
    assert sh("git", "rev-list", "--count", f"{base}..pr/values", cwd=te_clone).strip() == "2"
    assert sh("git", "rev-list", "--count", f"{base}..pr/tests", cwd=te_clone).strip() == "3"
    assert sh("git", "merge-base", "--is-ancestor", "pr/values", "pr/tests", cwd=te_clone) == ""
    log = sh("git", "log", "--format=%an <%ae>|%cn|%B%x00", f"{base}..pr/tests", cwd=te_clone)
    for entry in filter(str.strip, log.split("\0")):
        assert entry.strip().startswith("Jane Dev <jane@example.com>|Jane Dev|")
        assert "Signed-off-by: Jane Dev <jane@example.com>" in entry
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
