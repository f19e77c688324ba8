"""check (lint, every failing patch, TE's checks after each patch), PyPI bases and ports."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys

import pytest

from te_series import check as check_mod
from te_series import port as port_mod
from te_series.check import lint
from te_series.git import blob_id, format_patch
from te_series.series import base_preimages, parse_diff, PatchInfo, read_patch
from te_series.util import SeriesError
from te_series.worktree import make_tree, read_state
from series_helpers import (
    commit,
    CONFLICTING,
    FUSER,
    GOOD_CHANGE,
    GOOD_MSG,
    group_prs,
    make_series,
    make_wheel,
    move_upstream,
    msg,
    PLACEHOLDER,
    python_without_packages,
    save,
    sh,
    te,
    WHO,
)


def test_lint_reports_each_problem(project, upstream):
    bad_subject = f"Make route return a list\n\nBecause.\n\nSigned-off-by: {PLACEHOLDER}"
    no_signoff = "[PyTorch] Make route return a list\n\nBecause."
    no_body = (
        f"[PyTorch] Make route return a list\n\nSigned-off-by: {PLACEHOLDER}\n"
        f"Signed-off-by:  {PLACEHOLDER}"
    )
    mid_body = (
        "[PyTorch] Make route return a set\n\nBecause.\n"
        f"Signed-off-by: {PLACEHOLDER}\n\nMore prose after it, in its own paragraph.\n"
    )
    series = make_series(
        project,
        upstream,
        [
            ({"tests/a.py": "a = 1\n"}, bad_subject),
            ({"tests/b.py": "b = 1\n"}, no_signoff),
            ({"tests/c.py": "c = 1\n"}, no_body),
            ({"tests/d.py": "d = 1\n"}, mid_body),
        ],
    )
    names = series.names()
    (series.dir / "9999-stray.patch").write_text("stray")
    series.series_file.write_text("\n".join(names + ["0042-missing.patch", names[0]]) + "\n")
    problems = "\n".join(check_mod.lint(series))
    assert f"{names[0]}: subject" in problems
    assert f"{names[1]}: no 'Signed-off-by" in problems
    assert f"{names[2]}: the body is empty" in problems
    assert f"{names[2]}: signed off twice by {PLACEHOLDER.lower()}" in problems
    # A sign-off in the middle of the body is no trailer.
    assert f"{names[3]}: no 'Signed-off-by" in problems
    assert "9999-stray.patch is not listed" in problems
    assert "line 5 names 0042-missing.patch, which does not exist" in problems
    assert f"lists {names[0]} twice (lines 1 and 6)" in problems


def test_check_green_on_empty_series(project, upstream):
    series = project / "patches"
    from te_series.series import Series

    assert check_mod.check(Series(series, project), te_src=upstream, wheel=None) == []


def test_check_green_on_one_patch_series(project, upstream):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    assert check_mod.check(series, te_src=upstream, wheel=None) == []


def test_check_reports_every_failing_patch(project, upstream):
    series = make_series(
        project,
        upstream,
        [
            (GOOD_CHANGE, GOOD_MSG),
            ({"tests/ok.py": "OK = 1\n"}, msg("Add ok")),
            ({"transformer_engine/pytorch/other.py": "VALUE = 3\n"}, msg("Raise VALUE")),
        ],
    )
    names = series.names()
    move_upstream(
        project,
        upstream,
        {**CONFLICTING, "transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 5\n'},
    )
    problems = "\n".join(check_mod.check(series, te_src=upstream, wheel=None))
    assert f"patch {names[0]} does not apply" in problems
    assert f"patch {names[2]} does not apply" in problems
    assert names[1] not in problems


def test_check_runs_te_checks_after_each_patch(project, upstream):
    ugly = FUSER.replace("def route(values):", "def route( values ):  \n    unused = 1")
    ugly = "import tomllib\n" + ugly + "\n\n"
    series = make_series(
        project,
        upstream,
        [
            ({"transformer_engine/pytorch/fuser.py": ugly}, msg("Break style")),
            ({"transformer_engine/pytorch/fuser.py": FUSER}, msg("Fix style again")),
        ],
    )
    first = series.names()[0]
    problems = "\n".join(check_mod.check(series, te_src=upstream, wheel=None))
    assert f"{first}: black would reformat" in problems
    assert f"{first}: vermin" in problems and "tomllib" in problems
    assert f"{first}: transformer_engine/pytorch/fuser.py: trailing whitespace" in problems
    assert f"{first}: transformer_engine/pytorch/fuser.py: must end with exactly one newline" in (
        problems
    )
    assert f"{first}: pylint" in problems and "unused-variable" in problems
    assert series.names()[1] not in problems


def test_check_lints_pr_groups(project, upstream):
    series = make_series(
        project,
        upstream,
        [({"tests/a.py": "a = 1\n"}, msg("Add a")), ({"tests/b.py": "b = 1\n"}, msg("Add b"))],
    )
    a, b = series.names()
    series.series_file.write_text(f"{a}\n# pr: second\n{b}\n# pr: empty\n")
    (series.dir / "pr").mkdir()
    (series.dir / "pr" / "second.md").write_text("# Description\n\nText.\n")
    problems = "\n".join(check_mod.lint_groups(series))
    assert f"{a} stand(s) before the first '# pr:' line" in problems
    assert "PR 'empty' has no patches" in problems
    assert "PR 'empty' has no description patches/pr/empty.md" in problems
    assert "patches/pr/second.md lacks TE's template line '## Type of change'" in problems
    series.series_file.write_text(f"# pr: first\n{a}\n# PR: second\n{b}\n")
    problems = "\n".join(check_mod.lint_groups(series))
    assert "line 3: '# PR: second' is a comment, not a PR marker" in problems


def test_pypi_base_applies_package_hunks_and_reports_absent(project, upstream, tmp_path, capsys):
    series = make_series(
        project,
        upstream,
        [(GOOD_CHANGE, GOOD_MSG), ({"tests/test_fuser.py": "y = 2\n"}, msg("Test y"))],
    )
    wheel = make_wheel(upstream, tmp_path / "w")
    dest = tmp_path / "pypi"
    absent = make_tree(series, dest, wheel=wheel)
    assert "list(values)" in (dest / "transformer_engine/pytorch/fuser.py").read_text()
    assert not (dest / "tests").exists()
    assert absent == {"tests/test_fuser.py": series.names()}
    base = read_state(dest).base
    assert sh("git", "rev-list", "--count", f"{base}..HEAD", cwd=dest).strip() == "2"


def test_pypi_blob_mismatch_names_file_and_ids(project, upstream, tmp_path):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    changed = FUSER + "\nEXTRA = 1\n"
    wheel = make_wheel(
        upstream, tmp_path / "w", override={"transformer_engine/pytorch/fuser.py": changed}
    )
    with pytest.raises(SeriesError) as err:
        make_tree(series, tmp_path / "pypi", wheel=wheel)
    msg_ = str(err.value)
    assert "transformer_engine/pytorch/fuser.py" in msg_
    assert blob_id(FUSER.encode()) in msg_ and blob_id(changed.encode()) in msg_


def test_check_on_pypi_base_skips_pylint_and_says_so(project, upstream, tmp_path, capsys):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheel = make_wheel(upstream, tmp_path / "w")
    assert check_mod.check(series, te_src=None, wheel=wheel) == []
    assert "pylint: skipped" in capsys.readouterr().out


def test_check_reads_no_black_config_of_the_user(project, upstream, tmp_path, monkeypatch):
    """tool-review-v19 F3: a user-level black config (~/.config/black, skip-magic-trailing-
    comma) turned check red on a PyPI base, whose tree has no pyproject.toml, with diffs TE's
    style rejects; a git base with TE's pyproject.toml stayed ok. Both run TE's black only."""
    exploded = FUSER + "\n\nVALUES = [\n    1,\n    2,\n]\n"
    fuser = "transformer_engine/pytorch/fuser.py"
    series = make_series(project, upstream, [({fuser: exploded}, msg("Add values"))])
    (tmp_path / "xdg").mkdir()
    (tmp_path / "xdg" / "black").write_text("[tool.black]\nskip-magic-trailing-comma = true\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    wheel = make_wheel(upstream, tmp_path / "w")
    assert check_mod.check(series, te_src=None, wheel=wheel) == []
    assert check_mod.check(series, te_src=upstream, wheel=None) == []


# --------------------------------------------------------------------------- ports


def wheels(project, upstream, tmp_path, newer_fuser: str) -> None:
    """Put fake 9.9.9 and 10.0.0 wheels into the (test) wheel cache."""
    dist = tmp_path / "cache" / "dist"
    make_wheel(upstream, dist)
    make_wheel(
        upstream,
        dist,
        version="10.0.0",
        override={"transformer_engine/pytorch/fuser.py": newer_fuser},
    )


NEWER = "NEW = 1\n\n\n" + FUSER


def test_port_merges_onto_newer_release(project, upstream, tmp_path):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheels(project, upstream, tmp_path, NEWER)
    tree = port_mod.port_tree(series, "10.0.0", tmp_path / "port")
    text = (tree / "transformer_engine/pytorch/fuser.py").read_text()
    assert text.startswith("NEW = 1") and "list(values)" in text


def test_port_conflict_names_patch_and_file(project, upstream, tmp_path):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheels(project, upstream, tmp_path, FUSER.replace("tuple(values)", "set(values)"))
    with pytest.raises(SeriesError) as err:
        port_mod.port_tree(series, "10.0.0", tmp_path / "port")
    assert "Make route return a list" in str(err.value)
    assert "transformer_engine/pytorch/fuser.py" in str(err.value)
    # M4: say plainly that a port patch cannot resolve a merge conflict.
    assert "A port patch cannot resolve this" in str(err.value)
    assert "Add a port patch" not in str(err.value)


# A git first in PATH whose first `rebase --onto` fails as on a full disk.
REBASE_FULL = """#!/bin/sh
case " $* " in *" rebase --onto "*) if [ ! -e "{marker}" ]; then touch "{marker}"
  echo "error: unable to write new index file: No space left on device" >&2; exit 1; fi;; esac
