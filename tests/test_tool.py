"""Tests of te-series itself, on small synthetic git repositories (no TE needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from te_series import apply as apply_mod
from te_series import check as check_mod
from te_series import export as export_mod
from te_series.core import Series, SeriesError, blob_id, read_patch

ROOT = Path(__file__).resolve().parents[1]
ME = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}

FUSER = '''"""Toy fuser."""


def route(values):
    """Return values as a tuple."""
    return tuple(values)
'''


def sh(*args: str, cwd: Path, env: dict | None = None) -> str:
    return subprocess.run(
        args,
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **ME, **(env or {})},
    ).stdout


def commit(repo: Path, files: dict[str, str], message: str) -> None:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    sh("git", "add", "-A", cwd=repo)
    sh("git", "commit", "-q", "-m", message, cwd=repo)


GOOD_MSG = (
    "[PyTorch] Make route return a list\n\nLists are what callers index.\n\n"
    "Signed-off-by: Dev <dev@example.com>"
)


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    """A tiny 'TE' with a package file, a test file and a pylintrc."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    sh("git", "init", "-q", "-b", "main", cwd=repo)
    commit(
        repo,
        {
            "transformer_engine/pytorch/fuser.py": FUSER,
            "tests/test_fuser.py": "def test_x():\n    assert True\n",
            "pylintrc": "[MESSAGES CONTROL]\ndisable=missing-module-docstring\n",
        },
        "base",
    )
    return repo


@pytest.fixture
def project(tmp_path: Path, upstream: Path) -> Path:
    """A te-series checkout whose base.toml pins the synthetic upstream."""
    proj = tmp_path / "proj"
    (proj / "patches").mkdir(parents=True)
    base = sh("git", "rev-parse", "HEAD", cwd=upstream).strip()
    (proj / "patches" / "base.toml").write_text(
        f'[upstream]\ncommit = "{base}"\n[pypi]\nrelease = "9.9.9"\n'
        'torch = "0"\ncore = "transformer-engine-cu13"\n'
    )
    (proj / "patches" / "series").write_text("# order\n")
    return proj


def make_wheel(upstream: Path, dest: Path, override: dict[str, str] | None = None) -> Path:
    """A fake pure-Python wheel holding upstream's transformer_engine/ (optionally edited)."""
    wheel = dest / "transformer_engine-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path in (upstream / "transformer_engine").rglob("*.py"):
            rel = path.relative_to(upstream).as_posix()
            zf.writestr(rel, (override or {}).get(rel, path.read_text()))
        zf.writestr("transformer_engine-9.9.9.dist-info/METADATA", "Version: 9.9.9\n")
    return wheel


def make_series(project: Path, upstream: Path, commits: list[tuple[dict, str]]) -> Series:
    """Apply (empty) series onto the git base, add commits, export."""
    series = Series(project / "patches")
    fork = project / "fork"
    apply_mod.make_fork(series, fork, te_src=upstream)
    for files, msg in commits:
        commit(fork, files, msg)
    export_mod.export(fork, series)
    return series


GOOD_CHANGE = {
    "transformer_engine/pytorch/fuser.py": FUSER.replace("tuple(values)", "list(values)"),
    "tests/test_fuser.py": "def test_x():\n    assert [1] == [1]\n",
}


def test_export_roundtrip_is_byte_identical(project, upstream):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    (name,) = series.names()
    first = (series.dir / name).read_bytes()
    assert b"From 0000000000000000000000000000000000000000" in first
    assert b"Subject: [PATCH] [PyTorch] Make route return a list" in first
    # Rebuild fork/ from patches and export again: nothing may change.
    export_mod.export(project / "fork", series)
    assert (series.dir / name).read_bytes() == first
    import shutil

    shutil.rmtree(project / "fork")
    apply_mod.make_fork(series, project / "fork", te_src=upstream)
    export_mod.export(project / "fork", series)
    assert (series.dir / name).read_bytes() == first
    assert series.names() == [name]
    # Full blob ids, so the PyPI base can be checked exactly.
    info = read_patch(series.dir / name)
    fuser = next(f for f in info.files if f.path == "transformer_engine/pytorch/fuser.py")
    assert fuser.old_blob == blob_id(FUSER.encode())


