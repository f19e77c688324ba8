"""`te-series check`: lint the series, apply it to a throw-away base, format- and lint-check.

* series lists exactly the patch files present;
* every patch has a `[PyTorch]`-style subject, a body and a `Signed-off-by:` trailer;
* the series applies (`git am -3`) to a fresh base;
* black 24.4.2 with TE's arguments is clean on every touched Python file;
* pylint 3.3.1 with the base's own pylintrc is clean on every touched file under
  transformer_engine/ (TE's QA lints that tree only). A PyPI base has no pylintrc, so
  pylint is skipped there and the skip is reported.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from .apply import make_fork, report_absent
from .core import Series, SeriesError, final_postimages, progress, read_patch

SUBJECT_RE = re.compile(r"^\[(PyTorch|JAX|Common|Core|Docs|QA|Build|CI)\]( \[[^\]]+\])* \S")
BLACK_ARGS = ["--line-length=100", "--preview", "--enable-unstable-feature=string_processing"]
BLACK_VERSION = "24.4.2"
PYLINT_VERSION = "3.3.1"


def lint(series: Series) -> list[str]:
    """Problems with the series' bookkeeping and commit messages."""
    problems = []
    listed = series.names()
    present = sorted(p.name for p in series.dir.glob("*.patch"))
    for name in listed:
        if not (series.dir / name).is_file():
            problems.append(f"series lists {name}, which does not exist")
    for name in present:
        if name not in listed:
            problems.append(f"{name} is not listed in patches/series")
    if len(set(listed)) != len(listed):
        problems.append("series lists a patch more than once")
    for name in listed:
        path = series.dir / name
        if not path.is_file():
            continue
        info = read_patch(path)
        if not SUBJECT_RE.match(info.subject):
            problems.append(
                f"{name}: subject {info.subject!r} lacks a [PyTorch]-style prefix "
                "followed by an imperative summary"
            )
        if not re.search(r"^Signed-off-by: .+ <.+@.+>$", info.body, re.M):
            problems.append(f"{name}: no 'Signed-off-by: Name <email>' trailer (DCO)")
        prose = [
            l for l in info.body.splitlines() if l.strip() and not re.match(r"^[A-Za-z-]+: ", l)
        ]
        if not prose:
            problems.append(f"{name}: the body is empty; argue the change")
        if not info.files:
            problems.append(f"{name}: no diff")
    return problems


def _tool_version(module: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", module, "--version"], capture_output=True, text=True, check=False
    )
    return proc.stdout + proc.stderr


def style(tree: Path, files: list[str], *, pylintrc: Path | None) -> list[str]:
    """Black and pylint findings for the touched files in an applied tree."""
    problems = []
    py = [f for f in files if f.endswith(".py") and (tree / f).is_file()]
    if not py:
        return problems
    if BLACK_VERSION not in _tool_version("black"):
        raise SeriesError(f"check needs black=={BLACK_VERSION}: pip install -e '.[dev]'")
    progress(f"black --check on {len(py)} file(s)")
    proc = subprocess.run(
        [sys.executable, "-m", "black", "--check", "--diff", "-q", *BLACK_ARGS, *py],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        problems.append("black would reformat:\n" + (proc.stdout + proc.stderr).strip())
    te_py = [f for f in py if f.startswith("transformer_engine/")]
    if pylintrc is None:
        print("pylint: skipped, this base has no pylintrc (use --te-src for a git base)")
        return problems
    if not te_py:
        return problems
    if PYLINT_VERSION not in _tool_version("pylint"):
        raise SeriesError(f"check needs pylint=={PYLINT_VERSION}: pip install -e '.[dev]'")
    progress(f"pylint ({pylintrc.name} of the base) on {len(te_py)} file(s)")
    proc = subprocess.run(
        [sys.executable, "-m", "pylint", f"--rcfile={pylintrc}", "--score=n", *te_py],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        problems.append("pylint:\n" + (proc.stdout + proc.stderr).strip())
    return problems


# Upstream tests that run on CPU tensors (see cpu_shim).
CPU_TESTS = ["tests/pytorch/test_fusible_ops.py", "-k", "TestExtraTensorChannels"]


def each_patch_tests(tree: Path, n: int) -> list[str]:
    """Run the CPU-runnable upstream tests after every patch (git base only).

    The tree's Python sources shadow the installed package through PYTHONPATH; the
    installed compiled extension of the same release is reused.
    """
    import os

    from .core import git

    problems = []
    head = git("rev-parse", "HEAD", cwd=tree).strip()
    for i in range(n, 0, -1):
        rev = f"{head}~{i - 1}"
        git("checkout", "-q", rev, cwd=tree)
        subject = git("log", "-1", "--format=%s", cwd=tree).strip()
        progress(f"tests after patch {n - i + 1}/{n}: {subject}")
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "te_series.cpu_shim", *CPU_TESTS],
            cwd=tree,
            env={**os.environ, "PYTHONPATH": str(tree)},
            capture_output=True,
            text=True,
            check=False,
        )
        summary = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"  patch {n - i + 1}: {summary}")
        if proc.returncode != 0:
            problems.append(
                f"upstream CPU tests fail after patch {n - i + 1} ({subject}):\n"
                + proc.stdout[-3000:]
            )
    git("checkout", "-q", head, cwd=tree)
    return problems


def check(
    series: Series, *, te_src: Path | None, wheel: Path | None, tests: bool = False
) -> list[str]:
    problems = lint(series)
    if problems:
        return problems
    with tempfile.TemporaryDirectory(prefix="te-series-check-") as tmp:
        tree = Path(tmp) / "tree"
        absent = make_fork(series, tree, te_src=te_src, wheel=wheel)
        report_absent(absent)
        touched = sorted(final_postimages([read_patch(p) for p in series.paths()]))
        rc = tree / "pylintrc"
        problems += style(tree, touched, pylintrc=rc if rc.is_file() else None)
        if tests:
            if te_src is None:
                raise SeriesError("--tests needs a git base (--te-src): the wheel has no tests")
            problems += each_patch_tests(tree, len(series.names()))
    return problems


def run(args) -> int:
    series = Series(args.root / "patches")
    problems = check(series, te_src=args.te_src, wheel=args.wheel, tests=args.tests)
    for p in problems:
        print(f"! {p}")
    n = len(series.names())
    if problems:
        print(f"check: {len(problems)} problem(s) in a series of {n}")
        return 1
    print(f"check: ok ({n} patch(es))")
    return 0
