"""te-series range-diff: compare the series with an earlier revision."""

from __future__ import annotations


from series_helpers import (
    save,
    sh,
    te,
)


def test_range_diff_between_revisions(three, project, upstream, tmp_path, capsys):
    fork = project / "fork"
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/reword/", "GIT_EDITOR": "sed -i s/helps/works/"}
    sh("git", "rebase", "-q", "-i", "HEAD~1", cwd=fork, env=env)
    assert te("export")[0] == 0
    save(project, "v2")
    out_file = tmp_path / "rd.txt"
    rc, out = te("range-diff", "HEAD~1", "--te-src", str(upstream), "--out", str(out_file))
    assert rc == 0
    text = out_file.read_text()
    assert "1:  " in text and " = 1:  " in text  # unchanged patch
    assert " ! 3:  " in text and "works" in text  # the reworded one
    rc, out = te("range-diff", "no-such-rev", "--te-src", str(upstream), capsys=capsys)
    assert rc == 2 and "not a revision" in out