exec "{git}" "$@"
"""


def test_a_full_disk_at_the_ports_merge_says_so(project, upstream, tmp_path, monkeypatch):
    """v33 #3: a git rebase that the disk stopped was told as a conflict "of patch '' in (no
    file)", with advice to change the series or its port targets; making room, the one way
    on, was not said. The same port once there is room gets past it."""
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheels(project, upstream, tmp_path, NEWER)
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git").write_text(REBASE_FULL.format(marker=tmp_path / "full", git=shutil.which("git")))
    (shim / "git").chmod(0o755)
    with monkeypatch.context() as m, pytest.raises(SeriesError) as err:
        m.setenv("PATH", f"{shim}:{os.environ['PATH']}")
        port_mod.port_tree(series, "10.0.0", tmp_path / "port")
    assert "the disk is full: git rebase could not write" in str(err.value), err.value
    assert "conflicts in" not in str(err.value)
    tree = port_mod.port_tree(series, "10.0.0", tmp_path / "port2")
    assert (tree / "transformer_engine/pytorch/fuser.py").read_text().startswith("NEW = 1")


def test_port_patches_apply_edit_and_export(project, upstream, tmp_path, capsys):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheels(project, upstream, tmp_path, NEWER)
    # Write a port patch with the edit loop: port --edit, commit, export --port.
    rc, out = te("port", "--release", "10.0.0", "--edit", capsys=capsys)
    assert rc == 0, out
    tree = project / "fork-port" / "10.0.0"
    assert sh("git", "rev-parse", "--abbrev-ref", "HEAD", cwd=tree).strip() == "series"
    ported = (tree / "transformer_engine/pytorch/fuser.py").read_text()
    commit(
        tree,
        {"transformer_engine/pytorch/fuser.py": ported.replace("NEW = 1", "NEW = 2")},
        msg("Keep NEW in step"),
    )
    rc, out = te("export", "--port", "10.0.0", capsys=capsys)
    assert rc == 0, out
    ps = series.port_series("10.0.0")
    # M5: each message names the verb for the port tree.
    rc, out = te("port", "--release", "10.0.0", "--edit", capsys=capsys)
    assert rc == 2 and "Export its work first (te-series export --port 10.0.0)" in out
    rc, out = te("export", "--port", "9.9.9", capsys=capsys)
    assert rc == 2 and "Make it first: te-series port --edit --release 9.9.9" in out
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/", "GIT_EDITOR": "sed -i s/list/List/"}
    sh("git", "rebase", "-q", "-i", "HEAD~2", cwd=tree, env=env)  # a ported series commit
    rc, out = te("export", "--port", "10.0.0", capsys=capsys)
    assert rc == 2 and "Port patches go on top of it" in out
    sh("git", "reset", "-q", "--hard", "ORIG_HEAD", cwd=tree)
    assert ps.names() == ["0001-PyTorch-Keep-NEW-in-step.patch"]
    save(project)
    # The port (and --out) now carries it; check lints it and applies it.
    tree2 = port_mod.port_tree(series, "10.0.0", tmp_path / "again")
    assert (tree2 / "transformer_engine/pytorch/fuser.py").read_text().startswith("NEW = 2")
    assert te("port", "--release", "10.0.0", "--out", str(tmp_path / "out"))[0] == 0
    assert len(list((tmp_path / "out" / "10.0.0").glob("*.patch"))) == 2
    assert check_mod.check_ports(series) == []
    # A port patch that no longer applies is named by check.
    newer = NEWER.replace("NEW = 1", "NEW = 7")
    wheels(project, upstream, tmp_path / "x", newer)
    (tmp_path / "cache" / "dist" / "transformer_engine-10.0.0-py3-none-any.whl").unlink()
    make_wheel(
        upstream,
        tmp_path / "cache" / "dist",
        version="10.0.0",
        override={"transformer_engine/pytorch/fuser.py": newer},
    )
    problems = "\n".join(check_mod.check_ports(series))
    assert "port 10.0.0: patch 0001-PyTorch-Keep-NEW-in-step.patch does not apply" in problems


def test_unknown_release_says_what_exists(project, upstream, capsys, monkeypatch):
    make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    rc, out = te("test", "--release", "7.7.7", capsys=capsys)
    assert rc == 2 and "no build of 7.7.7" in out and "te-series build --release 7.7.7" in out
    assert not (project / ".venv-7.7.7").exists()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    rc, out = te("port", "--release", "7.7.7", capsys=capsys)
    assert rc == 2 and "could not download transformer-engine==7.7.7" in out
    assert "9.9.9 (base), 10.0.0 (port target)" in out
    assert "Traceback" not in out


def test_check_reads_non_ascii_and_non_utf8_patches(project, upstream, capsys):
    """W4, T2: author, subject and body as git am reads them; a Latin-1 byte in a file."""
    series = make_series(project, upstream, [])
    fork = project / "fork"
    (fork / "tests" / "latin.py").write_bytes(b"# caf\xe9\nX = 1\n")
    (fork / "tests" / "my file.py").write_text("Y = 1\n")
    (fork / "tests" / "café.py").write_text("Z = 1\n")
    sh("git", "add", "-A", cwd=fork)
    message = "[PyTorch] Add ü\n\nWritten by José.\n\nSigned-off-by: José Müller <jose@x.org>"
    jose = {"GIT_AUTHOR_NAME": "José Müller", "GIT_AUTHOR_EMAIL": "jose@x.org"}
    sh("git", "commit", "-q", "-m", message, cwd=fork, env=jose)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    (name,) = series.names()
    info = read_patch(series.dir / name)
    assert (info.subject, info.author) == ("[PyTorch] Add ü", "José Müller <jose@x.org>")
    assert info.body.startswith("Written by José.")
    paths = [(f.path, f.hunks) for f in info.files]
    assert paths == [
        ("tests/café.py", ["@@ -0,0 +1 @@"]),
        ("tests/latin.py", ["@@ -0,0 +1,2 @@"]),
        ("tests/my file.py", ["@@ -0,0 +1 @@"]),
    ]
    assert check_mod.lint(series) == []


def test_check_tests_needs_a_built_te(project, upstream, capsys, monkeypatch, tmp_path):
    make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    monkeypatch.setattr(sys, "executable", str(python_without_packages(tmp_path / "bare")))
    rc, out = te("check", "--te-src", str(upstream), "--tests", capsys=capsys)
    assert rc == 2 and "has no built TE" in out and "te-series build" in out
    # A failing test run says why (its stderr), not an empty reason.
    ok, said = check_mod.cpu_tests(project / "fork")
    assert not ok and "No module named" in said


def test_check_flags_a_stale_port_patch(project, upstream, tmp_path, capsys):
    """W11: a port patch made against other files applies by offset; check says so."""
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheels(project, upstream, tmp_path, NEWER)
    assert te("port", "--release", "10.0.0", "--edit")[0] == 0
    tree = project / "fork-port" / "10.0.0"
    ported = (tree / "transformer_engine/pytorch/fuser.py").read_text()
    ported = ported.replace("NEW = 1", "NEW = 2")
    commit(tree, {"transformer_engine/pytorch/fuser.py": ported}, msg("Keep NEW in step"))
    assert te("export", "--port", "10.0.0")[0] == 0
    save(project)
    assert check_mod.check_ports(series) == []
    # The release moves a line below the patched one: the patch still applies, by offset.
    newer = NEWER.replace('"""Toy fuser."""', '"""Toy fuser."""\n\nEXTRA = 0')
    (tmp_path / "cache" / "dist" / "transformer_engine-10.0.0-py3-none-any.whl").unlink()
    override = {"transformer_engine/pytorch/fuser.py": newer}
    make_wheel(upstream, tmp_path / "cache" / "dist", version="10.0.0", override=override)
    problems = "\n".join(check_mod.check_ports(series))
    stale = "port 10.0.0: 0001-PyTorch-Keep-NEW-in-step.patch: transformer_engine/pytorch/fuser.py"
    assert f"{stale}: made against blob" in problems
    assert "does not apply" not in problems
    assert "made against blob" in problems and "te-series export --port 10.0.0" in problems


def test_build_and_test_refuse_before_any_venv_work(project, upstream, capsys, monkeypatch):
    """M9: an unknown release fails before a venv exists; M10: test needs an importable TE."""
    make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    rc, out = te("build", "--release", "7.7.7", "--baseline", capsys=capsys)
    assert rc == 2 and "could not download transformer-engine==7.7.7" in out
    assert not (project.parent / "cache" / "venv-7.7.7").exists()
    # A .venv without TE (the tool's own venv): test refuses instead of failing in conftest.
    python_without_packages(project / ".venv" / "bin")
    rc, out = te("test", capsys=capsys)
    assert rc == 2 and ".venv/ has no working build of TE 9.9.9" in out


def test_test_passes_options_to_pytest(project, upstream, capsys):
    """`te-series test -q` reaches pytest (here: the TE probe before it), not argparse."""
    make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    python_without_packages(project / ".venv" / "bin")
    rc, out = te("test", "-q", "-x", capsys=capsys)
    assert rc == 2 and ".venv/ has no working build of TE 9.9.9" in out
    with pytest.raises(SystemExit):
        te("status", "-q")


def test_check_reports_a_patch_that_makes_no_commit(three, project, upstream):
    """tool-review-v6 #16: a copy of a patch under a new subject applies as nothing; apply
    stops on it, so check must say so too."""
    last = three.paths()[-1]
    copy = three.dir / "0004-PyTorch-Test-more-again.patch"
    copy.write_bytes(last.read_bytes().replace(b"Test more", b"Test more again"))
    three.series_file.write_text(three.series_file.read_text() + copy.name + "\n")
    problems = check_mod.check(three, te_src=upstream, wheel=None)
    assert any(f"patch {copy.name} made no commit" in p for p in problems), problems


def test_port_out_is_checked_before_any_work(three, project, tmp_path, capsys):
    rc, text = te("port", "--out", str(project / "patches" / "port"), capsys=capsys)
    assert rc == 2 and "inside patches/" in text
    assert not (project / "patches" / "port").exists()
    old = tmp_path / "out" / "10.0.0"
    old.mkdir(parents=True)
    (old / "0001-x.patch").write_text("old\n")
    rc, text = te("port", "--out", str(tmp_path / "out"), capsys=capsys)
    assert rc == 2 and "out/10.0.0/ holds files already" in text and "downloading" not in text
    assert (old / "0001-x.patch").read_text() == "old\n"


@pytest.mark.parametrize("into", ["patches", "nowhere"])
def test_port_out_refuses_a_release_folder_that_is_a_link(three, project, tmp_path, capsys, into):
    """tool-review-v9 #7: OUT/<release> as a link into patches/port/ (written through) or a
    dangling one (a raw error); following the advice gets port past it."""
    target = project / "patches" / "port" / "10.0.0" if into == "patches" else tmp_path / "gone"
    target.mkdir(parents=True) if into == "patches" else None
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "10.0.0").symlink_to(target)
    rc, text = te("port", "--release", "10.0.0", "--out", str(tmp_path / "out"), capsys=capsys)
    assert rc == 2 and "10.0.0 is a symbolic link" in text and "downloading" not in text, text
    assert not (into == "patches" and any(target.iterdir()))
    sh(*re.search(r"Remove it \((rm [^)]*)\)", text).group(1).split(), cwd=project)
    rc, text = te("port", "--release", "10.0.0", "--out", str(tmp_path / "out"), capsys=capsys)
    assert "symbolic link" not in text, text


def test_port_out_refuses_a_release_file(three, project, tmp_path, capsys):
    """v32 #3: a file at OUT/<release> gave a raw "Not a directory" and advice about free
    space; following the advice now gets port past it."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "10.0.0").write_text("mine\n")
    rc, text = te("port", "--release", "10.0.0", "--out", str(tmp_path / "out"), capsys=capsys)
    assert rc == 2 and "10.0.0 is a file" in text and "downloading" not in text, text
    sh("sh", "-c", re.search(r"Move it away \((mv [^)]*)\)", text).group(1), cwd=project)
    rc, text = te("port", "--release", "10.0.0", "--out", str(tmp_path / "out"), capsys=capsys)
    assert "is a file" not in text and "Not a directory" not in text, text
    assert (tmp_path / "out" / "10.0.0.old").read_text() == "mine\n"


