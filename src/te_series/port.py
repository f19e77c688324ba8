"""`te-series port`: carry the series to a newer PyPI release by 3-way merge.

The series' pre-image blobs exist only on its own base, so the merge needs that base:

1. commit A: the pinned release's transformer_engine/ (its files match the base commit);
   apply the series on it with `git am -3` (branch `series`);
2. commit B: the target release's transformer_engine/, on top of A;
3. `git rebase --onto B A series`: git's 3-way merge of each patch onto the target.

A conflict stops the port and names the patch and the conflicting files; the temporary
repository is discarded, so nothing is left half-applied. `--out DIR` writes the ported
series as patches that apply to the target release's files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from .apply import PYPI_PREFIX, am_series, check_pypi_blobs, init_pypi_base, release_wheel
from .core import BOT, Series, SeriesError, git, progress


def port_tree(series: Series, release: str, dest: Path) -> Path:
    """Make dest a git repo whose HEAD is the series ported onto `release`.

    Returns dest. The base commit of the port is recorded as `te-series.port-base`.
    """
    base_release = series.release
    init_pypi_base(dest, release_wheel(base_release), base_release)
    check_pypi_blobs(dest, series)
    am_series(dest, series, include=PYPI_PREFIX + "*")
    base = git("config", "te-series.base", cwd=dest).strip()

    progress(f"importing transformer_engine {release} as the port target")
    git("checkout", "-q", "-b", "target", base, cwd=dest)
    shutil.rmtree(dest / "transformer_engine")
    with zipfile.ZipFile(release_wheel(release)) as zf:
        for name in zf.namelist():
            if name.startswith(PYPI_PREFIX) and not name.endswith("/"):
                zf.extract(name, dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "--allow-empty", "-m", f"transformer_engine {release} from PyPI", cwd=dest)
    target = git("rev-parse", "HEAD", cwd=dest).strip()

    progress(f"3-way merge of {len(series.names())} patch(es) onto {release}")
    proc = subprocess.run(
        ["git", "rebase", "--onto", target, base, "series"],
        cwd=dest,
        capture_output=True,
        text=True,
        env={**os.environ, **BOT},
        check=False,
    )
    if proc.returncode != 0:
        files = git("diff", "--name-only", "--diff-filter=U", cwd=dest).split()
        subject = git("log", "-1", "--format=%s", "REBASE_HEAD", cwd=dest, check=False).strip()
        subprocess.run(["git", "rebase", "--abort"], cwd=dest, capture_output=True, check=False)
        raise SeriesError(
            f"porting to {release}: patch {subject!r} conflicts in "
            f"{', '.join(files) or '(no file; see git output)'}\n"
            f"{proc.stdout.strip()[-1500:]}\n"
            "Nothing was installed. Resolve it in a git base fork/ rebased onto a TE "
            "version with that release's code, or adapt the patch so it merges."
        )
    git("config", "te-series.port-base", target, cwd=dest)
    return dest


def run(args) -> int:
    series = Series(args.root / "patches")
    targets = [args.release] if args.release else series.base()["port"]["targets"]
    for release in targets:
        with tempfile.TemporaryDirectory(prefix="te-series-port-") as tmp:
            tree = port_tree(series, release, Path(tmp) / "tree")
            if args.out:
                out = Path(args.out) / release
                out.mkdir(parents=True, exist_ok=True)
                target = git("config", "te-series.port-base", cwd=tree).strip()
                git(
                    "format-patch",
                    "--zero-commit",
                    "--no-signature",
                    "--full-index",
                    "-q",
                    "-o",
                    str(out),
                    f"{target}..series",
                    cwd=tree,
                )
                print(f"ported patches for {release} in {out}")
        print(f"port to {release}: ok, {len(series.names())} patch(es) merged")
    return 0
