"""`te-series check`: lint the series (listing, messages as git am reads them, `# pr:`
groups and their descriptions), try every patch on a fresh base with the upstream
prerequisites and the patches before it (reporting each that fails), then each PR alone on
its named base; TE's pre-commit checks, pylint and (`--tests`) the CPU upstream tests after
each patch, or at a PR's tip; port patches too, on the files they were made against
(README: Verbs).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from .util import PatchFailed, progress, PYPI_PREFIX, read_text, rel, SeriesError, te_import_error
from .git import COMMENT_LINE, comment_lines, git, object_id, trailers
from .series import IDENTITY_RE, load_series, NO_BINARY, read_patch, Series, SIGNOFF_RE
from .base import apply_prerequisites, Base, preimage_mismatches
from .worktree import abort_am, apply_one, build_prs, report_absent

SUBJECT_RE = re.compile(r"^\[(PyTorch|JAX|Common|Core|Docs|QA|Build|CI)\]( \[[^\]]+\])* \S")
# TE's pre-commit black, and nothing else: no pyproject.toml is read, neither the tree's nor,
# where the tree has none (a wheel base), the user's ~/.config/black (v19 F3).
BLACK_ARGS = ["--line-length=100", "--preview", "--enable-unstable-feature=string_processing",
              f"--config={os.devnull}"]  # fmt: skip
VERMIN_ARGS = ["-t=3.10-", "--violations"]
TOOLS = {"black": "24.4.2", "pylint": "3.3.1", "vermin": "1.8.0"}
# TE's pre-commit runs its whitespace fixers on files matching this (re.search).
WHITESPACE_FILES = re.compile(r".*.(c|cc|cxx|cpp|cu|cuh|h|hpp|py)$")
CONFLICT_RE = re.compile(r"^(<<<<<<< |=======$|>>>>>>> )", re.M)
PR_HEADINGS = ["# Description", "Fixes #", "## Type of change", "## Changes", "# Checklist"]


def lint(series: Series) -> list[str]:
    """Problems with the series' bookkeeping and commit messages."""
    problems = series.listing_problems()
    problems += [f"{n} is not listed in {series.label}" for n in series.stray()]
    listed = [e.name for e in series.entries() if e.name]
    for name in dict.fromkeys(listed):
        path = series.dir / name
        if not path.is_file():
            continue
        info = read_patch(path)
        if not SUBJECT_RE.match(info.subject):
            problems.append(
                f"{name}: subject {info.subject!r} lacks a [PyTorch]-style prefix "
                "followed by an imperative summary"
            )
        comments = comment_lines(info.message)
        problems += [f"{name}: message line {n}, {line!r}, {COMMENT_LINE}; in fork/, then export"
                     for n, line in comments]  # fmt: skip
        # The trailers as they stand once those lines are gone ('# Conflicts:' below the
        # sign-off is no sign-off in the body, v13 #4).
        message = "\n".join(l for k, l in enumerate(info.message.split("\n"), 1)
                            if (k, l) not in comments)  # fmt: skip
        found = trailers(message)
        signed = [" ".join(v.split()).lower() for k, v in found if k.lower() == "signed-off-by"]
        if not any(IDENTITY_RE.match(v) for v in signed):
            problems.append(
                f"{name}: no 'Signed-off-by: Name <email>' trailer (DCO) at the end of the message"
            )
        lines = [l for l in message.splitlines() if SIGNOFF_RE.match(l)]
        if len(lines) > len(signed):
            problems.append(
                f"{name}: a 'Signed-off-by:' line stands in the body, not in the closing "
                "trailers (left by a squash?); remove it"
            )
        twice = sorted({v for v in signed if signed.count(v) > 1})
        if twice:
            problems.append(f"{name}: signed off twice by {', '.join(twice)}; remove one line")
        trailer_lines = {" ".join(f"{k}: {v}".split()) for k, v in found}
        prose = [
            l
            for l in info.body.splitlines()
            if l.strip() and " ".join(l.split()) not in trailer_lines
        ]
        if not prose:
            problems.append(f"{name}: the body is empty; argue the change")
        if not info.files:
            problems.append(f"{name}: no diff")
        binary = [f.path for f in info.files if f.binary]
        if binary:
            problems.append(
                f"{name}: a binary diff of {', '.join(binary)}; {NO_BINARY} (export says how), "
                "then export again (a text file that git attributes made binary: export again, "
                "it reads none)"
            )
    return problems


