"""Instructions per step (callgrind) of bench/channels_bench.py for several source trees.

Each tree is a TE checkout whose Python sources go first on PYTHONPATH over one installed
build (the series changes only Python). Counts each tree once, then prints the ratios of the
pairs asked for, for both routings of every model:

    python bench/count_trees.py --python .venv/bin/python --steps 50 --json out.json \
        main=../trees/main fixes=../trees/fixes ... --pair fixes/main --pair contract/fixes

Instruction counts do not depend on what else the machine does (see te_series.bench).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from te_series.bench import _count  # pylint: disable=wrong-import-position


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--python", required=True)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--json", help="write the counts here (and read trees counted before)")
    p.add_argument("--pair", action="append", default=[], help="NEW/BASE, by tree name")
    p.add_argument("--models", default="", help="comma-separated model names (default: all)")
    p.add_argument("trees", nargs="+", help="NAME=PATH")
    args = p.parse_args()
    args.root = ROOT
    counts = {}
    if args.json and Path(args.json).exists():
        counts = json.loads(Path(args.json).read_text())
    for spec in args.trees:
        name, _, path = spec.partition("=")
        if name in counts:
            continue
        counts[name] = _count(args.python, str(Path(path).resolve()), ROOT, args)
        if args.json:
            Path(args.json).write_text(json.dumps(counts, indent=1))
    models = list(next(iter(counts.values())))
    print(f"instructions per step, {args.steps} steps; ratio NEW/BASE, channels (caller)")
    print(f"{'pair':18}" + "".join(f"{m:>20}" for m in models))
    for pair in args.pair:
        new, base = pair.split("/")
        cells = []
        for m in models:
            ch = counts[new][m]["channels"] / counts[base][m]["channels"]
            ca = counts[new][m]["caller"] / counts[base][m]["caller"]
            cells.append(f"{ch:.3f} ({ca:.3f})")
        print(f"{pair:18}" + "".join(f"{c:>20}" for c in cells))


if __name__ == "__main__":
    main()
