"""Upstream prerequisites (base.toml [[prerequisite]]): upstream's change, built from the
release that has it, committed below the series, never exported or pushed as ours."""

from __future__ import annotations

from pathlib import Path
import os
import re

import pytest

from te_series import check as check_mod
from te_series import port as port_mod
from te_series import rebase as rebase_mod
from te_series.base import UPSTREAM, apply_prerequisites, init_pypi_base
from te_series.git import blob_id, is_ancestor
from te_series.series import Series
from te_series.worktree import make_tree, read_state
from series_helpers import (
    commit,
    FUSER,
    GOOD_MSG,
    make_series,
    make_wheel,
    move_upstream,
    save,
    sh,
    te,
    THREE,
)


FUSER_PATH = "transformer_engine/pytorch/fuser.py"
# The release's fuser.py: the base's plus upstream's change #42 (a cache at the end).
POST = FUSER + "\n\nCACHE = {}\n"
SUBJECT = "Cache fused ops (#42)"
# A patch of the series written on base + #42.
ON_POST = ({FUSER_PATH: POST.replace("tuple(values)", "list(values)")}, GOOD_MSG)
OTHER = THREE[0]  # a patch on other.py, which #42 does not touch
BLOCK = f"""[[prerequisite]]
pr = 42
# Upstream's title; its fuser.py part.
subject = "{SUBJECT}"
release = "{{release}}"
[prerequisite.files]
"{FUSER_PATH}" = {{{{ pre = "{blob_id(FUSER.encode())}", post = "{blob_id(POST.encode())}" }}}}

"""


def add_prerequisite(
    project: Path, upstream: Path, release: str = "9.9.10", post: str = POST
) -> Series:
    """Pin prerequisite #42 in base.toml (after [upstream]) and put its release's wheel, whose
    fuser.py is `post`, into the test's wheel cache; commit base.toml."""
    toml = project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace("[pypi]", BLOCK.format(release=release) + "[pypi]"))
    dist = Path(os.environ["TE_SERIES_CACHE"]) / "dist"
    make_wheel(upstream, dist, version=release, override={FUSER_PATH: post})
    save(project, "prerequisite #42")
    return Series(project / "patches", project)


@pytest.fixture
def prereq(project, upstream):
    """project with prerequisite #42 pinned (its release 9.9.10 in the wheel cache)."""
    return add_prerequisite(project, upstream)


def log(repo: Path, rev: str, fmt: str) -> str:
    return sh("git", "log", "-1", f"--format={fmt}", rev, cwd=repo).strip()


def test_prerequisite_is_committed_below_the_series_on_a_git_base(
    prereq, project, upstream, capsys
):
    base = prereq.base_commit
    make_series(project, upstream, [ON_POST])
    fork = project / "fork"
    state = read_state(fork)
    below = sh("git", "rev-parse", "HEAD~1", cwd=fork).strip()
    assert (state.upstream, state.base, state.prerequisites) == (base, below, {"42": below})
    assert log(fork, below, "%P") == base
    assert log(fork, below, "%s") == SUBJECT
    assert log(fork, below, "%an <%ae>|%cn <%ce>") == "|".join(
        [f"{UPSTREAM['GIT_AUTHOR_NAME']} <{UPSTREAM['GIT_AUTHOR_EMAIL']}>"] * 2
    )
    body = " ".join(log(fork, below, "%b").split())
    assert "9.9.10" in body and "never exports it" in body and "Signed-off-by" not in body
    have = sh("git", "rev-parse", f"{below}:{FUSER_PATH}", cwd=fork).strip()
    assert have == blob_id(POST.encode())
    # The series is one patch, written on the prerequisite's post-image.
    (name,) = prereq.names()
    assert f"index {blob_id(POST.encode())}.." in (prereq.dir / name).read_text()
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and f"upstream prerequisite #42: applied as {below[:12]}" in out