def lint_groups(series: Series) -> list[str]:
    """`# pr:` groups: each has patches/pr/<slug>.md with TE's PR template headings."""
    groups, problems = series.groups()
    pr_dir = series.dir / "pr"
    for slug, *_ in groups:
        desc = pr_dir / f"{slug}.md"
        if not desc.is_file():
            problems.append(
                f"PR {slug!r} has no description {rel(desc, series.root)}; write it in TE's PR "
                f"template (lines starting {', '.join(map(repr, PR_HEADINGS))})"
            )
            continue
        lines = read_text(desc, series.root).splitlines()
        for heading in PR_HEADINGS:
            if not any(l.startswith(heading) for l in lines):
                problems.append(
                    f"{rel(desc, series.root)} lacks TE's template line {heading!r}; add a line "
                    "starting with it"
                )
    if groups and pr_dir.is_dir():
        slugs = {slug for slug, *_ in groups}
        for desc in sorted(pr_dir.glob("*.md")):
            if desc.stem not in slugs:
                problems.append(
                    f"{rel(desc, series.root)} belongs to no '# pr:' group; delete it, or add "
                    f"'# pr: {desc.stem}' above its patches in {series.label}"
                )
    return problems


def need_tools() -> None:
    for tool, want in TOOLS.items():
        try:
            have = version(tool)
        except PackageNotFoundError:
            have = None
        if have != want:
            raise SeriesError(
                f"check needs {tool}=={want} (found {have or 'none'}): pip install -e '.[dev]'"
            )


def _run(tree: Path, tool: str, *args: str) -> subprocess.CompletedProcess:
    """Run a dev tool of this Python (vermin has no `python -m vermin`)."""
    entry = ["-c", "import sys; from vermin import main; sys.exit(main())"]
    cmd = [sys.executable, *(entry if tool == "vermin" else ["-m", tool]), *args]
    return run_whole(cmd, tree)


def run_whole(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a check tool in a session of its own, and end its whole process group when the
    tool is interrupted: black's workers outlived a SIGTERM of check, deadlocked (v17 F6)."""
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, start_new_session=True) as proc:  # fmt: skip
        try:
            out, err = proc.communicate()
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def style(tree: Path, files: list[str], *, pylintrc: Path | None) -> list[str]:
    """TE's pre-commit checks and pylint on the given files of an applied tree."""
    problems = []
    present = [f for f in files if (tree / f).is_file()]
    for f in present:
        data = (tree / f).read_bytes()
        if b"\0" in data:
            continue
        text = data.decode(errors="replace")
        if CONFLICT_RE.search(text):
            problems.append(f"{f}: leftover conflict markers")
        if not WHITESPACE_FILES.search(f):
            continue
        bad = [i for i, l in enumerate(text.split("\n"), 1) if l.rstrip("\r") != l.rstrip()]
        if bad:
            problems.append(f"{f}: trailing whitespace on line(s) {', '.join(map(str, bad[:10]))}")
        if text and (not text.endswith("\n") or text.endswith("\n\n")):
            problems.append(f"{f}: must end with exactly one newline")
    py = [f for f in present if f.endswith(".py")]
    if not py:
        return problems
    proc = _run(tree, "black", "--check", "--diff", "-q", *BLACK_ARGS, *py)
    if proc.returncode != 0:
        problems.append("black would reformat:\n" + (proc.stdout + proc.stderr).strip())
    proc = _run(tree, "vermin", "--no-tips", *VERMIN_ARGS, *py)
    if proc.returncode != 0:
        problems.append("vermin (-t=3.10-):\n" + (proc.stdout + proc.stderr).strip())
    te_py = [f for f in py if f.startswith(PYPI_PREFIX)]
    if pylintrc is None or not te_py:
        return problems
    proc = _run(tree, "pylint", f"--rcfile={pylintrc}", "--score=n", *te_py)
    if proc.returncode != 0:
        problems.append("pylint:\n" + (proc.stdout + proc.stderr).strip())
    return problems


# Upstream tests that run on CPU tensors (see cpu_shim).
CPU_TESTS = [
    "tests/pytorch/test_fusible_ops.py",
    "-k",
    "TestExtraTensorChannels or TestRetainGraph or test_fused_op_return_counts"
    " or test_backward_stops_at_its_forward_boundary or test_backward_fusion_across_boundary"
    " or test_fused_op_gets_its_basic_ops_share or test_basic_op_kwargs_count",
]


def cpu_tests(tree: Path) -> tuple[bool, str]:
    """The CPU-runnable upstream tests on the tree's sources (installed extension reused)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "te_series.cpu_shim", *CPU_TESTS]
    proc = run_whole(cmd, tree, {**os.environ, "PYTHONPATH": str(tree)})
    summary = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
    said = (proc.stdout + proc.stderr).strip() or f"(no output; exit code {proc.returncode})"
    return proc.returncode == 0, summary if proc.returncode == 0 else said[-3000:]


def need_built_te() -> None:
    """--tests runs TE's CPU tests with this Python: it needs torch and a built TE."""
    why = te_import_error(sys.executable)
    if why is not None:
        raise SeriesError(
            f"check --tests runs TE's CPU tests with {sys.executable}, which has no built TE "
            f"({why}). Build it first: te-series build (then run check --tests again)."
        )


