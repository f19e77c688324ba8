"""Every "do X" in a message of the input verbs (pr, series and base.toml, bases, range-diff,
port, check, build, bench, test, the git door, the wrapper) is followed here as written, and
the verb then gets past the refusal (results/tool-advice-inputs.md lists each message and
its test). The model: test_apply.py::test_each_advice_of_a_stop_gets_apply_past_it."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from te_series import bench, build, check as check_mod, test as test_mod
from series_helpers import (
    commit,
    copy_in,
    FUSER,
    group_all,
    interrupted_apply,
    make_series,
    make_wheel,
    move_upstream,
    PLACEHOLDER,
    python_without_packages,
    ROOT_DIR,
    save,
    sh,
    te,
    THREE,
    WHO,
)
from test_prerequisites import add_prerequisite, FUSER_PATH, OTHER, POST, SUBJECT


def edit(path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, text)
    path.write_text(text.replace(old, new))


def restore(path: str):
    return lambda p, names: sh("git", "checkout", "--", path, cwd=p)


def series_edit(old, new):
    """An edit of patches/series; old and new may name patch n as {0}, {1}, {2}."""
    return lambda p, names: edit(p / "patches" / "series", old.format(*names), new.format(*names))


def add_bytes(path: str, data: bytes):
    return lambda p, names: (p / path).write_bytes((p / path).read_bytes() + data)


def steps(*fs):
    return lambda p, names: [f(p, names) for f in fs]


BASE = "patches/base.toml"
CHECKOUT_BASE = f"restore the file (git checkout -- {BASE})"
# id: (break the input, what the message says, follow its advice)
PROJECT_FILES = {
    "base.toml missing": (
        lambda p, names: (p / BASE).unlink(),
        f"Restore it (git checkout -- {BASE})",
        restore(BASE),
    ),
    "base.toml not TOML": (
        lambda p, names: (p / BASE).write_text("[upstream\n"),
        f"Fix it, or {CHECKOUT_BASE}",
        restore(BASE),
    ),
    "base.toml lacks a key": (
        lambda p, names: edit(p / BASE, "commit = ", "kommit = "),
        f"Add it, or {CHECKOUT_BASE}",
        restore(BASE),
    ),
    "base.toml value of the wrong type": (
        lambda p, names: edit(p / BASE, "commit = ", "commit = 123 #"),
        CHECKOUT_BASE,
        restore(BASE),
    ),
    "base.toml commit that is no full id": (  # tool-review-v9 #4: HEAD was taken as it is
        lambda p, names: edit(p / BASE, 'commit = "', 'commit = "HEAD" # "'),
        "(a full commit id: git rev-parse COMMIT prints it)",
        restore(BASE),
    ),
    "base.toml prerequisite table": (
        lambda p, names: (p / BASE).write_text('prerequisite = "3410"\n' + (p / BASE).read_text()),
        f"Fix it, or {CHECKOUT_BASE}",
        restore(BASE),
    ),
    "base.toml not UTF-8, restored": (
        add_bytes(BASE, b"# caf\xe9\n"),
        CHECKOUT_BASE,
        restore(BASE),
    ),
    "series not UTF-8, fixed in an editor": (
        add_bytes("patches/series", b"# caf\xe9\n"),
        "Fix that line in an editor",
        lambda p, names: (p / "patches/series").write_bytes(
            (p / "patches/series").read_bytes().replace(b"\xe9", b"e")
        ),
    ),
    "series not UTF-8, restored": (
        add_bytes("patches/series", b"# caf\xe9\n"),
        "restore the file (git checkout -- patches/series)",
        restore("patches/series"),
    ),
    "patch file deleted": (
        lambda p, names: (p / "patches" / names[1]).unlink(),
        "restore the file (git checkout -- patches/0002-",
        lambda p, names: restore(f"patches/{names[1]}")(p, names),
    ),
    "line naming no file": (
        series_edit("{2}\n", "{2}\n0042-missing.patch\n"),
        "0042-missing.patch, which does not exist in patches/; restore the file",
        series_edit("0042-missing.patch\n", ""),  # "or remove the line"
    ),
    "line with a folder": (  # tool-review-v8 #10
        steps(
            lambda p, names: (p / "patches" / "x.patch").mkdir(),
            series_edit("{2}\n", "{2}\nx.patch\n"),
        ),
        "names x.patch, a folder, not a patch file; remove the line",
        series_edit("x.patch\n", ""),
    ),
    "line with a path": (  # tool-review-v8 #10
        series_edit("{0}\n", "./{0}\n"),
        "a series line is a bare file name in patches/; write it as 0001-",
        series_edit("./{0}\n", "{0}\n"),
    ),
    "line not a patch file": (
        series_edit("{2}\n", "{2}\nbase.toml\n"),
        "which is not a patch file (*.patch); remove the line, or make it a comment (# ...)",
        series_edit("base.toml\n", "# base.toml\n"),
    ),
    "line with a name and more": (
        series_edit("{0}\n", "{0} # the first\n"),
        "a series line is one file name; move '# the first' to a line of its own",
        series_edit("{0} # the first\n", "{0}\n# the first\n"),
    ),
    "line twice": (
        series_edit("{2}\n", "{2}\n{0}\n"),
        "twice (lines 2 and 5); remove one line",
        series_edit("{2}\n{0}\n", "{2}\n"),
    ),
}


@pytest.mark.parametrize("case", PROJECT_FILES)
def test_each_advice_for_a_broken_project_file_gets_apply_past_it(
    three, project, upstream, capsys, case
):
    broken, says, follow = PROJECT_FILES[case]
    names = three.names()
    broken(project, names)
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and says in out and "Traceback" not in out, out
    follow(project, names)
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert three.names() == names


def cache(version: str, upstream, override=None) -> Path:
    """A fake wheel of this release in the (test) wheel cache."""
    dist = Path(os.environ["TE_SERIES_CACHE"]) / "dist"
    (dist / f"transformer_engine-{version}-py3-none-any.whl").unlink(missing_ok=True)
    return make_wheel(upstream, dist, version=version, override=override)


def test_the_targets_example_is_a_port_target_and_works_as_written(three, project, upstream,
                                                                    capsys):  # fmt: skip
    """tool-review-v8 #13c: the example was the PyPI release itself, as a newer release."""
    edit(project / BASE, 'targets = ["10.0.0"]', 'targets = "2.19.0"')
    rc, out = te("port", capsys=capsys)
    said = 'Write it as targets = ["2.19.0"]'
    assert rc == 2 and said in out and "(the other releases the series is ported to)" in out, out
    edit(project / BASE, 'targets = "2.19.0"', said.removeprefix("Write it as "))
    cache("9.9.9", upstream)
    cache("2.19.0", upstream)
    rc, out = te("port", capsys=capsys)
    assert rc == 0 and "port to 2.19.0: ok" in out, out


