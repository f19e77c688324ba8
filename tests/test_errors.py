"""Every error is one message that names the patch, file, line or key and says how to go on;
a bug is one line too (README guarantees).
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from te_series import series
from te_series.util import SeriesError
from te_series.worktree import read_state
from te_series.worktree import state_file
from series_helpers import commit, group_all, PLACEHOLDER, save, sh, te, WHO


def test_series_missing_patch_is_refused_before_apply(three, project, upstream, capsys):
    shutil.rmtree(project / "fork")
    lines = three.series_file.read_text().splitlines()
    lines.insert(2, "0042-missing.patch")
    three.series_file.write_text("\n".join(lines) + "\n")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert "patches/series line 3 names 0042-missing.patch, which does not exist" in out
    assert "Traceback" not in out
    assert not (project / "fork").exists() and not (project / "fork.new").exists()


def test_series_duplicate_line_is_named_with_lines(three, project, upstream, capsys):
    shutil.rmtree(project / "fork")
    names = three.names()
    three.series_file.write_text("\n".join(["# order", *names, names[0]]) + "\n")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert f"lists {names[0]} twice (lines 2 and 5)" in out
    assert not (project / "fork").exists()


@pytest.mark.parametrize(
    "text, says",
    [
        (None, "patches/base.toml not found"),
        ("[upstream\ncommit = 1\n", "patches/base.toml is not valid TOML"),
        ('[pypi]\nrelease = "9.9.9"\n', "patches/base.toml lacks `commit` in [upstream]"),
    ],
)
def test_corrupt_base_toml_is_a_clear_error(project, upstream, capsys, text, says):
    toml = project / "patches" / "base.toml"
    if text is None:
        toml.unlink()
    else:
        toml.write_text(text)
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2
    assert says in out
    assert "Traceback" not in out


@pytest.mark.parametrize("kind", ["missing", "folder", "not-zip", "no-package"])
def test_bad_wheel_is_a_clear_error(project, tmp_path, capsys, kind):
    wheel = tmp_path / "w.whl"
    if kind == "folder":  # v23 #10, v29 #5: a folder or /dev/null "does not exist"
        wheel.mkdir()
    elif kind == "not-zip":
        wheel.write_text("not a zip")
    elif kind == "no-package":
        import zipfile

        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr("other/x.py", "x = 1\n")
    rc, out = te("apply", "--wheel", str(wheel), capsys=capsys)
    assert rc == 2 and "Traceback" not in out
    says = {
        "missing": "does not exist",
        "folder": "is no file",
        "not-zip": "not a zip",
        "no-package": "no transformer_engine/",
    }
    assert says[kind] in out
    assert not (project / "fork").exists() and not (project / "fork.new").exists()


def test_a_byte_order_mark_in_series_and_base_toml_is_read_past(three, project, upstream):
    """tool-review-v6 #12: an editor's BOM is no part of the first line."""
    for f in (three.series_file, project / "patches" / "base.toml"):
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    save(project, "BOMs")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0
    assert len(three.names()) == 3


def test_a_byte_order_mark_in_a_patch_file_is_named_and_its_advice_takes_it_off(
    three, project, upstream, capsys
):
    """tool-review-v21 #7: a patch file an editor saved with a UTF-8 byte-order mark stopped
    apply (and check) with git's "corrupt mailbox", and no way on. It is named, with the
    command that takes it off; followed as written (and committed), apply goes through."""
    name = three.names()[1]
    path = three.dir / name
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    save(project, "an editor's BOM")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"{name} starts with a byte-order mark" in out, out
    (fix,) = re.findall(r"Take it off \((sed .*)\), commit that", out)
    sh("sh", "-c", fix, cwd=project)
    save(project, "no BOM")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0