def try_each(
    tree: Path,
    series: Series,
    *,
    include: str | None,
    pylintrc,
    tests: bool = False,
    run_style: bool = True,
    preimages: str = "",
) -> list[str]:
    """Apply each patch of the series on the ones before it (skipping failures); check after
    each. With `preimages` (the command that refreshes the patches), a patch whose pre-image
    blob ids are not the tree's is reported: it was made against other files and applies
    only by offset or 3-way merge.
    """
    problems = []
    names = series.names()
    for i, name in enumerate(names, 1):
        progress(f"[{i}/{len(names)}] {name}")
        if preimages:
            problems += stale_preimages(tree, series.dir / name, preimages)
        try:
            apply_one(tree, series.dir / name, include)
        except PatchFailed as err:  # reported, and the next patch tried without it
            if err.kind != "empty":  # lint names a patch without a diff
                problems.append(str(err).rstrip())
            abort_am(tree)
            continue
        problems += checks(tree, series, [name], pylintrc, run_style, tests)
    return problems


def checks(tree: Path, series: Series, names: list[str], pylintrc, run_style, tests) -> list[str]:
    """TE's checks on the files these patches touch, and the CPU tests, at the tree's HEAD."""
    touched = [f.path for n in names for f in read_patch(series.dir / n).files if f.new_blob]
    name, problems = names[-1], []
    if run_style:
        problems += [f"{name}: {p}" for p in style(tree, touched, pylintrc=pylintrc)]
    if tests:
        ok, out = cpu_tests(tree)
        print(f"  after {name}: {out if ok else 'FAILED'}")
        if not ok:
            problems.append(f"{name}: upstream CPU tests fail after it:\n{out}")
    return problems


def stale_preimages(tree: Path, patch: Path, refresh: str) -> list[str]:
    """A patch's files whose pre-image blob is not the tree's (it is stale)."""
    want = {f.path: f.old_blob for f in read_patch(patch).files if f.old_blob}
    return [
        f"{patch.name}: {m}; it applies only by offset or 3-way merge, and a re-export would "
        f"change it. Refresh it: {refresh}"
        for m in preimage_mismatches(tree, want)
    ]


def check(
    series: Series, *, te_src: Path | None, wheel: Path | None, tests: bool = False
) -> list[str]:
    problems = lint(series) + lint_groups(series)
    if series.listing_problems():
        return problems
    need_tools()
    if tests:
        if te_src is None:
            raise SeriesError("--tests needs a git base (--te-src): the wheel has no tests")
        need_built_te()
    with tempfile.TemporaryDirectory(prefix="te-series-check-") as tmp:
        tree = Path(tmp) / "tree"
        base = Base(series, te_src, wheel)
        base.init(tree)
        apply_prerequisites(tree, series)  # the series starts above them
        report_absent(base.check(tree))
        rc = tree / "pylintrc"
        pylintrc = rc if rc.is_file() else None
        if pylintrc is None:
            print("pylint: skipped, this base has no pylintrc (use --te-src for a git base)")
        top = object_id(tree, "HEAD")
        problems += try_each(tree, series, include=base.include, pylintrc=pylintrc, tests=tests)
        alone, in_order = {"main": []}, []  # each PR alone on its base, where not in order
        prs = [] if series.groups()[1] else build_prs(tree, series, top, base.include)
        for slug, on, own, failed in prs:  # in this tree, which has the series' objects
            alone[slug], in_order = alone[on] + own, in_order + own
            if alone[slug] == in_order:
                continue
            progress(f"PR {slug} on {on}, alone: {len(alone[slug])} patch(es) on the base")
            found = ([str(failed).rstrip()] if failed else
                     checks(tree, series, own, pylintrc, True, tests))  # fmt: skip
            problems += [f"PR {slug} on {on}: {p}" for p in found]
    problems += check_ports(series)
    return problems


def check_ports(series: Series) -> list[str]:
    """Lint the port patches of each release that has some, and apply them on the port."""
    from .port import port_tree

    problems = []
    port_root = series.dir / "port"
    for d in sorted(p for p in port_root.glob("*") if (p / "series").is_file()):
        ps = series.port_series(d.name)
        found = lint(ps)
        problems += [f"port {d.name}: {p}" for p in found]
        if ps.listing_problems():
            continue
        with tempfile.TemporaryDirectory(prefix="te-series-check-port-") as tmp:
            try:
                tree = port_tree(series, d.name, Path(tmp) / "tree", port_patches=False)
            except SeriesError as e:
                problems.append(f"port {d.name}: {e}")
                continue
            refresh = (
                f"te-series port --edit --release {d.name}, then te-series export --port "
                f"{d.name}"
            )
            found = try_each(tree, ps, include=None, pylintrc=None, preimages=refresh)
            problems += [f"port {d.name}: {p}" for p in found]
    return problems


def run(args) -> int:
    series = load_series(args.root)
    problems = check(series, te_src=args.te_src, wheel=args.wheel, tests=args.tests)
    for p in problems:
        print(f"! {p}")
    n = len([e for e in series.entries() if e.name])
    if problems:
        print(f"check: {len(problems)} problem(s) in a series of {n}")
        return 1
    print(f"check: ok ({n} patch(es))")
    return 0