def test_a_release_that_does_not_merge_can_be_taken_out_of_the_targets(three, project, upstream,
                                                                       capsys):  # fmt: skip
    """The advice of a port conflict: take the release out of [port] targets (its only one)."""
    cache("9.9.9", upstream)
    cache("10.0.0", upstream, {FUSER_PATH: FUSER.replace("tuple(values)", "set(values)")})
    rc, out = te("port", capsys=capsys)
    assert rc == 2 and "or take 10.0.0 out of base.toml's [port] targets" in out, out
    edit(project / BASE, 'targets = ["10.0.0"]', "targets = []")
    rc, out = te("port", capsys=capsys)
    assert rc == 0, out


@pytest.mark.parametrize(
    "layout, says",
    [
        ("an inline table", 'is not `commit = "<id>"` in the [upstream] table. Write it that way'),
        ("a multi-line string", 'alone. Write it as `commit = "<id>"` in the [upstream] table'),
    ],
    ids=["an inline table", "a multi-line string"],
)
def test_the_advice_for_a_commit_line_rebase_cannot_edit_gets_it_past(three, project, upstream,
                                                                      capsys, layout, says):  # fmt: skip
    toml, old = project / BASE, three.base_commit
    good, line = toml.read_text(), f'commit = "{old}"'
    if layout == "an inline table":
        edit(toml, f"[upstream]\n# upstream main\n{line}\n", f"upstream = {{ {line} }}\n")
    else:
        edit(toml, line, f'commit = """{old}"""')
    save(project, layout)
    commit(upstream, {"README": "news\n"}, "Upstream news")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and says in out and "commit patches/base.toml, and run again" in out, out
    toml.write_text(good)  # commit = "<id>" in [upstream], committed
    save(project, "as the advice says")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out


# --------------------------------------------------------------------------- project root


def test_the_wrapper_says_how_to_restore_a_missing_series(project):
    """tool-review-v8 #13a: it said "run the te-series script of a checkout" (it was one)."""
    shutil.copy2(ROOT_DIR / "te-series", project / "te-series")
    (project / ".venv" / "bin").mkdir(parents=True)
    py = project / ".venv" / "bin" / "python"
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    py.chmod(0o755)
    (project / "patches" / "series").unlink()

    def run(*cmd):
        return subprocess.run(cmd, cwd=project, capture_output=True, text=True, check=False)

    proc = run("./te-series", "status")
    assert proc.returncode == 2 and "patches/series is missing" in proc.stderr, proc.stderr
    run(*shlex.split(proc.stderr.split("restore it: ")[1]))
    proc = run("./te-series", "status")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("how", ["TE_SERIES_ROOT, restored", "TE_SERIES_ROOT, unset", "no root"])
def test_the_advice_for_a_missing_series_gets_the_tool_going(project, tmp_path, monkeypatch,
                                                             capsys, how):  # fmt: skip
    other = copy_in(project, tmp_path / "other")
    (project / "patches" / "series").unlink()
    if how == "no root":
        monkeypatch.delenv("TE_SERIES_ROOT")
    rc, out = te("status", capsys=capsys)
    assert rc == 2 and "patches/series" in out, out
    if how == "TE_SERIES_ROOT, restored":
        assert f"restore it there (git -C {project} checkout -- patches/series)" in out, out
        sh("git", "-C", str(project), "checkout", "--", "patches/series", cwd=project)
    elif how == "TE_SERIES_ROOT, unset":  # "... to work where you are": another checkout
        assert "or unset TE_SERIES_ROOT to work where you are" in out, out
        monkeypatch.delenv("TE_SERIES_ROOT")
        monkeypatch.chdir(other / "patches")
    else:  # first "run inside a te-series checkout", then restore it there
        assert "run inside a te-series checkout" in out, out
        monkeypatch.chdir(project)
        rc, out = te("status", capsys=capsys)
        assert "restore it: git checkout -- patches/series" in out, out
        sh("git", "checkout", "--", "patches/series", cwd=project)
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and "no fork/" in out, out


# --------------------------------------------------------------------------- pr

TEMPLATE = (
    "# Description\n\nx\n\nFixes # (issue)\n\n## Type of change\n\n## Changes\n\n# Checklist\n"
)


def two_prs(three, project) -> None:
    a, b, c = three.names()
    three.series_file.write_text(f"# pr: values\n{a}\n{b}\n# pr: tests\n{c}\n")
    (three.dir / "pr").mkdir()
    for slug in ("values", "tests"):
        (three.dir / "pr" / f"{slug}.md").write_text(TEMPLATE)
    save(project, "two PRs")