@pytest.mark.parametrize("damage", ["empty", "first-line-lost", "committed"])
def test_a_patch_file_git_cannot_split_gets_the_command_that_restores_it(three, project, upstream,
                                                                         capsys, damage):  # fmt: skip
    """tool-review-v23 #9: an emptied patch file, or one that lost its first line (an editor,
    a bad merge), stopped apply with git's words only (and a temporary path). The stop names
    the restore; followed as written, apply goes through."""
    name = three.names()[1]
    path = three.dir / name
    path.write_bytes(b"" if damage == "empty" else path.read_bytes().split(b"\n", 1)[1])
    if damage == "committed":  # v25 F1: then HEAD's is the damaged one
        save(project, "a damaged patch")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"git mailsplit cannot read {name}" in out, out
    assert "te-series-mailinfo-" not in out, out  # a temporary folder of its own
    (fix,) = re.findall(r"restore it \((git checkout HEAD -- \S+), where", out)
    if damage == "committed":
        (log, fix) = re.findall(r"else (git log --oneline -- \S+) lists its versions: "
                                r"(git checkout REV -- \S+)\)", out)[0]  # fmt: skip
        fix = fix.replace("REV", sh("sh", "-c", log, cwd=project).split("\n")[1].split()[0])
    sh("sh", "-c", fix, cwd=project)
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0


@pytest.mark.parametrize("header", [b"From: ", b"Date: "])
def test_a_mail_header_git_am_cannot_take_an_author_from_is_named(three, project, upstream,
                                                                   capsys, header):  # fmt: skip
    """tool-review-v22 R3: a patch file without a From: line (hand-made), or with `Date:
    someday`: git am failed at its commit, apply called that "not the patch" and its
    --continue ran the same am forever. The header is named; followed as written (and
    committed), apply goes through."""
    name = three.names()[1]
    path = three.dir / name
    lines = path.read_bytes().split(b"\n")
    at = next(i for i, l in enumerate(lines) if l.startswith(header))
    lines[at : at + 1] = [b"Date: someday"] if header == b"Date: " else []
    path.write_bytes(b"\n".join(lines))
    save(project, "a hand-made header")
    rc, out = te("apply", "--force", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and f"git am cannot take {name}'s author from its mail header" in out, out
    assert "Traceback" not in out
    who, when = re.search(r"as git does \((From: .*?>), (Date: .*?)\) in", out).groups()
    lines[at : at + (header == b"Date: ")] = [(when if header == b"Date: " else who).encode()]
    path.write_bytes(b"\n".join(lines))
    save(project, "its header fixed")
    assert te("apply", "--force", "--te-src", str(upstream))[0] == 0


def test_series_line_must_name_a_patch_file(three, project, upstream, capsys):
    shutil.rmtree(project / "fork")
    three.series_file.write_text(three.series_file.read_text() + "base.toml\n")
    rc, out = te("apply", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "line 5 names base.toml, which is not a patch file" in out
    assert not (project / "fork").exists()


def test_wheel_and_te_src_exclude_each_other(project, upstream, tmp_path, capsys):
    with pytest.raises(SystemExit) as err:
        te("apply", "--te-src", str(upstream), "--wheel", str(tmp_path / "w.whl"))
    assert err.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["series", "base.toml"])
def test_non_utf8_project_file_is_named_with_its_line(three, project, upstream, capsys, where):
    path = project / "patches" / where
    path.write_bytes(path.read_bytes() + b"# caf\xe9\n")
    rc, out = te("export", "--dry-run", capsys=capsys)
    assert rc == 2 and "Traceback" not in out
    line = len(path.read_bytes().splitlines())
    assert f"patches/{where} is not UTF-8 text: line {line}, column 6 has the byte 0xE9" in out


@pytest.mark.parametrize(
    "old, new, args, says",
    [
        ("commit = ", "commit = 123 #", ["export", "--dry-run"], "[upstream] commit = 123 is not"),
        ('targets = ["10.0.0"]', 'targets = "10.0.0"', ["port"], "[port] targets = '10.0.0'"),
        ('release = "9.9.9"', 'release = ["9.9.9"]', ["port"], "[pypi] release = ['9.9.9']"),
        ('targets = ["10.0.0"]', 'targets = ["../../x"]', ["port"], "targets = ['../../x'] is"),
        ('release = "9.9.9"', 'release = "../x"', ["port"], "[pypi] release = '../x' is not"),
    ],
)
def test_base_toml_values_of_the_wrong_type(three, project, capsys, old, new, args, says):
    toml = project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace(old, new))
    rc, out = te(*args, capsys=capsys)
    assert rc == 2 and says in out and "Traceback" not in out