def test_export_drops_removed_patches_and_keeps_series_comments(project, upstream):
    series = make_series(
        project, upstream, [(GOOD_CHANGE, GOOD_MSG), ({"tests/test_fuser.py": "x = 1\n"}, GOOD_MSG)]
    )
    assert len(series.names()) == 2
    sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=project / "fork")
    export_mod.export(project / "fork", series)
    assert len(series.names()) == 1
    assert len(list(series.dir.glob("*.patch"))) == 1
    assert series.series_file.read_text().startswith("# order\n")


def test_export_refuses_dirty_fork(project, upstream):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    (project / "fork" / "transformer_engine/pytorch/fuser.py").write_text("edited = 1\n")
    with pytest.raises(SeriesError, match="uncommitted edits"):
        export_mod.export(project / "fork", series)


def test_export_refuses_other_branch(project, upstream):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    sh("git", "checkout", "-q", "-b", "elsewhere", cwd=project / "fork")
    with pytest.raises(SeriesError, match="not on 'series'"):
        export_mod.export(project / "fork", series)


def test_export_refuses_pypi_fork(project, upstream, tmp_path):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheel = make_wheel(upstream, tmp_path)
    pypi_fork = tmp_path / "pypi-fork"
    apply_mod.make_fork(series, pypi_fork, wheel=wheel)
    with pytest.raises(SeriesError, match="PyPI base"):
        export_mod.export(pypi_fork, series)


def test_pypi_base_applies_package_hunks_and_reports_absent(project, upstream, tmp_path, capsys):
    series = make_series(
        project,
        upstream,
        [(GOOD_CHANGE, GOOD_MSG), ({"tests/test_fuser.py": "y = 2\n"}, GOOD_MSG)],
    )
    wheel = make_wheel(upstream, tmp_path)
    dest = tmp_path / "pypi"
    absent = apply_mod.make_fork(series, dest, wheel=wheel)
    assert "list(values)" in (dest / "transformer_engine/pytorch/fuser.py").read_text()
    assert not (dest / "tests").exists()
    assert absent == {"tests/test_fuser.py": series.names()}
    # One commit a patch, even for a patch with nothing in this base.
    base = sh("git", "config", "te-series.base", cwd=dest).strip()
    assert sh("git", "rev-list", "--count", f"{base}..HEAD", cwd=dest).strip() == "2"
    apply_mod.report_absent(absent)
    assert "not in this base: tests/test_fuser.py" in capsys.readouterr().out


def test_pypi_blob_mismatch_names_file_and_ids(project, upstream, tmp_path):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    changed = FUSER + "\nEXTRA = 1\n"
    wheel = make_wheel(upstream, tmp_path, {"transformer_engine/pytorch/fuser.py": changed})
    with pytest.raises(SeriesError) as err:
        apply_mod.make_fork(series, tmp_path / "pypi", wheel=wheel)
    msg = str(err.value)
    assert "transformer_engine/pytorch/fuser.py" in msg
    assert blob_id(FUSER.encode()) in msg and blob_id(changed.encode()) in msg


def test_conflicting_patch_is_named_and_fork_left_clean(project, upstream, tmp_path):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    (name,) = series.names()
    # Upstream moves on in a way that conflicts with the patch.
    commit(
        upstream,
        {"transformer_engine/pytorch/fuser.py": FUSER.replace("tuple(values)", "set(values)")},
        "conflict",
    )
    moved = sh("git", "rev-parse", "HEAD", cwd=upstream).strip()
    base_toml = series.dir / "base.toml"
    base_toml.write_text(base_toml.read_text().replace(series.base_commit, moved))
    dest = tmp_path / "conflict"
    with pytest.raises(SeriesError) as err:
        apply_mod.make_fork(series, dest, te_src=upstream)
    msg = str(err.value)
    assert name in msg
    assert "file transformer_engine/pytorch/fuser.py, hunk at line 3 @@ -3,4 +3,4 @@" in msg
    assert "Recover:" in msg
    assert sh("git", "status", "--porcelain", cwd=dest).strip() == ""
    assert not (dest / ".git" / "rebase-apply").exists()
    assert sh("git", "rev-parse", "HEAD", cwd=dest).strip() == moved


