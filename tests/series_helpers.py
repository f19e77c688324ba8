"""Helpers and fixtures for the tool tests: a tiny synthetic TE and a te-series checkout."""

from __future__ import annotations

import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from te_series import cli, worktree
from te_series.git import NOTES_REF
from te_series.series import Series
from te_series.worktree import make_tree
from te_series.export import export

ME = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}
ROOT_DIR = Path(__file__).resolve().parents[1]
PLACEHOLDER = "Project maintainers <maintainers@example.invalid>"

FUSER = '''"""Toy fuser."""


def route(values):
    """Return values as a tuple."""
    return tuple(values)
'''
GOOD_MSG = (
    "[PyTorch] Make route return a list\n\nLists are what callers index.\n\n"
    f"Signed-off-by: {PLACEHOLDER}"
)
GOOD_CHANGE = {
    "transformer_engine/pytorch/fuser.py": FUSER.replace("tuple(values)", "list(values)"),
    "tests/test_fuser.py": "def test_x():\n    assert [1] == [1]\n",
}


def msg(subject: str, body: str = "Because it helps.") -> str:
    return f"[PyTorch] {subject}\n\n{body}\n\nSigned-off-by: {PLACEHOLDER}"


def sh(*args: str, cwd: Path, env: dict | None = None, check: bool = True) -> str:
    proc = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, env={**os.environ, **ME, **(env or {})}
    )
    if check and proc.returncode:
        raise AssertionError(f"{args} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    sh("git", "add", "-A", cwd=repo)
    sh("git", "commit", "-q", "-m", message, cwd=repo)
    return sh("git", "rev-parse", "HEAD", cwd=repo).strip()


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch):
    """No user git config, no real wheel cache, and Ctrl-C as in a terminal: the suite
    does not depend on the ~/.gitconfig, the SIGINT disposition (nohup and `cmd &` in a
    script ignore it) or the terminal it runs with."""
    cfg = tmp_path / "gitconfig"
    cfg.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("TE_SERIES_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # not inside this checkout (TE_SERIES_ROOT names the project)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield cfg
    signal.signal(signal.SIGINT, old)


def make_upstream(repo: Path) -> Path:
    """A tiny 'TE' with a package file, a test file and a pylintrc."""
    repo.mkdir()
    sh("git", "init", "-q", "-b", "main", cwd=repo)
    commit(
        repo,
        {
            "transformer_engine/pytorch/fuser.py": FUSER,
            "transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 1\n',
            "tests/test_fuser.py": "def test_x():\n    assert True\n",
            "pylintrc": "[MESSAGES CONTROL]\ndisable=missing-module-docstring\n",
        },
        "base",
    )
    return repo


# Built once per test session and copied into each test's tmp_path: the repositories are
# the same for every test (one upstream, so one base commit), and copying them is faster
# than making them.
TEMPLATE: dict[str, Path] = {}


def template(tmp_path_factory) -> Path:
    """upstream/, proj/ (empty series) and three/ (THREE applied, exported, with fork/)."""
    if "dir" not in TEMPLATE:
        d = tmp_path_factory.mktemp("template")
        up = make_upstream(d / "upstream")
        make_project(d / "proj", up)
        three = copy_in(d / "proj", d / "three")
        make_series(three, up, THREE)
        TEMPLATE["dir"] = d
    return TEMPLATE["dir"]


def copy_in(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


@pytest.fixture
def upstream(tmp_path: Path, tmp_path_factory) -> Path:
    """A tiny 'TE' with a package file, a test file and a pylintrc."""
    return copy_in(template(tmp_path_factory) / "upstream", tmp_path / "upstream")


BASE_TOML = """\
# The base the series applies to.
[upstream]
# upstream main
commit = "{commit}"

[pypi]
release = "9.9.9"
torch = "0"
core = "transformer-engine-cu13"

[port]
targets = ["10.0.0"]

[series]
placeholder_identity = "{placeholder}"
"""


def make_project(proj: Path, upstream: Path) -> Path:
    """A te-series checkout (a git repo) whose base.toml pins the synthetic upstream."""
    (proj / "patches").mkdir(parents=True)
    base = sh("git", "rev-parse", "HEAD", cwd=upstream).strip()
    (proj / "patches" / "base.toml").write_text(
        BASE_TOML.format(commit=base, placeholder=PLACEHOLDER)
    )
    (proj / "patches" / "series").write_text("# order\n")
    sh("git", "init", "-q", "-b", "main", cwd=proj)
    commit(proj, {}, "project")
    return proj


@pytest.fixture
def project(tmp_path: Path, upstream: Path, monkeypatch, tmp_path_factory) -> Path:
    """A te-series checkout (a git repo) whose base.toml pins the synthetic upstream."""
    proj = copy_in(template(tmp_path_factory) / "proj", tmp_path / "proj")
    monkeypatch.setenv("TE_SERIES_ROOT", str(proj))
    return proj


def save(project: Path, message: str = "patches") -> None:
    """Commit patches/ in the te-series checkout."""
    sh("git", "add", "-A", "patches", cwd=project)
    sh("git", "commit", "-q", "--allow-empty", "-m", message, cwd=project)


def make_series(project: Path, upstream: Path, commits: list[tuple[dict, str]]) -> Series:
    """Apply the (empty) series onto the git base, add commits, export, commit patches/."""
    series = Series(project / "patches", project)
    fork = project / "fork"
    make_tree(series, fork, te_src=upstream)
    for files, message in commits:
        commit(fork, files, message)
    export(fork, series)
    save(project)
    return series


THREE = [
    ({"transformer_engine/pytorch/other.py": '"""Other."""\n\nVALUE = 2\n'}, msg("Raise VALUE")),
    (GOOD_CHANGE, GOOD_MSG),
    ({"tests/test_more.py": "def test_y():\n    assert 1\n"}, msg("Test more")),
]


@pytest.fixture
def three(project: Path, upstream: Path, tmp_path_factory) -> Series:
    """A three-patch series; patch 2 is the one that touches fuser.py."""
    shutil.rmtree(project)
    copy_in(template(tmp_path_factory) / "three", project)
    # fork/ was cloned from the template's upstream: point it at this test's copy.
    sh("git", "remote", "set-url", "origin", str(upstream), cwd=project / "fork")
    return Series(project / "patches", project)


def move_upstream(project: Path, upstream: Path, files: dict[str, str]) -> str:
    """Commit files upstream and point base.toml at that commit (committed)."""
    new = commit(upstream, files, "upstream moves")
    toml = project / "patches" / "base.toml"
    old = Series(project / "patches", project).base_commit
    toml.write_text(toml.read_text().replace(old, new))
    save(project, "move base")
    return new


CONFLICTING = {"transformer_engine/pytorch/fuser.py": FUSER.replace("tuple(values)", "set(values)")}
RESOLVED = FUSER.replace("tuple(values)", "list(set(values))")


def stop_and_resolve(project: Path, upstream: Path) -> Path:
    """Upstream conflicts with patch 2; apply stops on it; resolve it in fork/ (both sides:
    a list of the set), staged. Returns fork/."""
    move_upstream(project, upstream, CONFLICTING)
    shutil.rmtree(project / "fork")
    assert te("apply", "--te-src", str(upstream))[0] == 2
    fork = project / "fork"
    (fork / "transformer_engine/pytorch/fuser.py").write_text(RESOLVED)
    sh("git", "add", "-A", cwd=fork)
    return fork


def fetch_pr_branches(upstream: Path, out_dir: Path, clone: Path) -> None:
    """Clone upstream into `clone` and fetch the pr/* branches of pr's bundle into it."""
    sh("git", "clone", "-q", str(upstream), str(clone), cwd=clone.parent)
    bundle = str(out_dir / "pr.bundle")
    sh("git", "fetch", "-q", bundle, "refs/heads/pr/*:refs/heads/pr/*", cwd=clone)


def te(*args: str, capsys=None) -> tuple[int, str]:
    """Run the CLI in-process; return (exit code, stdout + stderr)."""
    rc = cli.main(list(args))
    if capsys is None:
        return rc, ""
    out = capsys.readouterr()
    return rc, out.out + out.err


def patch_bytes(series: Series) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in series.dir.glob("*.patch")}


def make_wheel(upstream: Path, dest: Path, version="9.9.9", override=None) -> Path:
    """A fake pure-Python wheel holding upstream's transformer_engine/ (optionally edited)."""
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"transformer_engine-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path in sorted((upstream / "transformer_engine").rglob("*.py")):
            rel = path.relative_to(upstream).as_posix()
            zf.writestr(rel, (override or {}).get(rel, path.read_text()))
        zf.writestr(f"transformer_engine-{version}.dist-info/METADATA", f"Version: {version}\n")
    return wheel


def python_without_packages(where: Path) -> Path:
    """This Python with site-packages switched off (-S): no torch, no TE, whatever this venv
    holds (`te-series test` runs these tests in the built venv, where both import)."""
    where.mkdir(parents=True, exist_ok=True)
    py = where / "python"
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    py.chmod(0o755)
    return py


def reword(fork, upto: str, sed: str) -> None:
    """Reword the first commit after `upto` with a sed expression."""
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/", "GIT_EDITOR": f"sed -i {sed}"}
    sh("git", "rebase", "-q", "-i", upto, cwd=fork, env=env)


def reword_line(fork, upto: str, line: int, sed: str) -> None:
    """Reword commit number `line` after `upto` with a sed expression."""
    env = {
        "GIT_SEQUENCE_EDITOR": f"sed -i {line}s/^pick/reword/",
        "GIT_EDITOR": f"sed -i {shlex.quote(sed)}",
    }
    sh("git", "rebase", "-q", "-i", upto, cwd=fork, env=env)


# A colleague's reword of patch 3's subject: their export renames its file.
RENAMING_REWORD = ("HEAD~3", 3, "s/Test.more/Test more things/")


def pull_a_colleagues_rename(series: Series, project: Path) -> tuple[dict, list[str]]:
    """A colleague's export renamed patch 3 (its subject reworded; their commit, made at
    another time than fork/'s), committed to patches/ and pulled; fork/ as it was before.
    Returns the pulled patch files and names."""
    fork = project / "fork"
    mine = sh("git", "rev-parse", "HEAD", cwd=fork).strip()
    record = worktree.state_file(fork).read_bytes()
    reword_line(fork, *RENAMING_REWORD)
    sh("git", "commit", "-q", "--amend", "--no-edit", cwd=fork,
       env={"GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z"})  # fmt: skip
    assert te("export")[0] == 0
    save(project, "a colleague's rename")
    sh("git", "reset", "-q", "--hard", mine, cwd=fork)
    worktree.state_file(fork).write_bytes(record)
    return patch_bytes(series), series.names()


def interrupt_nth(monkeypatch, name: str, n: int) -> None:
    """Make worktree.<name> raise KeyboardInterrupt on its n-th call."""
    real, calls = getattr(worktree, name), []

    def fake(*a, **k):
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(worktree, name, fake)
    return lambda: monkeypatch.setattr(worktree, name, real)


def interrupted_apply(project, upstream, monkeypatch) -> Path:
    """A fresh apply interrupted (Ctrl-C) in the second git am; returns fork/."""
    shutil.rmtree(project / "fork")
    restore = interrupt_nth(monkeypatch, "am", 2)
    assert te("apply", "--te-src", str(upstream))[0] == 130
    restore()  # only that: monkeypatch.undo() would undo the isolation from ~/.gitconfig
    return project / "fork"


SLOW_NOTES = """#!/bin/sh
for a in "$@"; do if [ "$a" = add ]; then echo x >> "{marker}"; sleep 0.5; fi; done
exec {git} "$@"
"""


def note(fork, rev: str) -> str:
    return sh("git", "notes", f"--ref={NOTES_REF}", "show", rev, cwd=fork).strip()


def add_copy_of_patch_2(series) -> str:
    """A fourth patch whose change patch 2 already made (a colleague's copy of it)."""
    names = series.names()
    text = (series.dir / names[1]).read_text()
    text = text.replace("Make route return a list", "Colleague's copy of the route change")
    name = "0004-PyTorch-Colleague-s-copy.patch"
    (series.dir / name).write_text(text)
    series.series_file.write_text(series.series_file.read_text() + name + "\n")
    save(series.root, "colleague")
    return name


FORK_CONFIG = {
    "core.bigFileThreshold": "1",  # every diff a GIT binary patch (tool-review-v8)
    "format.suffix": ".txt",
    "format.headers": "X-Extra: 1",
    "format.to": "someone@example.com",
    "format.from": "Other <other@example.com>",
    "format.signOff": "true",
    "format.forceInBodyFrom": "true",
    "diff.context": "5",
    "diff.interHunkContext": "9",
    "diff.algorithm": "histogram",
    "diff.orderFile": "order.txt",
    "diff.noprefix": "true",
    "diff.suppressBlankEmpty": "true",
    "diff.relative": "true",
    "core.quotePath": "false",
    "color.ui": "always",
}


def fork_log(fork: Path, fmt: str = "%B") -> str:
    return sh("git", "log", f"--format={fmt}", "-1", cwd=fork)


HOOK = '#!/bin/sh\necho "Change-Id: I1234" >> "$1"\n'


SPACED = "0002 route é.patch"


def rename_patch_2(three, project) -> list[str]:
    """Give patch 2 a file name with spaces (and a non-ASCII letter); return the names."""
    names = three.names()
    sh("git", "mv", f"patches/{names[1]}", f"patches/{SPACED}", cwd=project)
    three.series_file.write_text(three.series_file.read_text().replace(names[1], SPACED))
    save(project, "spaced name")
    return three.names()


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


PR_TEXT = "# Description\nFixes #\n## Type of change\n## Changes\n# Checklist\n"


def group_prs(series, text: str, message: str = "PRs") -> None:
    """patches/series as `text`, a description in TE's template for each `# pr:` group of it,
    committed."""
    series.series_file.write_text(text)
    (series.dir / "pr").mkdir(exist_ok=True)
    for slug, _, _ in series.groups()[0]:
        (series.dir / "pr" / f"{slug}.md").write_text(PR_TEXT)
    save(series.root, message)


CRLF = "a\r\nb\r\n"


def commit_amend(repo, message, env) -> None:
    sh("git", "commit", "-q", "--amend", "-m", message, cwd=repo, env=env)


def git_with_size_limit(real, when):
    """Test helper: ``real`` (a git door) that may write no file over 64 KiB in the calls that
    ``when(args)`` picks, so that git dies of SIGXFSZ there, as a kill would stop it"""

    def git_run(*args, **kw):
        if not when(args):
            return real(*args, **kw)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, hard))
        try:
            return real(*args, **kw)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

    return git_run