@pytest.mark.parametrize("value", ["5", '"nobody"', '["A <a@b.org>"]'])
def test_placeholder_identity_must_be_name_and_email(project, value):
    toml = project / "patches" / "base.toml"
    toml.write_text(toml.read_text().replace(f'"{PLACEHOLDER}"', value))
    with pytest.raises(SeriesError) as err:
        series.load_series(project).base_value("series", "placeholder_identity")
    said = str(err.value)
    assert "patches/base.toml [series] placeholder_identity = " in said
    assert 'is not "Name <email>"' in said


@pytest.mark.parametrize(
    "text, says",
    [('{"kind": "git"', "it is not JSON"), (None, "unknown key(s) future")],
)
def test_unreadable_state_is_named(three, project, capsys, text, says):
    path = state_file(project / "fork")
    if text is None:
        text = json.dumps({**json.loads(path.read_text()), "future": 1})
    path.write_text(text)
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and says in out and "state.json" in out
    rc, out = te("export", capsys=capsys)
    assert rc == 2 and says in out and "Traceback" not in out
    with pytest.raises(SeriesError):
        read_state(project / "fork")


def test_a_bug_is_one_message_without_traceback(three, project, capsys, monkeypatch):
    from te_series import status

    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(status, "run", broken)
    rc, out = te("status", capsys=capsys)
    assert rc == 3 and "te-series status: internal error: RuntimeError: boom" in out
    assert "TE_SERIES_DEBUG=1" in out and "Traceback" not in out
    monkeypatch.setenv("TE_SERIES_DEBUG", "1")
    with pytest.raises(RuntimeError):
        te("status")


@pytest.mark.parametrize("verb", ["pr", "port", "range-diff"])
def test_an_out_of_the_wrong_kind_is_refused_before_any_work(three, project, upstream, tmp_path,
                                                             capsys, verb):  # fmt: skip
    """Every --out gets the same first checks (worktree.refuse_out): a file where a folder is
    written, a folder where a file is, and nothing is written."""
    file_, folder = tmp_path / "f", tmp_path / "d"
    file_.write_text("x\n")
    folder.mkdir()
    group_all(three, project)
    args = {
        "pr": ["pr", "--te-src", str(upstream), *WHO, "--out", str(file_)],
        "port": ["port", "--out", str(file_)],
        "range-diff": ["range-diff", "HEAD", "--out", str(folder)],
    }[verb]
    rc, out = te(*args, capsys=capsys)
    said = "is a folder; name a file" if verb == "range-diff" else "is a file; name a folder"
    assert rc == 2 and said in out, out
    assert file_.read_text() == "x\n" and not any(folder.iterdir())


@pytest.mark.parametrize(
    "args",
    [
        ["export", "--port", "../fork"],
        ["apply", "--continue", "--port", ".."],
        ["port", "--edit", "--release", "../x"],
        ["build", "--release", "../b"],
        ["test", "--release", "a/b"],
    ],
)
def test_a_release_argument_is_a_release_number(three, project, capsys, args):
    """tool-review-v10 #2: `--port ../fork` read fork/ against a patches/fork/ that does not
    exist and advised rebuilding fork/; a release argument is a release number or nothing."""
    with pytest.raises(SystemExit) as e:
        te(*args)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "is not a release number (e.g. 2.19.0)" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("args, says", [
    (["build", "--baseline", "--te-src", "."], "--baseline installs the unpatched PyPI release"),
    (["port", "--edit", "--release", "2.19.0", "--out", "o"], "writes nothing under --out"),
])  # fmt: skip
def test_options_a_verb_would_ignore_are_refused(three, project, capsys, args, says):
    """v28 #5: `build --baseline --te-src` built and installed the patched fork/, and
    `port --edit --out` wrote nothing there, each without a word."""
    rc, out = te(*args, capsys=capsys)
    assert rc == 2 and says in out, out
    assert not (project / "o").exists()


def test_a_te_src_that_is_no_te_checkout_is_named_so(three, project, tmp_path, capsys):
    """v29 #5: a --te-src git repository that is not TE was told to fetch upstream main
    there, which cannot help; an empty path argument took the caller's directory."""
    other = tmp_path / "other"
    other.mkdir()
    sh("git", "init", "-q", cwd=other)
    commit(other, {"README": "not TE\n"}, "Other")
    rc, out = te("apply", "--force", "--te-src", str(other), capsys=capsys)
    assert rc == 2 and "has no transformer_engine/ folder at its HEAD" in out, out
    assert "Fetch upstream" not in out
    with pytest.raises(SystemExit) as e:
        te("port", "--out", "")
    assert e.value.code == 2 and "an empty path" in capsys.readouterr().err