def test_port_out_leaves_out_patches_that_are_empty_on_the_release(three, project, upstream,
                                                                    tmp_path, capsys):  # fmt: skip
    """tool-review-v38 #4: a patch that changes only tests/ (which the wheel lacks) was written
    as an empty file, which makes `git am DIR/*.patch` fail before the first patch."""
    wheels(project, upstream, tmp_path, NEWER)
    rc, text = te("port", "--release", "10.0.0", "--out", str(tmp_path / "out"), capsys=capsys)
    assert rc == 0, text
    files = sorted((tmp_path / "out" / "10.0.0").iterdir())
    tests_only = three.names()[2]
    assert files and all(f.stat().st_size for f in files), files
    assert tests_only not in [f.name for f in files] and "left out, as they" in text, text
    assert tests_only in text, text


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


def test_a_real_binary_file_is_named_as_not_accepted_and_the_advice_gets_past_it(
    three, project, upstream, tmp_path, capsys
):
    """tool-review-v13 #6: for a real binary file (a PNG) check said to remove git attributes
    that were not there, so it stayed red. Binary files are not accepted in the series: check
    says so, export refuses to write one and says how to take it out; followed, both pass."""
    fork = project / "fork"
    (fork / "docs").mkdir()
    (fork / "docs" / "fig.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01")
    commit(fork, {"docs/guide.md": "See the figure.\n"}, msg("Add a figure"))
    (made,) = format_patch(fork, "HEAD~1..HEAD", tmp_path / "made")  # a patch from elsewhere
    name = made.name.replace("0001", "0004")
    made.rename(three.dir / name)
    three.series_file.write_text(three.series_file.read_text() + name + "\n")
    save(project, "a figure")
    (said,) = [p for p in lint(three) if name in p]
    assert said.startswith(f"{name}: a binary diff of docs/fig.png; binary files are not "
                           "accepted in an upstream TE patch series"), said  # fmt: skip
    assert "take each out of its commit in fork/ (export says how)" in said, said
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and f"binary diffs into the series ({name}: docs/fig.png)" in out, out
    (rebase,) = re.findall(r"(git -C fork rebase -i \w+), 'edit' that commit", out)
    sh(
        *shlex.split(rebase),
        cwd=project,
        env={"GIT_SEQUENCE_EDITOR": "sed -i '/figure/s/^pick/edit/'"},
    )
    steps = re.findall(r"git -C fork (?:rm FILE|commit --amend --no-edit|rebase --continue)", out)
    assert len(steps) == 3, out
    for step in steps:
        sh(*shlex.split(step.replace("FILE", "docs/fig.png")), cwd=project)
    rc, out = te("export", capsys=capsys)
    assert rc == 0 and f"change {name}" in out, out
    assert lint(three) == []


