"""te-series: keep a patch series against Transformer Engine. One verb per job."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from pathlib import Path

from .util import locked, one_at_a_time, project_root, SeriesError, stop_as_ctrl_c
from .series import RELEASE_RE
from .worktree import describe_tree, WorkTree


def _path(s: str) -> Path:
    """A path argument, read from the caller's directory; never an empty one (the directory
    itself: `port --out ''` wrote into it, v29 #5)."""
    if not s:
        raise argparse.ArgumentTypeError("an empty path")
    if os.path.islink(s) and not os.path.exists(s):  # resolved, it would be followed (v32 #4)
        raise argparse.ArgumentTypeError(
            f"{s} is a link to nothing ({os.readlink(s)}): make or mount what it names, or "
            "remove the link"
        )
    return Path(s).resolve()


def _release(s: str) -> str:
    """A release argument: a release number, never a path (tool-review-v10 #2)."""
    if not RELEASE_RE.match(s):
        raise argparse.ArgumentTypeError(f"{s!r} is not a release number (e.g. 2.19.0)")
    return s


def _count(s: str) -> int:
    """A count of rounds or steps: a whole number of at least 1 (v20 #6)."""
    if not s.isdigit() or int(s) < 1:
        raise argparse.ArgumentTypeError(f"{s!r} is not a whole number of at least 1")
    return int(s)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="te-series", description=__doc__)
    sub = p.add_subparsers(dest="verb", required=True)

    def base_opts(sp, wheel=True):
        group = sp.add_mutually_exclusive_group() if wheel else sp
        group.add_argument(
            "--te-src", type=_path, help="git base: a TE checkout with the base commit"
        )
        if wheel:
            group.add_argument(
                "--wheel", type=_path, help="PyPI base: this transformer_engine wheel"
            )

    sp = sub.add_parser("apply", help="make fork/ from a base and git am -3 the series")
    base_opts(sp)
    sp.add_argument("--force", action="store_true", help="replace fork/ (its work is backed up)")
    sp.add_argument(
        "--continue", dest="continue_", action="store_true", help="go on after a stopped patch"
    )
    sp.add_argument("--skip", action="store_true", help="with --continue: skip the stopped patch")
    sp.add_argument(
        "--port", metavar="R", type=_release, help="with --continue: the port tree of release R"
    )

    sp = sub.add_parser("export", help="write fork/ base..HEAD back to patches/ (stable, safe)")
    sp.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    sp.add_argument(
        "--drop", action="append", metavar="NAME", help="let export remove this patch (repeat)"
    )
    sp.add_argument(
        "--port", metavar="R", type=_release, help="export fork-port/R into patches/port/R/"
    )

    sp = sub.add_parser("check", help="lint, apply each patch, TE's pre-commit checks and pylint")
    base_opts(sp)
    sp.add_argument(
        "--tests", action="store_true", help="git base: run the CPU upstream tests after each patch"
    )

    sp = sub.add_parser("build", help="install the patched TE (CPU stack, or TE's pipeline)")
    base_opts(sp)
    sp.add_argument("--release", type=_release, help="PyPI release to patch (default: base.toml)")
    sp.add_argument("--force", action="store_true", help="git base: rebuild fork/ first")
    sp.add_argument(
        "--baseline", action="store_true", help="install the unpatched release in its own venv"
    )

    sp = sub.add_parser("port", help="3-way merge the series onto a newer PyPI release")
    sp.add_argument(
        "--release", type=_release, help="target release (default: base.toml's port targets)"
    )
    sp.add_argument("--out", type=_path, help="write the ported patches under OUT/<release>/")
    sp.add_argument("--edit", action="store_true", help="leave the port in fork-port/<release>/")
    sp.add_argument("--force", action="store_true", help="with --edit: replace fork-port/<R>/")

    sp = sub.add_parser("rebase", help="move the series onto another upstream commit")
    sp.add_argument("--onto", metavar="COMMIT", help="the new base (in fork/ or --te-src)")
    base_opts(sp, wheel=False)
    sp.add_argument("--continue", dest="continue_", action="store_true")
    sp.add_argument("--abort", action="store_true")
    sp.add_argument("--drop", action="append", metavar="NAME", help="as for export")

    sp = sub.add_parser("range-diff", help="compare the series with an earlier version")
    sp.add_argument("rev", help="git revision of this repository (e.g. HEAD~3, v1)")
    sp.add_argument("rev2", nargs="?", help="compare with this revision instead of patches/")
    base_opts(sp)
    sp.add_argument("--out", type=_path, help="write the range-diff here")

    sp = sub.add_parser("pr", help="stacked PR branches, re-signed by you, with descriptions")
    base_opts(sp, wheel=False)
    sp.add_argument("--out", type=_path, help="output folder (default: pr-out/)")
    sp.add_argument("--identity", help='"Name <email>" (default: git config of this checkout)')

    sub.add_parser("status", help="where fork/ and the port trees stand")

    sp = sub.add_parser("test", help="tool tests and CPU acceptance suite (pytest)")
    sp.add_argument(
        "--release", type=_release, help="test the build of this release (default: the base's)"
    )
    sp.add_argument("--long", action="store_true", help="long randomized differential run")
    sp.add_argument("pytest_args", nargs=argparse.REMAINDER)

    sp = sub.add_parser("bench", help="per-step CPU cost ratios")
    sp.add_argument("--steps", type=_count, default=200)
    sp.add_argument("--rounds", type=_count, default=10)
    sp.add_argument("--device", default="cpu")
    sp.add_argument("--baseline-python", help="python of the unpatched build")
    sp.add_argument("--patched-python", help="python of the patched build (default .venv)")
    sp.add_argument("--baseline-path", help="PYTHONPATH prefix for the unpatched runs")
    sp.add_argument("--patched-path", help="PYTHONPATH prefix for the patched runs")
    sp.add_argument("--json", help="also write the per-round ratios here")
    sp.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per step under callgrind instead of timing (CPU)",
    )
    return p


