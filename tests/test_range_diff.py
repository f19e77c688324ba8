"""te-series range-diff: compare the series with an earlier revision."""

from __future__ import annotations


import re

import pytest

from series_helpers import make_wheel, save, sh, te


def reword_last_and_save(project) -> None:
    """Version 2 of the series: the last patch's message says "works" for "helps"."""
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/", "GIT_EDITOR": "sed -i s/helps/works/"}
    sh("git", "rebase", "-q", "-i", "HEAD~1", cwd=project / "fork", env=env)
    assert te("export")[0] == 0
    save(project, "v2")


def test_range_diff_between_revisions(three, project, upstream, tmp_path, capsys):
    reword_last_and_save(project)
    out_file = tmp_path / "rd.txt"
    rc, out = te("range-diff", "HEAD~1", "--te-src", str(upstream), "--out", str(out_file))
    assert rc == 0
    text = out_file.read_text()
    assert "1:  " in text and " = 1:  " in text  # unchanged patch
    assert " ! 3:  " in text and "works" in text  # the reworded one
    rc, out = te("range-diff", "no-such-rev", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "not a revision" in out


def test_range_diff_on_pypi_base_says_what_it_leaves_out(three, project, upstream, tmp_path):
    make_wheel(upstream, tmp_path / "cache" / "dist")
    reword_last_and_save(project)
    out_file = tmp_path / "rd.txt"
    assert te("range-diff", "HEAD~1", "--out", str(out_file))[0] == 0
    first = out_file.read_text().splitlines()[0]
    assert first.startswith("# range-diff on the PyPI base (9.9.9): transformer_engine/ only")
    assert "tests/test_fuser.py, tests/test_more.py" in first


def test_range_diff_out_is_checked_before_any_work(three, project, upstream, capsys):
    series_text = three.series_file.read_text()
    for out, says in (("patches/series", "inside patches/"), ("patches/x.txt", "inside patches/"),
                      ("/proc/te-series-out", "no file can be written there")):  # v31 #2
        rc, text = te("range-diff", "HEAD", "--te-src", str(upstream), "--out",
                      str(project / out), capsys=capsys)  # fmt: skip
        assert rc == 2 and says in text and "cloning" not in text
    assert three.series_file.read_text() == series_text
    (project / "notes.md").write_text("mine\n")
    sh("git", "add", "notes.md", cwd=project)
    save(project, "notes")
    rc, text = te("range-diff", "HEAD", "--out", str(project / "notes.md"), capsys=capsys)
    assert rc == 2 and "a file tracked in this checkout" in text


def test_range_diff_names_an_absolute_link_in_patches(three, project, upstream, capsys):
    """tool-review-v6 #5: one message naming the entry, no traceback."""
    (project / "patches" / "notes.md").symlink_to(project / "README.absent")
    save(project, "an absolute link")
    rc, out = te("range-diff", "HEAD", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "at HEAD:" in out and "notes.md" in out, out
    assert "internal error" not in out and "Traceback" not in out


def test_range_diff_out_never_overwrites_work_or_any_file(three, project, upstream, capsys):
    fork = project / "fork"
    work = fork / "transformer_engine/pytorch/fuser.py"
    work.write_text(work.read_text() + "# my work\n")
    (project / ".te-series-backup" / "x" / "fork").mkdir(parents=True)
    mine = project / "mine.txt"
    mine.write_text("mine\n")
    cases = [
        (work, "inside fork/"),
        (fork / "new.txt", "inside fork/"),
        (project / "fork.new", "inside fork.new/"),
        (project / ".te-series-backup" / "x" / "fork" / "f", "inside .te-series-backup/"),
        (mine, "exists; range-diff never overwrites a file"),
    ]
    for out, says in cases:
        rc, text = te(
            "range-diff", "HEAD", "--te-src", str(upstream), "--out", str(out), capsys=capsys
        )
        assert rc == 2 and says in text and "cloning" not in text, (out, text)
    assert work.read_text().endswith("# my work\n") and mine.read_text() == "mine\n"
    assert not (fork / "new.txt").exists()


@pytest.mark.parametrize("base,bad", [("pypi", "missing"), ("git", "missing"), ("git", "twice"),
                                      ("git", "no-patch"), ("git", "not-utf8"),
                                      ("git", "toml-not-utf8")])  # fmt: skip
def test_a_revisions_broken_series_is_named_at_that_revision(three, project, upstream, tmp_path,
                                                             capsys, base, bad):  # fmt: skip
    """tool-review-v20 #9: REV's series lists a file REV lacks (fixed since). The error was
    about the working tree's patches/series (on the PyPI base without "at REV") and said to
    restore the file or remove the line, neither of which is there. v33 #2: the same for a
    name listed twice, a name that is no patch, a series or base.toml that is not UTF-8. It
    names REV; naming another revision, as it says, gets past it."""
    make_wheel(upstream, tmp_path / "cache" / "dist")
    line = {"missing": b"0011-missing.patch\n", "twice": three.names()[0].encode() + b"\n",
            "no-patch": b"notes.txt\n", "not-utf8": b"# caf\xe9\n"}.get(bad)  # fmt: skip
    if line:
        with three.series_file.open("ab") as f:
            f.write(line)
    else:
        with three.base_file.open("ab") as f:
            f.write(b"# caf\xe9\n")
    save(project, "bad series")
    sh("git", "revert", "--no-edit", "HEAD", cwd=project)
    args = ["--te-src", str(upstream)] if base == "git" else []
    rc, out = te("range-diff", "HEAD~1", *args, capsys=capsys)
    assert rc == 2 and " at HEAD~1, which cannot be used: name another revision" in out, out
    assert "restore the file" not in out and "remove" not in out and "Fix" not in out, out
    rc, out = te("range-diff", "HEAD~2", *args, capsys=capsys)
    assert rc == 0, out


@pytest.mark.parametrize("base,bad", [("git", "missing"), ("pypi", "missing"),
                                      ("pypi", "release")])  # git's reads no release
def test_a_revisions_broken_base_toml_is_named_at_that_revision(three, project, upstream,
                                                                tmp_path, capsys, base, bad):  # fmt: skip
    """tool-review-v22 R9: REV's base.toml missing, or with a bad [pypi] release: the error
    said to restore the working tree's file (git checkout -- patches/base.toml), which
    changes nothing. It names REV; naming another revision, as it says, gets past it."""
    make_wheel(upstream, tmp_path / "cache" / "dist")
    if bad == "missing":
        sh("git", "rm", "-q", "patches/base.toml", cwd=project)
    else:
        text = three.base_file.read_text()
        three.base_file.write_text(re.sub(r'(?m)^release = "(.*)"$', r'release = "\1 "', text))
    save(project, "a bad base.toml")
    sh("git", "revert", "--no-edit", "HEAD", cwd=project)
    args = ["--te-src", str(upstream)] if base == "git" else []
    rc, out = te("range-diff", "HEAD~1", *args, capsys=capsys)
    assert rc == 2 and "patches/base.toml at HEAD~1" in out and "Traceback" not in out, out
    assert "git checkout" not in out and "name another revision" in out, out
    rc, out = te("range-diff", "HEAD~2", *args, capsys=capsys)
    assert rc == 0, out