@pytest.mark.parametrize("line,after", [
    ("#3410 caches the fused op lists.", "Lists are what callers index."),  # reword it
    ("# Conflicts:\n#\ttransformer_engine/pytorch/fuser.py", f"Signed-off-by: {PLACEHOLDER}"),
])  # fmt: skip
def test_check_names_a_message_line_git_cleanup_would_drop(project, upstream, capsys, line,
                                                           after):  # fmt: skip
    """tool-review-v11 #1: a message line that starts with '#' is a comment to git's default
    cleanup (an editor, git rebase --continue), which drops it. check names the patch and
    the line; v13 #4: '# Conflicts:' lines below the sign-off (a plain git commit at a
    rebase's stop) are that problem alone, not a sign-off in the body to remove. Rewording
    or deleting the line in fork/, as said, then export, satisfies check."""
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    (name,) = series.names()
    path = series.dir / name
    path.write_text(path.read_text().replace(f"\n{after}\n", f"\n{after}\n\n{line}\n", 1))
    save(project, "a patch from elsewhere")
    problems = lint(series)
    assert len(problems) == line.count("\n") + 1, problems  # the '#' lines, nothing else
    first = line.split("\n")[0]
    assert problems[0].startswith(f"{name}: message line {5 + 2 * (first[1] == ' ')}, {first!r}")
    assert "Delete it where git left it (e.g. '# Conflicts:'" in problems[0], problems
    assert "else reword it so that '#' is not its first character" in problems[0], problems
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    fork = project / "fork"
    message = sh("git", "log", "-1", "--format=%B", cwd=fork)
    fixed = message.replace("\n" + line, "\nPR " + line if first[1] != " " else "")
    sh("git", "commit", "-q", "--amend", "--cleanup=whitespace", "-m", fixed, cwd=fork)
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out
    assert lint(series) == []


