"""`te-series bench`: per-step CPU cost as ratios, from paired, interleaved runs.

Each round runs bench/channels_bench.py once with the unpatched build and once with the
patched build (order alternating), each in a fresh process. Within a process, channel-
and caller-routed blocks are interleaved. Reported per model:

* patched / unpatched, for the channel-routed block (median ratio over rounds, min-max);
* channels / caller-routed, in the patched build (likewise).

The unpatched build is `te-series build --baseline`'s venv unless --baseline-python says
otherwise. --baseline-path / --patched-path put a source tree in front on PYTHONPATH
(e.g. on a machine with one editable build and a worktree of the base).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path

from .build import baseline_venv
from .core import SeriesError, load_series, progress


def _run(python: Path | str, pythonpath: str | None, root: Path, args) -> dict:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    cmd = [str(python), str(root / "bench" / "channels_bench.py"), "--device", args.device]
    cmd += ["--steps", str(args.steps), "--repeats", "3"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SeriesError(f"benchmark failed with {python}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"


def run(args) -> int:
    series = load_series(args.root)
    baseline = args.baseline_python or baseline_venv(series.release) / "bin" / "python"
    patched = args.patched_python or args.root / ".venv" / "bin" / "python"
    if not Path(baseline).exists() and os.sep in str(baseline):
        raise SeriesError(f"no unpatched build at {baseline}: run `te-series build --baseline`")
    results: dict[str, list[dict]] = {"base": [], "patched": []}
    for r in range(args.rounds):
        order = ("base", "patched") if r % 2 == 0 else ("patched", "base")
        for which in order:
            python, path = (
                (baseline, args.baseline_path) if which == "base" else (patched, args.patched_path)
            )
            results[which].append(_run(python, path, args.root, args))
        progress(f"round {r + 1}/{args.rounds} done")
    models = list(results["base"][0])
    print(f"device={args.device} rounds={args.rounds} steps={args.steps} (median [min-max])")
    print(f"{'model':10} {'patched/unpatched':>24} {'channels/caller':>24} {'step us':>9}")
    report = {}
    for m in models:
        pu = [
            p[m]["channels"] / b[m]["channels"] for p, b in zip(results["patched"], results["base"])
        ]
        pu_caller = [
            p[m]["caller"] / b[m]["caller"] for p, b in zip(results["patched"], results["base"])
        ]
        cc = [p[m]["channels"] / p[m]["caller"] for p in results["patched"]]
        step = statistics.median(p[m]["channels"] for p in results["patched"]) * 1e6
        print(f"{m:10} {_summary(pu):>24} {_summary(cc):>24} {step:9.1f}")
        report[m] = {
            "patched_over_unpatched": pu,
            "patched_over_unpatched_caller_routed": pu_caller,
            "channels_over_caller": cc,
        }
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0