# What Ctrl-C leaves behind, per verb: only export and rebase write patches/.
AFTER_CTRL_C = {
    "export": "patches/ is written all at once or not at all.",
    "rebase": "patches/ and base.toml are written all at once or not at all.",
    "check": "check writes nothing; its temporary trees are removed.",
    "range-diff": "range-diff writes nothing but its --out file.",
    "pr": "pr writes only its output folder (pr-out/ unless --out), each file whole.",
    "status": "",
}


# The verbs that write the project's trees or files, one at a time (util.one_at_a_time).
WRITERS = {"apply", "export", "rebase", "port", "build", "pr"}


def main(argv=None) -> int:
    stop_as_ctrl_c()
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is None:  # closed (`te-series status >&-`, v22 R8): say nothing
            os.dup2(os.open(os.devnull, os.O_WRONLY), fd)  # and let no file opened take fd
            setattr(sys, name, open(fd, "w", closefd=False))  # pylint: disable=consider-using-with
        stream = getattr(sys, name)  # a file name git gave that is not UTF-8 (v15 #2)
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        # `test` passes what it does not know to pytest (`test -q`, `test -x tests`);
        # argparse's REMAINDER alone refuses an option as the first extra argument.
        args, extra = parser().parse_known_args(argv)
        if extra and getattr(args, "verb", None) != "test":
            parser().error(f"unrecognized arguments: {' '.join(extra)}")
        if extra:
            args.pytest_args = extra + args.pytest_args
    except KeyboardInterrupt:
        print(
            "\nte-series: interrupted (Ctrl-C) while starting; nothing was written.",
            file=sys.stderr,
        )
        return 130
    root = None
    try:
        root = args.root = project_root()
        module = importlib.import_module(f"te_series.{args.verb.replace('-', '_')}")
        with one_at_a_time(root, args.verb) if args.verb in WRITERS else contextlib.nullcontext():
            code = module.run(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader went away (`status | head`): stop quietly, and keep Python's own flush
        # at exit from failing too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (SeriesError, OSError) as e:
        said = e
        if isinstance(e, OSError) and e.strerror:  # the file system's doing (v11 #5): say so
            said = (f"{e.strerror}{f': {e.filename}' if e.filename else ''} (not the series': fix "
                    "that, e.g. free space or a permission; then run the command again; "
                    "te-series status says where the work trees stand)")  # fmt: skip
        if args.verb not in WRITERS and root is not None and locked(root):  # v14 #4
            said = (f"another te-series command is running in {root} and changed the work trees "
                    f"while {args.verb} read them ({said}); run te-series {args.verb} again once "
                    "it has ended")  # fmt: skip
        print(f"te-series {args.verb}: error: {said}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print(f"\nte-series {args.verb}: interrupted ({str(e) or 'Ctrl-C'}).", file=sys.stderr)
        if root is not None:
            try:
                states = [describe_tree(t, root) for t in WorkTree.existing(root)]
            except (SeriesError, OSError, KeyboardInterrupt):
                states = ["(could not read the work trees; run te-series status)"]
            print("\n".join(states or ["no fork/ exists."]), file=sys.stderr)
            after = AFTER_CTRL_C.get(args.verb, "patches/ was not written.")
            if after:
                print(after, file=sys.stderr)
        return 130
    except Exception as e:  # pylint: disable=broad-exception-caught
        # A bug of the tool, not bad input: say so in one message, the traceback on demand.
        if os.environ.get("TE_SERIES_DEBUG"):
            raise
        print(
            f"te-series {args.verb}: internal error: {type(e).__name__}: {e}\n"
            "This is a bug in te-series. te-series status shows where the work trees stand; "
            "run again with TE_SERIES_DEBUG=1 for the traceback, and report it.",
            file=sys.stderr,
        )
        return 3