def test_lint_reports_each_problem(project, upstream):
    bad_subject = "Make route return a list\n\nBecause.\n\nSigned-off-by: Dev <dev@example.com>"
    no_signoff = "[PyTorch] Make route return a list\n\nBecause."
    no_body = "[PyTorch] Make route return a list\n\nSigned-off-by: Dev <dev@example.com>"
    series = make_series(
        project,
        upstream,
        [
            ({"tests/a.py": "a = 1\n"}, bad_subject),
            ({"tests/b.py": "b = 1\n"}, no_signoff),
            ({"tests/c.py": "c = 1\n"}, no_body),
        ],
    )
    names = series.names()
    (series.dir / "9999-stray.patch").write_text("stray")
    series.series_file.write_text("\n".join(names + ["0042-missing.patch"]) + "\n")
    problems = "\n".join(check_mod.lint(series))
    assert f"{names[0]}: subject" in problems
    assert f"{names[1]}: no 'Signed-off-by" in problems
    assert f"{names[2]}: the body is empty" in problems
    assert "9999-stray.patch is not listed" in problems
    assert "0042-missing.patch, which does not exist" in problems


def test_check_green_on_empty_series(project, upstream):
    series = Series(project / "patches")
    assert check_mod.check(series, te_src=upstream, wheel=None) == []


def test_check_green_on_one_patch_series(project, upstream):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    assert check_mod.check(series, te_src=upstream, wheel=None) == []


def test_check_reports_black_and_pylint(project, upstream):
    ugly = FUSER.replace("def route(values):", "def route( values ):\n    unused = 1")
    series = make_series(
        project, upstream, [({"transformer_engine/pytorch/fuser.py": ugly}, GOOD_MSG)]
    )
    problems = "\n".join(check_mod.check(series, te_src=upstream, wheel=None))
    assert "black would reformat" in problems
    assert "unused-variable" in problems


def test_check_on_pypi_base_skips_pylint_and_says_so(project, upstream, tmp_path, capsys):
    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    wheel = make_wheel(upstream, tmp_path)
    assert check_mod.check(series, te_src=None, wheel=wheel) == []
    assert "pylint: skipped" in capsys.readouterr().out


def test_cli_apply_refuses_existing_fork(project, upstream):
    make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    proc = subprocess.run(
        [sys.executable, "-m", "te_series", "apply", "--te-src", str(upstream)],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "fork/ exists" in proc.stderr


def port_to(project, upstream, tmp_path, monkeypatch, newer_fuser: str) -> Path:
    """Port a one-patch series to a fake release 10.0.0 whose fuser.py is newer_fuser."""
    from te_series import port as port_mod

    series = make_series(project, upstream, [(GOOD_CHANGE, GOOD_MSG)])
    base_wheel = make_wheel(upstream, tmp_path)
    newer_dir = tmp_path / "newer"
    newer_dir.mkdir()
    newer = make_wheel(upstream, newer_dir, {"transformer_engine/pytorch/fuser.py": newer_fuser})
    wheels = {"9.9.9": base_wheel, "10.0.0": newer}
    monkeypatch.setattr(port_mod, "release_wheel", wheels.__getitem__)
    return port_mod.port_tree(series, "10.0.0", tmp_path / "port")


def test_port_merges_onto_newer_release(project, upstream, tmp_path, monkeypatch):
    # The newer release adds a line far from the patched lines.
    tree = port_to(project, upstream, tmp_path, monkeypatch, "NEW = 1\n\n\n" + FUSER)
    text = (tree / "transformer_engine/pytorch/fuser.py").read_text()
    assert text.startswith("NEW = 1") and "list(values)" in text


def test_port_conflict_names_patch_and_file(project, upstream, tmp_path, monkeypatch):
    conflicting = FUSER.replace("tuple(values)", "set(values)")
    with pytest.raises(SeriesError) as err:
        port_to(project, upstream, tmp_path, monkeypatch, conflicting)
    msg = str(err.value)
    assert "Make route return a list" in msg
    assert "transformer_engine/pytorch/fuser.py" in msg