def test_prerequisite_the_base_already_has_makes_no_commit(project, upstream, tmp_path, capsys):
    new = move_upstream(project, upstream, {FUSER_PATH: POST})
    series = add_prerequisite(project, upstream)
    make_series(project, upstream, [ON_POST])
    state = read_state(project / "fork")
    assert (state.upstream, state.base, state.prerequisites) == (new, new, {"42": ""})
    assert sh("git", "rev-list", "--count", f"{new}..HEAD", cwd=project / "fork").strip() == "1"
    rc, out = te("status", capsys=capsys)
    assert "upstream prerequisite #42: already in the base (no commit)" in out
    # A PyPI base whose release has the post-image: no commit either.
    dest = tmp_path / "pypi"
    make_tree(series, dest, wheel=make_wheel(upstream, tmp_path / "w"))
    pypi = read_state(dest)
    assert pypi.prerequisites == {"42": ""} and pypi.base == pypi.upstream


def test_a_file_neither_pre_nor_post_stops_apply(project, upstream, capsys):
    odd = FUSER + "\nODD = 1\n"
    move_upstream(project, upstream, {FUSER_PATH: odd})
    add_prerequisite(project, upstream)
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and FUSER_PATH in out
    for text in (odd, FUSER, POST):
        assert blob_id(text.encode()) in out
    assert "nothing shows that it contains #42" in out and "te-series rebase --onto COMMIT" in out
    assert not (project / "fork").exists() and not (project / "fork.new").exists()


def test_a_release_file_that_is_not_the_post_image_stops_apply(project, upstream, capsys):
    wrong = POST + "WRONG = 1\n"
    add_prerequisite(project, upstream, post=wrong)
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "transformer_engine-9.9.10-py3-none-any.whl" in out
    assert blob_id(wrong.encode()) in out and blob_id(POST.encode()) in out
    assert not (project / "fork").exists()


def test_a_tree_filter_that_changes_the_file_stops_apply(project, upstream, capsys):
    """The committed blob is checked, not only the bytes written (here `ident` rewrites
    $Id$ when git adds the file)."""
    stamped = POST + "# $Id: 1234 $\n"
    move_upstream(project, upstream, {".gitattributes": "*.py ident\n"})
    add_prerequisite(project, upstream, post=stamped)
    toml = project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace(blob_id(POST.encode()), blob_id(stamped.encode())))
    save(project)
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "did not get the post-image blob" in out


PINS = (
    f'"{FUSER_PATH}" = {{ pre = "{blob_id(FUSER.encode())}", post = "{blob_id(POST.encode())}" }}'
)
TABLE = f'[[prerequisite]]\npr = 42\nsubject = "{SUBJECT}"\nrelease = "9.9.10"\n'


@pytest.mark.parametrize(
    "table, said",
    [
        (TABLE.replace("pr = 42", 'pr = "42"'), "number 1: pr = '42' is not an upstream PR number"),
        (TABLE + "title = 1\n", "[[prerequisite]] number 1 has unknown key(s) title"),
        (TABLE.replace(f'subject = "{SUBJECT}"\n', ""), "pr = 42: subject = None is not"),
        (TABLE.replace('"9.9.10"', '" 9.9.10"'), "pr = 42: release = ' 9.9.10' is not"),
        (TABLE, "[[prerequisite]] pr = 42: files is missing or empty"),
        (
            TABLE + f"[prerequisite.files]\n{PINS.replace(blob_id(POST.encode()), 'abc')}\n",
            f"pr = 42: files.\"{FUSER_PATH}\".post = 'abc' is not a full blob id",
        ),
        (
            TABLE + f"[prerequisite.files]\n{PINS.replace(FUSER_PATH, 'tests/t.py')}\n",
            'files."tests/t.py" is not a file under transformer_engine/',
        ),
        (
            TABLE + f'[prerequisite.files]\n"{FUSER_PATH}" = {{ pre = "{"0" * 40}" }}\n',
            "is not { pre = ",
        ),
        (
            TABLE
            + f"[prerequisite.files]\n{PINS.replace(blob_id(POST.encode()), blob_id(FUSER.encode()))}\n",
            "has pre = post (no change)",
        ),
        (
            (TABLE + f"[prerequisite.files]\n{PINS}\n\n") * 2,
            "[[prerequisite]] pr = 42: is listed twice",
        ),
        ('prerequisite = "3410"\n', "`prerequisite` is not a list of [[prerequisite]] tables"),
        # prereq F8
        (
            TABLE.replace(f'subject = "{SUBJECT}"', 'subject = "a\\u0000b"')
            + f"[prerequisite.files]\n{PINS}\n",
            "holds a NUL character",
        ),
        (
            TABLE.replace('"9.9.10"', '"9.9.*"') + f"[prerequisite.files]\n{PINS}\n",
            "release = '9.9.*' is not a release number",
        ),
        (
            TABLE
            + f"[prerequisite.files]\n{PINS.replace(FUSER_PATH, 'transformer_engine/../setup.py')}\n",
            "is not a file under transformer_engine/",
        ),
        (
            TABLE
            + f"[prerequisite.files]\n{PINS}\n\n"
            + TABLE.replace("pr = 42", "pr = 43")
            + f"[prerequisite.files]\n{PINS}\n",
            "is a file of prerequisite #42 too",
        ),
    ],
)
def test_base_toml_prerequisite_errors_name_the_key(project, upstream, capsys, table, said):
    toml = project / "patches" / "base.toml"
    if table.startswith("prerequisite ="):
        toml.write_text(table + toml.read_text())
    else:
        toml.write_text(toml.read_text().replace("[pypi]", table + "\n[pypi]"))
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "patches/base.toml" in out and said in out, out
    assert "A prerequisite is written" in out and "Traceback" not in out
    assert not (project / "fork").exists()
    assert "or restore the file (git checkout -- patches/base.toml)" in out
    sh("git", "checkout", "--", "patches/base.toml", cwd=project)  # as the advice says
    assert te("apply", "--te-src", str(upstream))[0] == 0


