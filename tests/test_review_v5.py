"""Tests for the findings of the third adversarial pass (tool-review-v5)."""

from __future__ import annotations

from series_helpers import (  # noqa: F401
    commit,
    isolated,
    move_upstream,
    msg,
    project,
    save,
    sh,
    te,
    three,
    upstream,
)
from test_review_v4 import WHO, group_all

CRLF = "a\r\nb\r\n"


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


def test_force_refuses_a_fork_whose_git_dir_lives_elsewhere(three, project, upstream, capsys):
    fork = project / "fork"
    (fork / ".git").rename(project / ".sepgit")
    (fork / ".git").write_text("gitdir: ../.sepgit\n")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "fork/.git is a file" in out and "git worktree remove" in out
    assert (fork / ".git").is_file() and (project / ".sepgit").is_dir()
    assert not (project / ".te-series-backup").exists()


def test_export_refuses_to_empty_a_pr_group(three, project, upstream, capsys):
    """A commit that lost its note and its subject: --drop must not move it to another PR."""
    names = three.names()
    three.series_file.write_text(f"# pr: a\n{names[0]}\n{names[1]}\n\n# pr: b\n{names[2]}\n")
    save(project, "two groups")
    fork = project / "fork"
    sh_env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "notes.rewrite.amend"}
    sh_env["GIT_CONFIG_VALUE_0"] = "false"
    commit_amend(fork, msg("Test more, reworded"), sh_env)
    before = three.series_file.read_text()
    rc, out = te("export", "--drop", names[2], capsys=capsys)
    assert rc == 2 and "PR group(s) 'b'" in out and "notes --ref=te-series add" in out, out
    assert three.series_file.read_text() == before and (three.dir / names[2]).is_file()


def commit_amend(repo, message, env) -> None:
    sh("git", "commit", "-q", "--amend", "-m", message, cwd=repo, env=env)