OTHER = "transformer_engine/pytorch/other.py"


def two_prs_on_other_py(project, upstream, tmp_path, made_on: str):
    """PR a raises VALUE to 2 in other.py; PR b, `on main`, sets it to 3: its patch made on
    top of a (`made_on` "a") or on main alone ("main")."""
    series = make_series(project, upstream, [
        ({OTHER: '"""Other."""\n\nVALUE = 2\n'}, msg("Raise VALUE")),
        *([({OTHER: '"""Other."""\n\nVALUE = 3\n'}, msg("Set VALUE"))] if made_on == "a" else []),
    ])  # fmt: skip
    if made_on == "main":
        scratch = tmp_path / "scratch"
        sh("git", "clone", "-q", str(upstream), str(scratch), cwd=tmp_path)
        commit(scratch, {OTHER: '"""Other."""\n\nVALUE = 3\n'}, msg("Set VALUE"))
        (made,) = format_patch(scratch, "HEAD~1..HEAD", tmp_path / "made")
        made.rename(series.dir / "0002-PyTorch-Set-VALUE.patch")
    a, b = sorted(p.name for p in series.dir.glob("*.patch"))
    group_prs(series, f"# pr: a\n{a}\n# pr: b on main\n{b}\n", "two PRs")
    return series, b