def test_an_out_is_checked_past_a_fork_link_that_loops(three, project, upstream, tmp_path,
                                                       capsys):  # fmt: skip
    """tool-review-v11 #9: a `fork` link to itself made every path check an internal error
    (RuntimeError: Symlink loop); an --out outside the project is written as usual."""
    shutil.rmtree(project / "fork")
    (project / "fork").symlink_to("fork")
    out = tmp_path / "series.range-diff"
    rc, said = te("range-diff", "HEAD", "--te-src", str(upstream), "--out", str(out),
                  capsys=capsys)  # fmt: skip
    assert rc == 0 and out.is_file(), said


def test_status_while_another_verb_swaps_a_tree_in_reads_again_or_says_so(three, project, capsys,
                                                                          monkeypatch):  # fmt: skip
    """tool-review-v14 #4: status (a reader: no lock) while apply --force swaps fork.new/ in
    failed with a raw "[Errno 2] ... PosixPath('.../fork.new')". The race, made certain:
    fork.new/ goes away while status reads it; status reads the trees again. A tree that
    keeps failing while the project's lock is held (as a writer holds it): status says
    another te-series command is running; without one, no raw repr either."""
    import fcntl
    import os

    from te_series import worktree

    shutil.copytree(project / "fork", project / "fork.new", symlinks=True)
    real, keeps = worktree.in_progress, []

    def swapped(tree):  # apply --force renames fork.new/ away between status's two reads
        if tree.name == "fork.new" and keeps:
            raise FileNotFoundError(2, "No such file or directory", tree)
        if tree.name == "fork.new" and tree.exists():
            tree.rename(project / "fork.swapped")
        return real(tree)

    monkeypatch.setattr(worktree, "in_progress", swapped)
    rc, out = te("status", capsys=capsys)
    assert rc == 0 and out == "fork/: 3 of 3 patch(es) of patches/ applied (complete)\n", out
    (project / "fork.swapped").rename(project / "fork.new")
    keeps.append(1)
    fd = os.open(project, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        rc, out = te("status", capsys=capsys)
    finally:
        os.close(fd)
    assert rc == 2 and "another te-series command is running in" in out, out
    assert "run te-series status again once it has ended" in out, out
    assert "PosixPath" not in out and "Errno" not in out, out
    rc, out = te("status", capsys=capsys)
    assert rc == 2 and "No such file or directory: " in out, out
    assert "PosixPath" not in out and "Errno" not in out and "another te-series" not in out, out


@pytest.mark.parametrize("where", ("untracked file name", "patch subject"))
def test_bytes_that_are_not_utf8_from_git_give_a_message(three, project, upstream, capsys, where):
    """A Latin-1 name of an untracked file in fork/ (export), or a Latin-1 byte in a patch's
    subject (apply, where git am prints it): a message, not an internal error (v15 #2)"""
    if where == "untracked file name":
        (project / "fork" / os.fsdecode(b"notes-caf\xe9.txt")).write_text("x\n")
        verb = ("export",)
    else:
        patch = sorted((project / "patches").glob("0002-*.patch"))[0]
        patch.write_bytes(
            patch.read_bytes().replace(b"Subject: [PATCH] ", b"Subject: [PATCH] \xe9", 1)
        )
        save(project, "a Latin-1 byte in 0002's subject")
        verb = ("apply", "--force", "--te-src", str(upstream))
    rc, out = te(*verb, capsys=capsys)
    assert "internal error" not in out and "Traceback" not in out, out
    assert rc in (0, 2), out
    if where == "untracked file name":
        assert rc == 2 and "notes-caf" in out, out


def test_a_cache_that_is_a_file_is_named(project, tmp_path, monkeypatch, capsys):
    """v34 #7: $TE_SERIES_CACHE naming a file gave a raw "File exists" and advice about free
    space, again on each run. It is named; a folder there gets past it."""
    cache = tmp_path / "cachefile"
    cache.write_text("not a folder\n")
    monkeypatch.setenv("TE_SERIES_CACHE", str(cache))
    rc, out = te("apply", capsys=capsys)
    assert rc == 2 and f"the te-series cache {cache} ($TE_SERIES_CACHE) is no folder" in out, out
    assert "File exists" not in out
