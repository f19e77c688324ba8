"""te-series rebase: move the series to a newer upstream commit."""

from __future__ import annotations


from te_series.core import read_state
from series_helpers import (
    FUSER,
    commit,
    patch_bytes,
    sh,
    te,
)


def test_rebase_onto_newer_upstream(three, project, upstream, capsys):
    before = patch_bytes(three)
    toml = project / "patches" / "base.toml"
    old_toml = toml.read_text()
    old = three.base_commit
    new = commit(upstream, {"README": "upstream news\n"}, "Upstream news")
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 0, out
    assert toml.read_text() == old_toml.replace(old, new)  # one line, comments kept
    assert three.base_commit == new
    assert three.names() == sorted(before)
    assert not any("Upstream" in n for n in three.names())
    after = patch_bytes(three)
    assert after == before  # the files the series touches did not move
    fork = project / "fork"
    assert read_state(fork).base == new
    assert sh("git", "rev-list", "--count", f"{new}..HEAD", cwd=fork).strip() == "3"
    assert te("export")[0] == 0


def test_rebase_conflict_names_patch_and_resumes(three, project, upstream, capsys):
    names = three.names()
    commit(
        upstream,
        {"transformer_engine/pytorch/fuser.py": FUSER.replace("tuple(values)", "set(values)")},
        "Upstream returns sets",
    )
    rc, out = te("rebase", "--onto", "main", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"patch {names[1]}" in out and "transformer_engine/pytorch/fuser.py" in out
    assert "git -C fork rebase --continue" in out and "te-series rebase --continue" in out
    fork = project / "fork"
    (fork / "transformer_engine/pytorch/fuser.py").write_text(
        FUSER.replace("tuple(values)", "list(values)")
    )
    sh("git", "add", "-A", cwd=fork)
    rc, out = te("rebase", "--continue", capsys=capsys)
    assert rc == 0, out
    assert three.base_commit == sh("git", "rev-parse", "main", cwd=upstream).strip()
    assert three.names() == names