def test_export_never_writes_the_prerequisite(prereq, project, upstream, capsys):
    make_series(project, upstream, [OTHER])
    fork = project / "fork"
    below = read_state(fork).base
    assert len(prereq.names()) == 1
    assert not any(SUBJECT in p.read_text() for p in prereq.dir.glob("*.patch"))
    # A copy of it in the series (reverted, then picked again) is upstream's: refused.
    sh("git", "revert", "--no-edit", below, cwd=fork)
    sh("git", "cherry-pick", below, cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "an upstream prerequisite, which te-series keeps below the series" in out
    sh("git", "reset", "-q", "--hard", "HEAD~2", cwd=fork)
    # Moved into the series range (rebase -i puts it above the patch): refused.
    swap = "sed -i -n '1h;1!p;${x;p}'"  # the first todo line goes last
    sh("git", "rebase", "-q", "-i", prereq.base_commit, cwd=fork, env={"GIT_SEQUENCE_EDITOR": swap})
    assert log(fork, "HEAD", "%s") == SUBJECT
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "a prerequisite commit was changed or moved" in out
    assert len(prereq.names()) == 1


def test_export_refuses_a_fork_made_with_other_prerequisites(three, project, upstream, capsys):
    add_prerequisite(project, upstream)
    rc, out = te("export", capsys=capsys)
    assert rc == 2
    assert "applied with the upstream prerequisites none, but patches/base.toml lists #42" in out


def test_rebase_onto_a_commit_that_contains_it_keeps_its_table_for_the_ports(
    prereq, project, upstream, tmp_path, capsys
):
    """Upstream merged #42 and moved fuser.py on since (prereq F1, F2): the rebase takes the
    new commit as containing #42 (no commit below the series), and the table stays, for the
    bases that lack it (a port target): a port still gets #42's file."""
    toml = project / "patches" / "base.toml"
    make_series(project, upstream, [OTHER, ON_POST])
    before = {p.name: p.read_bytes() for p in prereq.dir.glob("*.patch")}
    old, old_toml = prereq.base_commit, toml.read_text()
    commit(upstream, {FUSER_PATH: POST}, "Upstream caches fused ops")  # another title
    moved_on = POST.replace('"""Toy fuser."""', '"""Toy fuser, cached."""')
    new = commit(upstream, {FUSER_PATH: moved_on}, "Reword the docstring")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert "upstream prerequisite #42: " in out and "contains it" in out and "stays" in out
    assert toml.read_text() == old_toml.replace(old, new)  # the commit line, nothing else
    fork = project / "fork"
    state = read_state(fork)
    assert (state.upstream, state.base, state.prerequisites) == (new, new, {"42": ""})
    after = {p.name: p.read_bytes() for p in prereq.dir.glob("*.patch")}
    first, second = prereq.names()
    assert after[first] == before[first]  # other.py did not move
    assert f"index {blob_id(moved_on.encode())}..".encode() in after[second]
    assert te("export")[0] == 0
    # The same base.toml builds a fresh fork/ on the moved-on commit (no commit for #42) ...
    make_tree(Series(project / "patches", project), tmp_path / "fresh", te_src=upstream)
    assert read_state(tmp_path / "fresh").prerequisites == {"42": ""}
    # ... and a release without #42 (the base's files) still gets #42's file first.
    base = tmp_path / "base"
    sh("git", "clone", "-q", str(upstream), str(base), cwd=tmp_path)
    sh("git", "checkout", "-q", old, cwd=base)
    wheel = make_wheel(base, tmp_path / "w", version="10.0.0")
    dest = tmp_path / "pypi"
    init_pypi_base(dest, wheel, "10.0.0")
    assert apply_prerequisites(dest, Series(project / "patches", project))["42"]
    assert (dest / FUSER_PATH).read_text() == POST


def test_rebase_onto_a_commit_that_lacks_it_keeps_it(prereq, project, upstream, tmp_path, capsys):
    toml = project / "patches" / "base.toml"
    make_series(project, upstream, [OTHER, ON_POST])
    old = prereq.base_commit
    old_toml = toml.read_text()
    new = commit(upstream, {"transformer_engine/pytorch/new.py": "NEW = 1\n"}, "Upstream news")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert "upstream prerequisite #42: still needed, applied" in out
    assert toml.read_text() == old_toml.replace(old, new)
    fork = project / "fork"
    state = read_state(fork)
    below = sh("git", "rev-parse", "HEAD~2", cwd=fork).strip()
    assert (state.upstream, state.base, state.prerequisites) == (new, below, {"42": below})
    assert log(fork, below, "%P") == new and log(fork, below, "%s") == SUBJECT
    # The very commit a fresh apply makes on the new base.
    make_tree(Series(project / "patches", project), tmp_path / "fresh", te_src=upstream)
    assert read_state(tmp_path / "fresh").base == below
    assert te("export")[0] == 0


def test_fork_stays_on_its_series_while_a_rebase_carries_the_prerequisite(
    prereq, project, upstream, monkeypatch, capsys
):
    """v16 #1: the carry ran on fork/'s own HEAD, detached on upstream's commit; a kill
    there left fork/ so, and export then took upstream's commit for a patch of the series."""
    make_series(project, upstream, [OTHER, ON_POST])
    fork = project / "fork"
    head, files = sh("git", "rev-parse", "HEAD", cwd=fork), sh("git", "ls-files", "-s", cwd=fork)
    real, seen = rebase_mod.apply_prerequisites, []

    def carry(tree, series, *where):  # where a kill -9 would leave fork/
        seen.append((sh("git", "symbolic-ref", "-q", "HEAD", cwd=fork), sh("git", "rev-parse",
                     "HEAD", cwd=fork), sh("git", "ls-files", "-s", cwd=fork)))  # fmt: skip
        return real(tree, series, *where)

    monkeypatch.setattr(rebase_mod, "apply_prerequisites", carry)
    commit(upstream, {"transformer_engine/pytorch/new.py": "NEW = 1\n"}, "Upstream news")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert seen == [("refs/heads/series\n", head, files)]
    assert sh("git", "worktree", "list", "--porcelain", cwd=fork).count("worktree ") == 1


def test_rebase_stops_when_the_prerequisite_conflicts(prereq, project, upstream, capsys):
    make_series(project, upstream, [OTHER])
    fork = project / "fork"
    head = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    toml = (project / "patches" / "base.toml").read_text()
    commit(upstream, {FUSER_PATH: FUSER + "\n\nLIMIT = 3\n"}, "Upstream limit")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert (
        rc == 2 and "upstream prerequisite #42" in out and "nothing shows that it contains" in out
    )
    assert FUSER_PATH in out
    assert "the --onto commit" in out and "carry-" not in out, out  # v38 #5: a scratch folder
    assert "at HEAD" not in out, out  # v39 #4: the scratch tree's HEAD
    assert sh("git", "rev-parse", "HEAD", cwd=fork).strip() == head
    assert (project / "patches" / "base.toml").read_text() == toml
    assert read_state(fork).rebase_onto is None


def test_status_at_a_rebase_conflict_names_the_new_bases_prerequisite(prereq, project,
                                                                        upstream, capsys):  # fmt: skip
    """tool-review-v37 #3: at a conflict of a rebase, status named the old base's prerequisite
    commit as the one below the series; fork/ is on the new base, with a commit of its own."""
    make_series(project, upstream, [OTHER])
    fork = project / "fork"
    old = read_state(fork).prerequisites["42"]
    commit(upstream, {"transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 3\n'},
           "Upstream value")  # fmt: skip
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "conflicts in transformer_engine/pytorch/other.py" in out, out
    new = read_state(fork).rebase_prerequisites["42"]
    assert new and new != old and is_ancestor(fork, new, "HEAD")
    rc, out = te("status", capsys=capsys)
    assert f"upstream prerequisite #42: applied as {new[:12]}" in out and old[:12] not in out, out
    sh("git", "rebase", "--abort", cwd=fork)  # v39 #3: git's own abort takes fork/ back
    rc, out = te("status", capsys=capsys)
    assert f"upstream prerequisite #42: applied as {old[:12]}" in out and new[:12] not in out, out


def test_rebase_stops_where_apply_could_not_rebuild_the_prerequisite(
    prereq, project, upstream, capsys
):
    """A clean pick onto a file that is neither pre nor post: base.toml's ids would not
    describe the new base, so a later apply could not make that commit again."""
    make_series(project, upstream, [OTHER])
    head = sh("git", "rev-parse", "HEAD", cwd=project / "fork").strip()
    commit(upstream, {FUSER_PATH: "# A header.\n" + FUSER}, "Upstream header")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "neither its pre-image" in out and FUSER_PATH in out
    assert read_state(project / "fork").rebase_onto is None
    assert sh("git", "rev-parse", "HEAD", cwd=project / "fork").strip() == head


def test_rebase_applies_a_prerequisite_the_new_commit_lacks_though_the_old_had_it(
    project, upstream, capsys
):
    move_upstream(project, upstream, {FUSER_PATH: POST})
    add_prerequisite(project, upstream)
    make_series(project, upstream, [OTHER])
    new = commit(upstream, {FUSER_PATH: FUSER}, "Revert #42")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0 and "upstream prerequisite #42: still needed, applied" in out, out
    fork = project / "fork"
    state = read_state(fork)
    assert state.upstream == new and state.prerequisites["42"] == state.base != new
    assert log(fork, state.base, "%s") == SUBJECT


@pytest.mark.parametrize("layout", ["inline", "files-elsewhere"])
def test_rebase_leaves_prerequisite_tables_alone_in_any_layout(
    prereq, project, upstream, capsys, layout
):
    """Valid TOML in other layouts (an inline array; a [prerequisite.files] far from its
    header): a rebase onto a commit that contains #42 edits the commit line only."""
    make_series(project, upstream, [OTHER])
    toml = project / "patches" / "base.toml"
    rest = toml.read_text().replace(BLOCK.format(release="9.9.10"), "")
    if layout == "inline":
        text = (
            f'prerequisite = [{{ pr = 42, subject = "{SUBJECT}", release = "9.9.10", files = {{ '
            f"{PINS} }} }}]\n" + rest
        )
    else:
        text = rest.replace("[pypi]", TABLE + "\n[pypi]") + f"\n[prerequisite.files]\n{PINS}\n"
    toml.write_text(text)
    save(project)
    old = prereq.base_commit
    assert Series(project / "patches", project).prerequisites == prereq.prerequisites
    new = commit(upstream, {FUSER_PATH: POST}, "Cache fused ops (#42)")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert toml.read_text() == text.replace(old, new)
    assert read_state(project / "fork").prerequisites == {"42": ""}


def test_pr_refuses_while_the_base_lacks_a_prerequisite(prereq, project, upstream, capsys):
    series = make_series(project, upstream, [OTHER])
    (name,) = series.names()
    series.series_file.write_text(f"# pr: values\n{name}\n")
    (series.dir / "pr").mkdir()
    (series.dir / "pr" / "values.md").write_text(
        "# Description\n\nx\n\nFixes # (issue)\n\n## Type of change\n\n## Changes\n\n# Checklist:\n"
    )
    save(project, "group")
    rc, out = te(
        "pr", "--te-src", str(upstream), "--identity", "Real Person <real@x.org>", capsys=capsys
    )
    assert rc == 2 and "lacks the upstream prerequisite(s) #42" in out
    assert "te-series rebase --onto origin/main" in out
    assert not (project / "pr-out").exists()


@pytest.mark.parametrize("direction", ["backport", "forward"])
def test_port_applies_the_prerequisite_to_a_release_with_the_pre_image(
    project, upstream, tmp_path, direction, capsys
):
    """backport: the base release has #42 (like 2.20.2), the target lacks it (like 2.19.0):
    the port gives the target #42's files first, then the 3-way merge. forward: the base
    release lacks it and gets it before the series; the target has it already."""
    dist = tmp_path / "cache" / "dist"
    if direction == "backport":
        series = add_prerequisite(project, upstream, release="9.9.9")  # the base release has it
        make_wheel(upstream, dist, version="10.0.0")  # fuser.py: the pre-image
    else:
        series = add_prerequisite(project, upstream, release="10.0.0")  # the target has it
        make_wheel(upstream, dist, version="9.9.9")
    make_series(project, upstream, [OTHER, ON_POST])
    tree = port_mod.port_tree(series, "10.0.0", tmp_path / "port")
    assert (tree / FUSER_PATH).read_text() == POST.replace("tuple(values)", "list(values)")
    state = read_state(tree)
    if direction == "backport":
        assert log(tree, state.target, "%s") == SUBJECT
        assert log(tree, state.target, "%ae") == UPSTREAM["GIT_AUTHOR_EMAIL"]
        assert state.prerequisites == {"42": state.target}
    else:
        assert state.prerequisites == {"42": ""} and state.target == state.upstream
    # --out writes the ported series only, never the prerequisite; a backport says that
    # #42 comes first (prereq F11).
    rc, said = te("port", "--release", "10.0.0", "--out", str(tmp_path / "out"), capsys=capsys)
    assert rc == 0
    out = sorted((tmp_path / "out" / "10.0.0").glob("*.patch"))
    assert len(out) == 2 and not any(SUBJECT in p.read_text() for p in out)
    first = f"start from upstream prerequisite #42 ({SUBJECT!r}), which 10.0.0 lacks"
    assert (first in said) == (direction == "backport"), said


def test_check_and_range_diff_build_on_the_prerequisites(project, upstream, tmp_path, capsys):
    """check applies the series on base + prerequisites; range-diff gives each version its
    own (the old one has none)."""
    make_series(project, upstream, [OTHER])  # the old version: no prerequisite
    series = add_prerequisite(project, upstream)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    commit(project / "fork", *ON_POST)
    assert te("export")[0] == 0
    save(project, "v2")
    assert check_mod.check(series, te_src=upstream, wheel=None) == []
    wheel = make_wheel(upstream, tmp_path / "w", override={FUSER_PATH: POST})
    assert check_mod.check(series, te_src=None, wheel=wheel) == []
    capsys.readouterr()
    rc, out = te("range-diff", "HEAD~2", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert "1:  " in out and "-:  ------- > 2:" in out and SUBJECT not in out


def test_a_base_whose_history_has_a_revised_merge_contains_it(prereq, project, upstream, capsys):
    """Upstream merged #42 in a revised form (another blob), titled as the table says: the
    base contains it; no commit is made, the series goes on top (prereq F2)."""
    revised = POST.replace("CACHE = {}", "CACHE: dict = {}")
    move_upstream(project, upstream, {FUSER_PATH: revised})
    sh("git", "commit", "-q", "--amend", "-m", SUBJECT, cwd=upstream)
    toml = project / "patches" / "base.toml"
    head = sh("git", "rev-parse", "HEAD", cwd=upstream).strip()
    toml.write_text(re.sub(r'commit = "[0-9a-f]+"', f'commit = "{head}"', toml.read_text()))
    save(project)
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert read_state(project / "fork").prerequisites == {"42": ""}


def test_export_refuses_a_fork_made_with_other_pins_of_the_same_prerequisite(
    prereq, project, upstream, capsys
):
    """A colleague changed #42's post-image in base.toml (prereq F6): fork/'s commit of #42
    is not what the table pins, so export refuses and writes nothing."""
    make_series(project, upstream, [ON_POST])
    before = {p.name: p.read_bytes() for p in prereq.dir.glob("*.patch")}
    toml = project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace(blob_id(POST.encode()), "2" * 40))
    save(project)
    commit(project / "fork", {"tests/d.py": "D = 1\n"}, GOOD_MSG.replace("Make route", "Add d"))
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "another upstream prerequisite #42" in out and "2" * 40 in out, out
    assert {p.name: p.read_bytes() for p in prereq.dir.glob("*.patch")} == before


@pytest.mark.parametrize("setting", ["autocrlf = input", "autocrlf = true", "safecrlf = true"])
def test_a_prerequisite_with_crlf_lines_gets_its_blob_under_any_autocrlf(
    project, upstream, isolated, capsys, setting
):
    """te-series commits the release's file itself: the user's core.autocrlf must not
    convert its carriage returns (the commit would not be the post-image)."""
    post = POST.replace("CACHE = {}\n", "CACHE = {}\r\n")
    add_prerequisite(project, upstream, post=post)
    toml = project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace(blob_id(POST.encode()), blob_id(post.encode())))
    save(project)
    isolated.write_text(f"[core]\n\t{setting}\n")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    isolated.write_text("")
    assert rc == 0, out
    fork = project / "fork"
    below = read_state(fork).prerequisites["42"]
    assert sh("git", "rev-parse", f"{below}:{FUSER_PATH}", cwd=fork).strip() == blob_id(
        post.encode()
    )


def test_the_advice_for_a_moved_prerequisite_commit_puts_the_series_back(
    prereq, project, upstream, capsys
):
    """issue 17 item 5: the advice names what it leaves, and following it gets export going."""
    make_series(project, upstream, [OTHER])
    fork = project / "fork"
    state = read_state(fork)
    sh("git", "rebase", "-q", "--onto", state.upstream, state.base, "series", cwd=fork)
    rc, out = te("status", capsys=capsys)
    assert "HEAD does not descend from the series' base" in out, out  # prereq F9
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "reset --keep series@{N}" in out and "reset --hard" not in out, out
    assert "git -C fork log series@{N}..HEAD" in out
    sh("git", "reset", "-q", "--keep", "series@{1}", cwd=fork)
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 0 and "unchanged" in out, out


def test_range_diff_says_an_old_version_was_written_without_the_prerequisite(
    project, upstream, capsys
):
    """prereq F7, tool-review-v6 #17: a revision whose base.toml lists #42 while its patches
    were written without it: the error names the revision and why it cannot apply."""
    make_series(project, upstream, [THREE[1]])  # fuser.py from its pre-image
    add_prerequisite(project, upstream)  # this commit: the table, and the old patches
    rc, out = te("range-diff", "HEAD", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "at HEAD: the old version does not apply" in out, out
    assert f"{FUSER_PATH} at blob {blob_id(FUSER.encode())}" in out
    assert "written on the base without #42" in out


def test_a_prerequisite_path_that_is_a_folder_is_named_as_one(project, upstream, capsys):
    """prereq F8: a folder pinned as a file is called a folder (a tree), not a blob."""
    add_prerequisite(project, upstream)
    toml = project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace(f'"{FUSER_PATH}"', '"transformer_engine/pytorch"'))
    save(project)
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "transformer_engine/pytorch is a tree" in out and "not a file" in out, out