def test_check_reports_a_pr_that_applies_in_order_but_not_on_its_own_base(project, upstream,
                                                                          tmp_path, capsys):  # fmt: skip
    """issue 26 item 2: PR b says it goes on main, but its patch needs PR a's: in order it
    applies, on main alone it does not; check names the PR, its base, the patch, file, hunk."""
    series, b = two_prs_on_other_py(project, upstream, tmp_path, "a")
    problems = check_mod.check(series, te_src=upstream, wheel=None)
    assert len(problems) == 1, problems
    assert problems[0].startswith(
        f"PR b on main: patch {b} does not apply: file {OTHER}, hunk at line 1 @@ -1,3 +1,3 @@"
    ), problems
    assert 'run "git am' not in problems[0], problems  # v12 #13: not for a throw-away tree
    assert "PR b on main, alone: 1 patch(es) on the base" in capsys.readouterr().err
    path = series.series_file  # on its right base, a, it is checked in order only
    path.write_text(path.read_text().replace("on main", "on a"))
    assert check_mod.check(series, te_src=upstream, wheel=None) == []
    assert "alone" not in capsys.readouterr().err


SEVEN = '"""Other."""\n\nVALUE = 1\n\nNAME = "x"\n\nSIZE = 1\n'


def test_check_and_pr_build_a_pr_that_merges_on_its_base_only_by_3way(
    project, upstream, tmp_path, capsys
):
    """v17 F2: PR c (on a) was made after PR b (on main), so its hunk's context holds b's
    line: on a it merges only by git am -3, with the pre-image (a and b) that only the whole
    series has. check and pr build it the one way (build_prs), so pr makes the branch as
    check did, and its posted patch applies on its base without a merge."""
    move_upstream(project, upstream, {OTHER: SEVEN})
    series = make_series(project, upstream, [
        ({OTHER: SEVEN.replace("VALUE = 1", "VALUE = 2")}, msg("Raise VALUE")),
        ({OTHER: SEVEN.replace("VALUE = 1", "VALUE = 2").replace("SIZE = 1", "SIZE = 2")},
         msg("Raise SIZE")),
        ({OTHER: SEVEN.replace("VALUE = 1", "VALUE = 2").replace("SIZE = 1", "SIZE = 2")
          .replace('"x"', '"y"')}, msg("Rename")),
    ])  # fmt: skip
    a, b, c = series.names()
    group_prs(series, f"# pr: a\n{a}\n# pr: b on main\n{b}\n# pr: c on a\n{c}\n")
    assert check_mod.check(series, te_src=upstream, wheel=None) == []
    out_dir = tmp_path / "out"
    rc, out = te("pr", "--te-src", str(upstream), *WHO, "--out", str(out_dir), capsys=capsys)
    assert rc == 0, out
    clone = tmp_path / "te"
    sh("git", "clone", "-q", str(upstream), str(clone), cwd=tmp_path)
    sh("git", "checkout", "-q", series.base_commit, cwd=clone)
    posted = sorted(str(p) for d in ("a", "c") for p in (out_dir / d).glob("*.patch"))
    sh("git", "am", "-q", *posted, cwd=clone)  # no -3: the branch's commits apply as they are
    want = SEVEN.replace("VALUE = 1", "VALUE = 2").replace('"x"', '"y"')
    assert (clone / OTHER).read_text() == want