def rename(old: str, new: str):
    return lambda d: (d / "pr" / old).rename(d / "pr" / new)


def text_edit(name: str, old: str, new: str):
    return lambda d: edit(d / name, old, new)


def both(*fs):
    return lambda d: [f(d) for f in fs]


# id: (break patches/, what pr (and check) say, follow the advice), on two PRs
PR_GROUPS = {
    "marker not in lower case": (
        text_edit("series", "# pr: tests", "# PR: tests"),
        "'# PR: tests' is a comment, not a PR marker; write it '# pr: tests' to start a PR",
        text_edit("series", "# PR: tests", "# pr: tests"),
    ),
    "marker with a space before its colon": (  # tool-review-v12 #12: the base is kept
        text_edit("series", "# pr: tests", "# pr : tests on main"),
        "'# pr : tests on main' is a comment, not a PR marker; write it '# pr: tests on main' "
        "to start a PR",
        text_edit("series", "# pr : tests on main", "# pr: tests on main"),
    ),
    "slug main": (  # tool-review-v12 #9: `on main` would name it to check, upstream to pr
        both(text_edit("series", "# pr: tests", "# pr: main"), rename("tests.md", "main.md")),
        "line 4: PR 'main': 'main' names the series' git base; give the PR another slug (and "
        "its description file to match)",
        both(text_edit("series", "# pr: main", "# pr: tests"), rename("main.md", "tests.md")),
    ),
    "not a slug": (
        text_edit("series", "# pr: tests", "# pr: Tests"),
        "'Tests' is not a PR slug (lower-case letters, digits, '.', '_', '-', starting with a "
        "letter or digit)",
        text_edit("series", "# pr: Tests", "# pr: tests"),
    ),
    "a slug twice": (
        text_edit("series", "# pr: tests", "# pr: values"),
        "PR 'values' appears twice (line 1 too); give one of them another slug",
        text_edit("series", "# pr: values\n0003", "# pr: tests\n0003"),
    ),
    "patches before the first marker": (
        lambda d: d.joinpath("series").write_text(
            "\n".join(["{0}", "# pr: values", "{1}", "# pr: tests", "{2}", ""]).format(
                *sorted(p.name for p in d.glob("*.patch"))
            )
        ),
        "stand(s) before the first '# pr:' line of patches/series; move them below one",
        lambda d: d.joinpath("series").write_text(
            "\n".join(["# pr: values", "{0}", "{1}", "# pr: tests", "{2}", ""]).format(
                *sorted(p.name for p in d.glob("*.patch"))
            )
        ),
    ),
    # each PR names its base (issue 26 item 2): main, or an earlier PR
    "a base that is no PR": (
        text_edit("series", "# pr: tests", "# pr: tests on nothing"),
        "line 4: PR 'tests' is on 'nothing', which is no PR of patches/series; name main or "
        "the slug of a PR above it",
        text_edit("series", "# pr: tests on nothing", "# pr: tests on values"),
    ),
    "a base that comes later": (
        text_edit("series", "# pr: values", "# pr: values on tests"),
        "line 1: PR 'values' is on 'tests', which comes after it (line 4); name main or the "
        "slug of a PR above it",
        text_edit("series", "# pr: values on tests", "# pr: values on main"),
    ),
    "a PR on itself": (
        text_edit("series", "# pr: tests", "# pr: tests on tests"),
        "line 4: PR 'tests' is on itself; name main or the slug of a PR above it",
        text_edit("series", "# pr: tests on tests", "# pr: tests on main"),
    ),
    "a malformed marker": (
        text_edit("series", "# pr: tests", "# pr: tests on"),
        "line 4: '# pr: tests on' is no PR marker: write it '# pr: <slug>' (on the PR before "
        "it) or '# pr: <slug> on <base>' (<base>: main, or the slug of an earlier PR)",
        text_edit("series", "# pr: tests on", "# pr: tests"),
    ),
    "a group without patches": (
        lambda d: d.joinpath("series").write_text(d.joinpath("series").read_text() + "# pr: x\n"),
        "PR 'x' has no patches; remove its '# pr:' line",
        text_edit("series", "# pr: x\n", ""),
    ),
    "slug pr.bundle": (  # tool-review-v8 #7
        both(text_edit("series", "# pr: tests", "# pr: pr.bundle"), rename("tests.md", "pr.bundle.md")),
        "line 4: PR slug 'pr.bundle' is the name of a file pr writes; rename it (e.g. "
        "'pr-bundle', and its description patches/pr/pr.bundle.md to match)",
        both(text_edit("series", "# pr: pr.bundle", "# pr: pr-bundle"), rename("pr.bundle.md", "pr-bundle.md")),
    ),
    "slug another slug's description": (  # tool-review-v8 #7
        both(text_edit("series", "# pr: tests", "# pr: values.md"), rename("tests.md", "values.md.md")),
        "PR slug 'values.md' is the name of a file pr writes; rename it (e.g. 'values-md'",
        both(text_edit("series", "# pr: values.md", "# pr: values-md"), rename("values.md.md", "values-md.md")),
    ),
    "no description": (
        lambda d: (d / "pr" / "tests.md").unlink(),
        "PR 'tests' has no description patches/pr/tests.md; write it in TE's PR template (lines "
        "starting '# Description', 'Fixes #', '## Type of change', '## Changes', '# Checklist')",
        lambda d: (d / "pr" / "tests.md").write_text(
            "# Description\nFixes #\n## Type of change\n## Changes\n# Checklist\n"
        ),
    ),
    "a template line missing": (
        text_edit("pr/tests.md", "# Checklist\n", ""),
        "patches/pr/tests.md lacks TE's template line '# Checklist'; add a line starting with it",
        lambda d: (d / "pr" / "tests.md").write_text(TEMPLATE + "# Checklist: done\n"),
    ),
    "a description of no group": (
        lambda d: (d / "pr" / "old.md").write_text(TEMPLATE),
        "patches/pr/old.md belongs to no '# pr:' group; delete it, or add '# pr: old'",
        lambda d: (d / "pr" / "old.md").unlink(),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", PR_GROUPS)
def test_each_advice_for_pr_groups_gets_pr_past_it(three, project, upstream, tmp_path, capsys,
                                                   case):  # fmt: skip
    broken, says, follow = PR_GROUPS[case]
    two_prs(three, project)
    broken(three.dir)
    out_dir = tmp_path / "out"
    rc, out = te("pr", "--te-src", str(upstream), *WHO, "--out", str(out_dir), capsys=capsys)
    assert rc == 2 and says in out and not out_dir.exists(), out
    assert says in "\n".join(check_mod.lint_groups(three))  # check says it too
    follow(three.dir)
    rc, out = te("pr", "--te-src", str(upstream), *WHO, "--out", str(out_dir), capsys=capsys)
    assert rc == 0, out


def test_a_marker_written_twice_gets_one_advice(three, project):
    """tool-review-v23 #8: a '# pr:' line doubled also got "PR has no patches; remove its line
    and put the PRs on it on main", which would unstack a PR that has patches."""
    two_prs(three, project)
    edit(three.dir / "series", "# pr: values\n", "# pr: values\n# pr: values\n")
    (said,) = check_mod.lint_groups(three)
    assert "PR 'values' appears twice (line 1 too); give one of them another slug" in said


@pytest.mark.parametrize(
    "given, says, follow",
    [
        pytest.param(None, "no submitter identity", WHO, id="none, --identity"),
        pytest.param(None, "Set git config user.name/user.email here", "config", id="none, config"),
        pytest.param("Jane", "--identity 'Jane' is not \"Name <email>\"", WHO, id="not an identity"),
        pytest.param(PLACEHOLDER, "set your own (git config user.name/user.email, or --identity",
                     WHO, id="the placeholder"),
        pytest.param("Jane <jane@x.test>", "Use your real address (--identity", WHO,
                     id="a reserved domain"),
    ],
)  # fmt: skip
def test_each_advice_for_the_identity_gets_pr_past_it(three, project, upstream, capsys, given,
                                                      says, follow):  # fmt: skip
    group_all(three, project)
    args = ["pr", "--te-src", str(upstream)]
    rc, out = te(*args, *(["--identity", given] if given else []), capsys=capsys)
    assert rc == 2 and says in out, out
    if follow == "config":
        sh("git", "config", "user.name", "Jane Doe", cwd=project)
        sh("git", "config", "user.email", "jane@doe.dev", cwd=project)
        follow = ()
    rc, out = te(*args, *follow, capsys=capsys)
    assert rc == 0 and "signed off by Jane Doe <jane@doe.dev>" in out, out


def test_the_advice_for_a_placeholder_left_in_a_commit_gets_pr_past_it(three, project, upstream,
                                                                       capsys):  # fmt: skip
    group_all(three, project)
    fork = project / "fork"
    sh("git", "commit", "-q", "--amend", "-m",
       sh("git", "log", "-1", "--format=%B", cwd=fork) + f"\nCo-authored-by: {PLACEHOLDER}",
       cwd=fork)  # fmt: skip
    assert te("export")[0] == 0
    save(project, "a co-author")
    rc, out = te("pr", "--te-src", str(upstream), *WHO, capsys=capsys)
    said = "Edit those patches (te-series apply --te-src PATH, git -C fork rebase -i, te-series "
    assert rc == 2 and said + "export), then run pr again" in out, out
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 3s/^pick/reword/", "GIT_EDITOR": "sed -i /Co-authored/d"}
    sh("git", "rebase", "-q", "-i", "HEAD~3", cwd=fork, env=env)  # fork/ exists: no apply
    assert te("export")[0] == 0
    rc, out = te("pr", "--te-src", str(upstream), *WHO, capsys=capsys)
    assert rc == 0, out


def test_the_advice_for_a_base_without_a_prerequisite_gets_pr_past_it(project, upstream, tmp_path,
                                                                      capsys):  # fmt: skip
    """It also said the rebase "drops them from base.toml": the tables stay (prereq F1). And
    it said "te-series rebase --onto origin/main", a no-op while upstream main lacks them
    too, after which pr refused again (v19 F5): it says so, and how to go on."""
    series = add_prerequisite(project, upstream)
    make_series(project, upstream, [OTHER])
    group_all(series, project)
    te_src = tmp_path / "te"
    sh("git", "clone", "-q", str(upstream), str(te_src), cwd=tmp_path)  # a checkout: origin/main
    rc, out = te("pr", "--te-src", str(te_src), *WHO, capsys=capsys)
    base = series.base_commit
    assert rc == 2 and f"{te_src}'s origin/main ({base[:12]}) has not merged them" in out, out
    (check,) = re.findall(r"Until then (te-series check --te-src \S+) tests each PR", out)
    assert te(*shlex.split(check)[1:], capsys=capsys)[0] == 0
    commit(upstream, {FUSER_PATH: POST}, SUBJECT)  # upstream merges #42
    (fetch,) = re.findall(r"Fetch it \((git -C \S+ fetch origin)\)", out)
    sh(*shlex.split(fetch), cwd=tmp_path)
    ((rebase, pr),) = re.findall(r"origin/main has them: (te-series rebase .*?), then run (pr)", out)
    merged = sh("git", "rev-parse", "HEAD", cwd=upstream)[:12]
    rc, out = te("pr", "--te-src", str(te_src), *WHO, capsys=capsys)  # it names that main now
    assert rc == 2 and f"{te_src}'s origin/main ({merged}) has them: {rebase}" in out, out
    rc, out = te(*shlex.split(rebase)[1:], capsys=capsys)
    assert rc == 0, out
    assert "[[prerequisite]]" in (project / BASE).read_text()
    rc, out = te(pr, "--te-src", str(te_src), *WHO, capsys=capsys)
    assert rc == 0, out


@pytest.mark.parametrize("case", ["no groups", "no --te-src", "a folder not pr's", "a patch fails"])
def test_each_other_advice_of_pr_is_followed(three, project, upstream, tmp_path, capsys, case):
    out_dir = tmp_path / "out"
    args = ["pr", "--te-src", str(upstream), *WHO, "--out", str(out_dir)]
    if case == "no groups":
        rc, out = te(*args, capsys=capsys)
        assert rc == 2 and "group the patches into PRs first (a line '# pr: <slug>'" in out, out
        group_all(three, project)  # as it says: the line, and the description
    else:
        group_all(three, project)
    if case == "no --te-src":
        rc, out = te("pr", *WHO, capsys=capsys)
        assert rc == 2 and "pr needs a git base: --te-src PATH" in out, out
    if case == "a folder not pr's":
        mine = tmp_path / "mine"
        (mine / "a").mkdir(parents=True)
        rc, out = te(*args[:-1], str(mine), capsys=capsys)
        assert rc == 2 and "was not written by te-series pr; choose another --out" in out, out
    if case == "a patch fails":
        patch = three.paths()[1]
        good = patch.read_text()
        patch.write_text(good.replace(' """Return values as a tuple."""', ' """Hand edit."""'))
        rc, out = te(*args, capsys=capsys)
        assert rc == 2 and "Nothing was written; te-series check names it too." in out, out
        problems = check_mod.check(three, te_src=upstream, wheel=None)
        assert any(patch.name in p for p in problems), problems
        patch.write_text(good)
    rc, out = te(*args, capsys=capsys)
    assert rc == 0, out


def test_pr_keeps_the_empty_folders_of_yours_in_its_output(three, project, upstream, tmp_path):
    """tool-review-v8 #9: pr removed every empty folder under --out, not only its own."""
    group_all(three, project)
    out = tmp_path / "out"
    args = ["pr", "--te-src", str(upstream), *WHO, "--out", str(out)]
    assert te(*args)[0] == 0
    (out / "my-empty-folder" / "sub").mkdir(parents=True)
    assert te(*args)[0] == 0
    assert (out / "my-empty-folder" / "sub").is_dir()
    assert len(list((out / "all").glob("*.patch"))) == 3


# --------------------------------------------------------------------------- bases


def test_the_advice_for_a_wheel_without_the_package_gets_apply_past_it(three, tmp_path, upstream,
                                                                       capsys):  # fmt: skip
    import zipfile

    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("other/x.py", "x = 1\n")
    rc, out = te("apply", "--force", "--wheel", str(wheel), capsys=capsys)
    assert rc == 2 and "pass the pure-Python transformer_engine wheel" in out, out
    wheel = make_wheel(upstream, tmp_path / "w")  # transformer_engine-9.9.9-py3-none-any.whl
    rc, out = te("apply", "--force", "--wheel", str(wheel), capsys=capsys)
    assert rc == 0, out


@pytest.mark.parametrize("shallow", [False, True], ids=["behind", "shallow"])  # v12 #6
def test_the_advice_for_a_base_commit_not_in_te_src_gets_apply_past_it(three, project, upstream,
                                                                       tmp_path, capsys, shallow):  # fmt: skip
    te_src = tmp_path / "te"
    if not shallow:  # a checkout from before upstream moved on
        sh("git", "clone", "-q", str(upstream), str(te_src), cwd=tmp_path)
    move_upstream(project, upstream, {"README": "upstream news\n"})
    if shallow:  # a `clone --depth 1` of a main past the base commit: it lacks the base
        commit(upstream, {"NEWS": "later\n"}, "upstream moves on")
        sh("git", "clone", "-q", "--depth", "1", f"file://{upstream}", str(te_src), cwd=tmp_path)
    rc, out = te("apply", "--force", "--te-src", str(te_src), capsys=capsys)
    fetch = "--unshallow origin" if shallow else "origin main"
    said = f"Fetch upstream main there (git -C {te_src} fetch {fetch}) and run again"
    assert rc == 2 and said in out, out
    subprocess.run(shlex.split(said.split("(")[1].split(")")[0]), check=True)  # as written
    rc, out = te("apply", "--force", "--te-src", str(te_src), capsys=capsys)
    assert rc == 0, out


@pytest.mark.parametrize("follow", ["the base.toml commit", "the title as subject"])
def test_the_advice_for_a_base_that_changed_the_prerequisite_file_gets_apply_past_it(
    project, upstream, capsys, follow
):
    add_prerequisite(project, upstream)
    old = sh("git", "rev-parse", "HEAD", cwd=upstream).strip()
    revised = POST.replace("CACHE = {}", "CACHE: dict = {}")
    title = "Cache fused ops, revised (#42)"
    new = move_upstream(project, upstream, {FUSER_PATH: revised})
    sh("git", "commit", "-q", "--amend", "-m", title, cwd=upstream)
    edit(project / BASE, new, sh("git", "rev-parse", "HEAD", cwd=upstream).strip())
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    said = "Use a base with that file at one of the two ids (base.toml's [upstream] commit or "
    assert rc == 2 and said + "[pypi] release)" in out, out
    assert "write that title as the table's subject in base.toml" in out, out
    if follow == "the base.toml commit":
        edit(project / BASE, sh("git", "rev-parse", "HEAD", cwd=upstream).strip(), old)
    else:
        edit(project / BASE, f'subject = "{SUBJECT}"', f'subject = "{title}"')
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out


@pytest.mark.parametrize("case", ["a folder", "a release without the post-image"])
def test_the_advice_for_a_prerequisite_pin_gets_apply_past_it(project, upstream, capsys, case):
    if case == "a folder":
        add_prerequisite(project, upstream)
        edit(project / BASE, f'"{FUSER_PATH}"', '"transformer_engine/pytorch"')
        says = "must name a file (fix the path)"
    else:
        add_prerequisite(project, upstream, post=POST + "WRONG = 1\n")
        says = "set it to one whose file is the post-image"
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and says in out, out
    if case == "a folder":
        edit(project / BASE, '"transformer_engine/pytorch"', f'"{FUSER_PATH}"')
    else:
        cache("9.9.11", upstream, {FUSER_PATH: POST})
        edit(project / BASE, 'release = "9.9.10"', 'release = "9.9.11"')
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out


@pytest.mark.parametrize("follow", ["a git base", "port"])
def test_the_advice_for_a_release_that_does_not_match_gets_past_it(three, upstream, capsys,
                                                                   follow):  # fmt: skip
    cache("9.9.9", upstream)
    wheel = cache("10.0.0", upstream, {FUSER_PATH: "X = 1\n\n\n" + FUSER})
    rc, out = te("apply", "--force", "--wheel", str(wheel), capsys=capsys)
    assert rc == 2 and "Use a git base (--te-src) or `te-series port` for a different" in out
    if follow == "a git base":
        rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    else:
        rc, out = te("port", "--release", "10.0.0", capsys=capsys)
    assert rc == 0, out


def damage(wheel: Path, how: str) -> None:
    """A wheel cut short, one byte of fuser.py's stored data changed (only its CRC tells), or
    its deflated data broken (the zip directory whole: zlib's error)."""
    if how == "cut short":
        wheel.write_bytes(wheel.read_bytes()[:-100])
        return
    path = "transformer_engine/pytorch/fuser.py"
    if how == "deflate":
        with zipfile.ZipFile(wheel) as zf:
            members = {n: zf.read(n) for n in zf.namelist()}
        members[path] += b"".join(b"# %d\n" % i for i in range(2000))  # data to break
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
            for n, data in members.items():
                zf.writestr(n, data)
    info = zipfile.ZipFile(wheel).getinfo(path)
    data = bytearray(wheel.read_bytes())
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    for k in range(8 if how == "deflate" else 1):
        data[at + k] ^= 0xFF
    wheel.write_bytes(bytes(data))
    assert zipfile.is_zipfile(wheel)


@pytest.mark.parametrize("how", ["cut short", "crc", "deflate"])
def test_a_damaged_wheel_in_the_cache_is_fetched_again(three, upstream, monkeypatch, capsys, how):
    """tool-review-v19 F2: a cached wheel cut short (a download that did not finish) stopped
    apply as "not a wheel (not a zip file)", on every run, with no way on (on a git base: as
    a base.toml release without the prerequisite). It is the cache's: fetched again. v20 #3,
    #4: so is one whose zip directory is whole but a member's data is not (a bad block): it
    was an internal error (zlib), or "not a wheel" for ever."""
    damage(cache("9.9.9", upstream), how)
    real = subprocess.run

    def run(cmd, *args, **kw):  # pip download, as it fetches the wheel
        if "download" not in cmd:
            return real(cmd, *args, **kw)
        cache("9.9.9", upstream)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(subprocess, "run", run)
    rc, out = te("apply", "--force", capsys=capsys)
    said = "is damaged (it fails its zip and checksum test): fetching it again"
    assert rc == 0 and said in out, out


@pytest.mark.parametrize("how", ["crc", "deflate"])
def test_a_damaged_wheel_of_mine_is_named_not_a_bug(three, upstream, tmp_path, capsys, how):
    """tool-review-v20 #3: a --wheel whose member data is damaged was an internal error."""
    wheel = make_wheel(upstream, tmp_path / "mine")
    damage(wheel, how)
    rc, out = te("apply", "--force", "--wheel", str(wheel), capsys=capsys)
    assert rc == 2 and f"{wheel} is not a wheel (not a whole zip file: " in out, out


def test_the_releases_a_failed_download_names_can_be_used(three, upstream, monkeypatch, capsys):
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    rc, out = te("port", "--release", "7.7.7", capsys=capsys)
    assert rc == 2 and "Releases in patches/base.toml: 9.9.9 (base), 10.0.0 (port target)" in out
    cache("9.9.9", upstream)
    cache("10.0.0", upstream)
    rc, out = te("port", "--release", "10.0.0", capsys=capsys)
    assert rc == 0, out


def test_the_hash_of_the_environment_does_not_reach_the_tools_git(three, upstream, monkeypatch,
                                                                  capsys):  # fmt: skip
    """tool-review-v8 #13b: GIT_DEFAULT_HASH=sha256 made the PyPI base a sha256 repository,
    whose 64-digit blob ids matched none of the series (advice: edit base.toml)."""
    cache("9.9.9", upstream)
    monkeypatch.setenv("GIT_DEFAULT_HASH", "sha256")
    rc, out = te("apply", "--force", capsys=capsys)
    assert rc == 0, out
    fork = three.root / "fork"
    assert len(sh("git", "rev-parse", "HEAD", cwd=fork).strip()) == 40


# --------------------------------------------------------------------------- range-diff


def test_each_advice_of_range_diff_gets_it_past(three, project, upstream, tmp_path, capsys):
    args = ["range-diff", "--te-src", str(upstream)]
    # REV without patches/series: compare with a revision that has one
    sh("git", "rm", "-q", "patches/series", cwd=project)
    save(project, "no series")
    sh("git", "checkout", "HEAD~1", "--", "patches/series", cwd=project)
    save(project, "series again")
    rc, out = te(*args, "HEAD~1", capsys=capsys)
    assert rc == 2 and "HEAD~1 has no patches/series; compare with a revision that has one" in out
    assert te(*args, "HEAD~2")[0] == 0
    # --out a tracked file: name another file; an existing file: delete it first
    (project / "notes.md").write_text("mine\n")
    sh("git", "add", "notes.md", cwd=project)
    save(project, "notes")
    rc, out = te(*args, "HEAD", "--out", str(project / "notes.md"), capsys=capsys)
    assert rc == 2 and "Name another file (e.g. series.range-diff)" in out, out
    assert te(*args, "HEAD", "--out", str(tmp_path / "series.range-diff"))[0] == 0
    rc, out = te(*args, "HEAD", "--out", str(tmp_path / "series.range-diff"), capsys=capsys)
    assert rc == 2 and "Delete it first (if it is an old range-diff)" in out, out
    (tmp_path / "series.range-diff").unlink()
    assert te(*args, "HEAD", "--out", str(tmp_path / "series.range-diff"))[0] == 0
    # versions on different releases: compare them on a git base
    edit(project / BASE, 'release = "9.9.9"', 'release = "9.9.8"')
    rc, out = te("range-diff", "HEAD", capsys=capsys)
    assert rc == 2 and "compare them on a git base: --te-src PATH" in out, out
    assert te(*args, "HEAD")[0] == 0
    # a link out of patches/: take it out (git rm it, commit)
    (project / "patches" / "notes.md").symlink_to(project / "README.absent")
    save(project, "an absolute link")
    rc, out = te(*args, "HEAD", capsys=capsys)
    assert rc == 2 and "take that entry out of patches/ (git rm it, commit)" in out, out
    sh("git", "rm", "-q", "patches/notes.md", cwd=project)
    save(project, "no link")
    assert te(*args, "HEAD")[0] == 0


def test_the_advice_for_a_version_written_without_its_prerequisite_is_followed(
    project, upstream, capsys
):
    make_series(project, upstream, [THREE[1]])  # fuser.py from its pre-image
    add_prerequisite(project, upstream)  # the table, with the old patches
    rc, out = te("range-diff", "HEAD", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "compare with a revision whose base.toml and patches go together" in out
    rc, out = te("range-diff", "HEAD~1", "HEAD~1", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out


# --------------------------------------------------------------------------- port


def test_a_series_that_does_not_apply_on_its_release_is_named_by_check(three, upstream, capsys):
    cache("9.9.9", upstream)
    cache("10.0.0", upstream)
    patch = three.paths()[1]
    good = patch.read_text()
    patch.write_text(good.replace(' """Return values as a tuple."""', ' """Hand edit."""'))
    rc, out = te("port", capsys=capsys)
    assert rc == 2 and "Fix the series first (te-series check names what fails)" in out, out
    problems = check_mod.check(three, te_src=None, wheel=None)
    assert any(patch.name in p for p in problems), problems
    patch.write_text(good)  # the fix
    rc, out = te("port", capsys=capsys)
    assert rc == 0, out


def test_each_advice_of_port_gets_it_past(three, project, upstream, tmp_path, capsys):
    cache("9.9.9", upstream)
    cache("10.0.0", upstream)
    cache("2.19.0", upstream)
    old = tmp_path / "out" / "10.0.0"
    old.mkdir(parents=True)
    (old / "0001-x.patch").write_text("old\n")
    rc, out = te("port", "--out", str(tmp_path / "out"), capsys=capsys)
    assert rc == 2 and "Delete that folder first (if it is an old port)" in out, out
    shutil.rmtree(old)
    assert te("port", "--out", str(tmp_path / "out"))[0] == 0
    edit(project / BASE, 'targets = ["10.0.0"]', 'targets = ["10.0.0", "2.19.0"]')
    rc, out = te("port", "--edit", capsys=capsys)
    assert rc == 2 and "--edit needs one release: --release one of 10.0.0, 2.19.0" in out, out
    rc, out = te("port", "--edit", "--release", "2.19.0", capsys=capsys)
    assert rc == 0, out


def test_the_advice_for_a_port_patch_that_fails_gets_port_past_it(three, project, upstream,
                                                                  capsys):  # fmt: skip
    doc = '"""Toy fuser."""'
    cache("9.9.9", upstream)
    cache("10.0.0", upstream)
    assert te("port", "--release", "10.0.0", "--edit")[0] == 0
    tree = project / "fork-port" / "10.0.0"
    fuser = tree / FUSER_PATH
    ported = fuser.read_text().replace(doc, '"""Toy fuser, ported."""')
    commit(tree, {FUSER_PATH: ported}, "[PyTorch] Port\n\nx.")
    assert te("export", "--port", "10.0.0")[0] == 0
    save(project, "port patch")
    shutil.rmtree(tree)
    cache("10.0.0", upstream, {FUSER_PATH: FUSER.replace(doc, '"""Toy fuser, 10."""')})
    rc, out = te("port", "--release", "10.0.0", capsys=capsys)
    assert rc == 2 and "Edit the port patches with te-series port --release 10.0.0 --edit." in out
    rc, out = te("port", "--release", "10.0.0", "--edit", capsys=capsys)
    assert rc == 2 and "te-series apply --continue --port 10.0.0" in out, out
    fuser.write_text(ported)
    sh("git", "add", "-A", cwd=tree)
    rc, out = te("apply", "--continue", "--port", "10.0.0", capsys=capsys)
    assert rc == 0, out
    assert te("export", "--port", "10.0.0")[0] == 0
    rc, out = te("port", "--release", "10.0.0", capsys=capsys)
    assert rc == 0, out


# --------------------------------------------------------------------------- check, build, ...


def test_check_tests_on_a_wheel_is_told_to_take_a_git_base(three, upstream, tmp_path, capsys,
                                                           monkeypatch):  # fmt: skip
    cache("9.9.9", upstream)
    rc, out = te("check", "--tests", capsys=capsys)
    assert rc == 2 and "--tests needs a git base (--te-src)" in out, out
    monkeypatch.setattr(sys, "executable", str(python_without_packages(tmp_path / "bare")))
    rc, out = te("check", "--tests", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "needs a git base" not in out and "has no built TE" in out, out


@pytest.mark.parametrize("follow", ["apply --continue", "--force"])
def test_the_advice_of_build_for_a_partial_fork_gets_it_past(project, upstream, three, capsys,
                                                             monkeypatch, follow):  # fmt: skip
    interrupted_apply(project, upstream, monkeypatch)
    ran = []
    monkeypatch.setattr(build, "run_logged", lambda cmd, **kw: ran.append(cmd))
    rc, out = te("build", "--te-src", str(upstream), capsys=capsys)
    said = "finish it (te-series apply --continue) or rebuild it (--force)"
    assert rc == 2 and said in out and not ran, out
    if follow == "apply --continue":
        assert te("apply", "--continue")[0] == 0
    rc, out = te("build", "--te-src", str(upstream), *([follow] if follow == "--force" else []),
                 capsys=capsys)  # fmt: skip
    assert rc == 0 and len(ran) == 1, out


def test_bench_instructions_are_told_to_take_the_cpu(project, capsys, monkeypatch):
    monkeypatch.setattr(bench, "_instructions", lambda *a: 0)
    args = ["bench", "--instructions", "--baseline-python", sys.executable]
    rc, out = te(*args, "--device", "cuda", capsys=capsys)
    assert rc == 2 and "use it with --device cpu" in out, out
    rc, out = te(*args, "--device", "cpu", capsys=capsys)
    assert rc == 0, out


@pytest.mark.parametrize("python", ["/bin/true", "/bin/echo"])
def test_bench_with_a_python_that_prints_no_result_says_so(project, capsys, python):
    """tool-review-v22 R8: a python whose benchmark output does not end in a JSON line was an
    internal error (IndexError, JSONDecodeError)."""
    rc, out = te("bench", "--baseline-python", python, "--patched-python", python, "--device",
                 "cpu", capsys=capsys)  # fmt: skip
    assert rc == 2 and f"the benchmark with {python} printed no result" in out, out
    assert "internal error" not in out and "--baseline-python" in out, out


def test_a_closed_stdout_is_no_internal_error(three, project):
    """tool-review-v22 R8: `te-series status >&-` (and export, after writing patches/) ended
    in an internal error (AttributeError), rc 3."""
    env = {**os.environ, "PYTHONPATH": str(ROOT_DIR / "src"), "TE_SERIES_ROOT": str(project)}
    for verb in ("status", "export"):
        proc = subprocess.run(["sh", "-c", f'"$0" -m te_series {verb} >&-', sys.executable],
                              cwd=project, env=env, stderr=subprocess.PIPE, text=True,
                              check=False)  # fmt: skip
        assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr


def test_test_without_a_build_can_run_the_tools_own_tests(three, project, capsys, monkeypatch):
    python_without_packages(project / ".venv" / "bin")
    (project / "tests").mkdir()
    monkeypatch.chdir(project / "tests")  # the advice names the folder from here
    rc, out = te("test", capsys=capsys)
    assert rc == 2 and "(The tool's own tests alone: te-series test .)" in out, out
    ran = []
    monkeypatch.setattr(test_mod.subprocess, "run", lambda cmd, **kw: ran.append(cmd) or
                        subprocess.CompletedProcess(cmd, 0))  # fmt: skip
    rc, out = te("test", ".", capsys=capsys)
    assert rc == 0 and ran and ran[0][-1] == ".", (out, ran)


# --------------------------------------------------------------------------- the git door


def test_the_advice_for_a_git_killed_by_a_signal_is_followed(three, project, tmp_path, capsys,
                                                             monkeypatch):  # fmt: skip
    shim = tmp_path / "shim"
    shim.mkdir()
    real = shutil.which("git")
    once = tmp_path / "killed"
    (shim / "git").write_text(
        f'#!/bin/sh\nif [ ! -e "{once}" ]; then touch "{once}"; kill -TERM $$; fi\n'
        f'exec "{real}" "$@"\n'
    )
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}:{os.environ['PATH']}")
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "was killed by signal 15; run te-series status" in out, out
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and "fork/:" in out, out
    assert te("export", "--dry-run")[0] == 0


def test_the_advice_for_info_attributes_gets_export_past_it(three, project, capsys):
    info = project / "fork" / ".git" / "info" / "attributes"
    info.write_text("# mine\n*.py -diff\n")
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and "Remove those lines from fork/.git/info/attributes (or the file)" in out
    info.write_text("# mine\n")
    rc, out = te("export", capsys=capsys)
    assert rc == 0, out


@pytest.mark.parametrize("arg", ["--rounds=0", "--rounds=-1", "--steps=0", "--rounds=x"])
def test_bench_counts_below_one_are_refused_as_arguments(project, capsys, arg):
    """tool-review-v20 #6: bench --rounds 0 (or negative) was an internal error (IndexError)."""
    with pytest.raises(SystemExit) as e:  # argparse's usage error, before any work
        te("bench", arg, "--baseline-python", sys.executable, "--patched-python", sys.executable)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "is not a whole number of at least 1" in err, err
