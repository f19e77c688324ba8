"""Command line: one verb per job."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from .core import SeriesError, project_root


def _path(s: str) -> Path:
    return Path(s).resolve()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="te-series", description=__doc__)
    sub = p.add_subparsers(dest="verb", required=True)

    def base_opts(sp):
        sp.add_argument("--te-src", type=_path, help="git base: a TE checkout with the base commit")
        sp.add_argument("--wheel", type=_path, help="PyPI base: use this transformer_engine wheel")

    sp = sub.add_parser("apply", help="make fork/ from a base and git am -3 the series")
    base_opts(sp)
    sp.add_argument("--force", action="store_true", help="replace an existing fork/")

    sub.add_parser("export", help="write fork/ base..HEAD back to patches/ (stable)")

    sp = sub.add_parser("check", help="lint, apply to a throw-away base, black and pylint")
    base_opts(sp)
    sp.add_argument(
        "--tests", action="store_true", help="git base: run the CPU upstream tests after each patch"
    )

    sp = sub.add_parser("build", help="install the patched TE (CPU stack, or TE's pipeline)")
    base_opts(sp)
    sp.add_argument("--release", help="PyPI release to patch (default: base.toml)")
    sp.add_argument("--force", action="store_true", help="git base: rebuild fork/ first")
    sp.add_argument(
        "--baseline", action="store_true", help="install the unpatched release in its own venv"
    )

    sp = sub.add_parser("port", help="3-way merge the series onto a newer PyPI release")
    sp.add_argument("--release", help="target release (default: base.toml's port targets)")
    sp.add_argument("--out", help="write the ported patches under OUT/<release>/")

    sp = sub.add_parser("test", help="tool tests and CPU acceptance suite (pytest)")
    sp.add_argument("--release", help="test the build of this release (default: the base's)")
    sp.add_argument("--long", action="store_true", help="long randomized differential run")
    sp.add_argument("pytest_args", nargs=argparse.REMAINDER)

    sp = sub.add_parser("bench", help="per-step CPU cost ratios")
    sp.add_argument("--steps", type=int, default=200)
    sp.add_argument("--rounds", type=int, default=10)
    sp.add_argument("--device", default="cpu")
    sp.add_argument("--baseline-python", help="python of the unpatched build")
    sp.add_argument("--patched-python", help="python of the patched build (default .venv)")
    sp.add_argument("--baseline-path", help="PYTHONPATH prefix for the unpatched runs")
    sp.add_argument("--patched-path", help="PYTHONPATH prefix for the patched runs")
    sp.add_argument("--json", help="also write the per-round ratios here")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        args.root = project_root()
        module = importlib.import_module(f"te_series.{args.verb}")
        return module.run(args)
    except SeriesError as e:
        print(f"te-series {args.verb}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