def test_check_and_pr_name_a_pr_that_does_not_merge_on_its_base(project, upstream, tmp_path,
                                                                capsys):  # fmt: skip
    """v17 F2: a PR patch that does not merge on its base stops pr, naming the PR, its base,
    the patch, file and hunk, as check names it."""
    series, b = two_prs_on_other_py(project, upstream, tmp_path, "a")
    said = f"PR b on main: patch {b} does not apply: file {OTHER}, hunk at line 1"
    assert check_mod.check(series, te_src=upstream, wheel=None)[0].startswith(said)
    rc, out = te("pr", "--te-src", str(upstream), *WHO, capsys=capsys)
    assert rc == 2 and said in out and "Nothing was written" in out, out
    assert not (project / "pr-out").exists()


def test_check_reports_a_pr_that_applies_on_its_base_but_not_in_order(project, upstream,
                                                                      tmp_path):  # fmt: skip
    """issue 26 item 2, the other way: PR b on main applies there alone, not after PR a."""
    series, b = two_prs_on_other_py(project, upstream, tmp_path, "main")
    problems = "\n".join(check_mod.check(series, te_src=upstream, wheel=None))
    assert f"patch {b} does not apply: file {OTHER}" in problems, problems
    assert "PR b on main:" not in problems, problems


def test_a_mode_change_is_no_new_file_for_the_base_check(tmp_path):
    """A diff section without an index line (a chmod) says nothing of the file's blob: the
    base check takes it from a later patch, and never reads it as a file the series creates,
    which a wheel base refused (v22 R7)"""
    chmod = "diff --git a/te/x.py b/te/x.py\nold mode 100644\nnew mode 100755\n"
    edit = "diff --git a/te/x.py b/te/x.py\nindex 1234567..89abcde 100755\n@@ -1 +1 @@\n"
    new = "diff --git a/te/y.py b/te/y.py\nnew file mode 100644\nindex 0000000..89abcde\n"
    patches = [
        PatchInfo(tmp_path / str(i), "s", "", parse_diff(d)) for i, d in enumerate((chmod, new))
    ]
    assert base_preimages(patches) == {"te/y.py": None}
    patches.append(PatchInfo(tmp_path / "2", "s", "", parse_diff(edit)))
    assert base_preimages(patches) == {"te/y.py": None, "te/x.py": "1234567"}
