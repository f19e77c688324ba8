"""`te-series bench`: per-step CPU cost as ratios, from paired, interleaved runs.

Each round runs bench/channels_bench.py once with the unpatched build and once with the
patched build (order alternating), each in a fresh process. Within a process, channel-
and caller-routed blocks are interleaved. Reported per model:

* patched / unpatched, for the channel-routed block (median ratio over rounds, min-max);
* channels / caller-routed, in the patched build (likewise).

`--instructions` counts instead of timing (CPU only): each build runs the benchmark once
under `valgrind --tool=callgrind`, and the ratios are of instructions per step, which do
not depend on what else the machine is doing. Timings on a shared virtual machine can
differ by 2x between identical runs; instruction counts are exact.

The unpatched build is `te-series build --baseline`'s venv unless --baseline-python says
otherwise. --baseline-path / --patched-path put a source tree in front on PYTHONPATH
(e.g. on a machine with one editable build and a worktree of the base).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from .build import baseline_venv
from .util import progress, SeriesError
from .series import load_series


def _run(python: Path | str, pythonpath: str | None, root: Path, args) -> dict:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    cmd = [str(python), str(root / "bench" / "channels_bench.py"), "--device", args.device]
    cmd += ["--steps", str(args.steps), "--repeats", "3"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SeriesError(f"benchmark failed with {python}:\n{proc.stderr[-3000:]}")
    try:  # its last line is the result
        return json.loads((proc.stdout.strip().splitlines() or [""])[-1])
    except ValueError:  # a python that is not the one meant (v22 R8)
        raise SeriesError(
            f"the benchmark with {python} printed no result (a JSON line, last); it printed: "
            f"{proc.stdout.strip()[-500:] or '(nothing)'}. Name a python with TE built "
            "(--baseline-python, --patched-python)."
        ) from None


def _count(python: Path | str, pythonpath: str | None, root: Path, args) -> dict:
    """Instructions per step for each model and routing, from one run under callgrind."""
    if shutil.which("valgrind") is None:
        raise SeriesError("--instructions needs valgrind (callgrind) on PATH")
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    # String hashing moves the counts by a few tenths of a percent; fix it unless asked
    env.setdefault("PYTHONHASHSEED", "0")
    with tempfile.TemporaryDirectory(prefix="te-series-cg-") as tmp:
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        cmd += [f"--callgrind-out-file={tmp}/cg.out", str(python)]
        cmd += [str(root / "bench" / "channels_bench.py"), "--instructions"]
        cmd += ["--steps", str(args.steps), "--models", getattr(args, "models", "") or ""]
        progress(f"counting instructions with {python} (a few minutes under valgrind)")
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SeriesError(
                f"benchmark failed under callgrind with {python}:\n{proc.stderr[-3000:]}"
            )
        counts: dict[str, dict[str, float]] = {}
        for dump in Path(tmp).glob("cg.out*"):
            text = dump.read_text(errors="replace")
            label = re.search(r"^desc: Trigger: Client Request: (\S+)$", text, re.M)
            total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
            if label and total:
                model, routing = label.group(1).split(":")
                counts.setdefault(model, {})[routing] = int(total.group(1)) / args.steps
    if not counts:
        raise SeriesError(f"no callgrind dumps from {python}:\n{proc.stderr[-2000:]}")
    return counts


def _instructions(baseline, patched, args) -> int:
    """Patched/unpatched and channels/caller ratios of instructions per step."""
    base = _count(baseline, args.baseline_path, args.root, args)
    new = _count(patched, args.patched_path, args.root, args)
    print(f"instructions per step, {args.steps} steps (callgrind)")
    print(f"{'model':10} {'patched/unpatched':>18} {'channels/caller':>16} {'patched Ir':>12}")
    report = {}
    for model in base:
        pu = new[model]["channels"] / base[model]["channels"]
        cc = new[model]["channels"] / new[model]["caller"]
        print(f"{model:10} {pu:18.3f} {cc:16.3f} {new[model]['channels']:12.0f}")
        report[model] = {"patched": new[model], "unpatched": base[model]}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"


def run(args) -> int:
    series = load_series(args.root)
    baseline = args.baseline_python or baseline_venv(series.release) / "bin" / "python"
    patched = args.patched_python or args.root / ".venv" / "bin" / "python"
    if not Path(baseline).exists() and os.sep in str(baseline):
        raise SeriesError(f"no unpatched build at {baseline}: run `te-series build --baseline`")
    if args.instructions:
        if args.device != "cpu":
            raise SeriesError("--instructions counts CPU work; use it with --device cpu")
        return _instructions(baseline, patched, args)
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
