"""Step time on the H200, forward and backward timed apart with CUDA events (no graph capture).

    perf.py pair   [--label L]            MoE example block: channels against caller-routed,
                                          paired blocks interleaved in one process
    perf.py series --label L --round R    one process of the series-against-base comparison:
                                          gpu/h200.sh runs it alternately under the patched
                                          tree and the base tree (PYTHONPATH), ABBA order
    perf.py report --series F [--pair F] [--example F]   ratios with their spread

Models of `series` (sizes small enough that the step is bound by the CPU, where the fuser's
per-step work shows): `linear16` (16 blocks MakeExtraOutput -> Linear -> AddExtraInput on a
hidden channel, 8 x 256 bf16, one Sequential), `plain16` (16 te.ops Linear, no channels),
`moe_small` (the MoE example's block, 8 experts, 512 tokens, hidden 256, ffn 512, bf16).
Each prints one JSON line. On CPU (no CUDA), the Linear is replaced by Bias+ConstantScale and
the MoE model is left out, with wall-clock timers, so the logic can be checked anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch  # before transformer_engine
import transformer_engine.pytorch.ops as te_ops

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA = torch.cuda.is_available()
DEV = "cuda" if CUDA else "cpu"


class Timer:
    """Per-step forward/backward times: CUDA events on the GPU, perf_counter on CPU."""

    def __init__(self):
        self.marks = []

    def mark(self):
        if CUDA:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.marks.append(e)
        else:
            self.marks.append(time.perf_counter())

    def spans(self):
        if CUDA:
            torch.cuda.synchronize()
            return [a.elapsed_time(b) for a, b in zip(self.marks, self.marks[1:])]
        return [1e3 * (b - a) for a, b in zip(self.marks, self.marks[1:])]


def timed_block(fn, x, dy, steps):
    """Median-free block: total forward ms and backward ms per step over `steps` steps."""
    t = Timer()
    for _ in range(steps):
        t.mark()
        y = fn(x)
        t.mark()
        y.backward(dy)
    t.mark()
    s = t.spans()
    fwd = sum(s[0::2]) / steps
    bwd = sum(s[1::2]) / steps
    return fwd, bwd


def linear(h, dtype):
    if CUDA:
        return [te_ops.Linear(h, h, bias=True, device=DEV, dtype=dtype)]
    return [te_ops.Bias(h, device=DEV, dtype=dtype), te_ops.ConstantScale(0.5)]


def linear16(dtype, tokens=8, hidden=256, n=16, routing="channels"):
    ops = []
    for i in range(n):
        mk, add = te_ops.MakeExtraOutput(), te_ops.AddExtraInput()
        if routing == "channels":
            mk.set_extra_output_channel(0, f"r{i}", output_to_caller=False)
            add.set_extra_input_channel(0, f"r{i}")
        ops += [mk, *linear(hidden, dtype), add]
    seq = te_ops.Sequential(*ops)
    return seq, (tokens, hidden)


def plain16(dtype, tokens=8, hidden=256, n=16):
    ops = []
    for _ in range(n):
        ops += linear(hidden, dtype)
    return te_ops.Sequential(*ops), (tokens, hidden)


def moe_module():
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import moe_channels  # pylint: disable=import-outside-toplevel

    return moe_channels


def run_models(models, steps, blocks, dtype):
    out = {}
    for name, (fn, shape) in models.items():
        x = torch.randn(shape, device=DEV, dtype=dtype, requires_grad=True)
        dy = torch.randn(shape, device=DEV, dtype=dtype)
        timed_block(fn, x, dy, 10)  # warm-up (fusion plans, kernels, allocator)
        f_all, b_all = [], []
        for _ in range(blocks):
            f, b = timed_block(fn, x, dy, steps)
            f_all.append(f)
            b_all.append(b)
        out[name] = {
            "fwd_ms": statistics.median(f_all),
            "bwd_ms": statistics.median(b_all),
            "fwd_all": f_all,
            "bwd_all": b_all,
        }
    return out


def cmd_series(a):
    dtype = torch.bfloat16
    torch.manual_seed(0)
    models = {"linear16": linear16(dtype), "plain16": plain16(dtype)}
    if CUDA:
        mc = moe_module()
        routed, _caller, _p, tokens, hidden = mc.build(
            num_experts=8, hidden=256, ffn=512, tokens=512, dtype=dtype
        )
        models["moe_small"] = (routed, (tokens, hidden))
    import transformer_engine.pytorch.ops.fuser as fuser  # pylint: disable=import-outside-toplevel

    res = run_models(models, a.steps, a.blocks, dtype)
    print(
        json.dumps(
            {
                "label": a.label,
                "round": a.round,
                "device": DEV,
                "fuser": fuser.__file__,
                "models": res,
            }
        )
    )


def cmd_pair(a):
    """Channels against caller-routed for the MoE example block, interleaved blocks."""
    dtype = torch.bfloat16
    if CUDA:
        mc = moe_module()
        torch.manual_seed(0)
        routed, caller, _p, tokens, hidden = mc.build(dtype=dtype)
        pairs = {"moe": (routed, caller, (tokens, hidden))}
        torch.manual_seed(0)
        small = mc.build(num_experts=8, hidden=256, ffn=512, tokens=512, dtype=dtype)
        pairs["moe_small"] = (small[0], small[1], (small[3], small[4]))
    else:
        # CPU: a smoke test of the harness only (two copies of the same block)
        ch, shape = linear16(dtype, routing="channels")
        pairs = {"linear16_cpu_smoke": (ch, linear16(dtype, routing="channels")[0], shape)}
    out = {"label": a.label, "device": DEV}
    for name, (ch, cl, shape) in pairs.items():
        x = torch.randn(shape, device=DEV, dtype=dtype, requires_grad=True)
        dy = torch.randn(shape, device=DEV, dtype=dtype)
        for fn in (ch, cl):
            timed_block(fn, x, dy, 5)
        rows = {"channels": [], "caller": []}
        for i in range(a.blocks):
            order = ("channels", "caller") if i % 2 == 0 else ("caller", "channels")
            for side in order:
                rows[side].append(timed_block(ch if side == "channels" else cl, x, dy, a.steps))
        r = {}
        for k, idx in (("fwd", 0), ("bwd", 1)):
            ratios = [c[idx] / d[idx] for c, d in zip(rows["channels"], rows["caller"])]
            r[k] = {
                "channels_ms": statistics.median(c[idx] for c in rows["channels"]),
                "caller_ms": statistics.median(c[idx] for c in rows["caller"]),
                "ratio_median": statistics.median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
            }
        step = [(c[0] + c[1]) / (d[0] + d[1]) for c, d in zip(rows["channels"], rows["caller"])]
        r["step_ratio"] = {"median": statistics.median(step), "min": min(step), "max": max(step)}
        r["blocks"], r["steps"] = a.blocks, a.steps
        out[name] = r
    print(json.dumps(out))


def spread(xs):
    return f"{statistics.median(xs):.3f} [{min(xs):.3f}-{max(xs):.3f}]" if xs else "-"


def cmd_report(a):
    rows = []
    with open(a.series, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    by_round = {}
    for r in rows:
        by_round.setdefault(r["round"], {})[r["label"]] = r
    lines = [
        f"series/base, {len(by_round)} rounds (processes alternated, ABBA), per-step ms"
        " (median of blocks) and patched/base ratios: median [min-max] over rounds"
    ]
    fuser = {r["label"]: r.get("fuser") for r in rows}
    lines.append(f"fuser modules: {json.dumps(fuser)}")
    models = sorted({m for r in rows for m in r["models"]})
    for m in models:
        ratios = {"fwd": [], "bwd": [], "step": []}
        per_round = []
        for rnd in sorted(by_round):
            pr = by_round[rnd].get("patched", {}).get("models", {}).get(m)
            br = by_round[rnd].get("base", {}).get("models", {}).get(m)
            if not pr or not br:
                continue
            ratios["fwd"].append(pr["fwd_ms"] / br["fwd_ms"])
            ratios["bwd"].append(pr["bwd_ms"] / br["bwd_ms"])
            ratios["step"].append((pr["fwd_ms"] + pr["bwd_ms"]) / (br["fwd_ms"] + br["bwd_ms"]))
            per_round.append(
                f"r{rnd}: patched {pr['fwd_ms']:.3f}+{pr['bwd_ms']:.3f} base {br['fwd_ms']:.3f}+{br['bwd_ms']:.3f}"
            )
        lines.append(
            f"{m:10s} fwd {spread(ratios['fwd'])}  bwd {spread(ratios['bwd'])}  "
            f"step {spread(ratios['step'])}"
        )
        lines += [f"    {p}" for p in per_round]
    if a.pair and os.path.isfile(a.pair) and os.path.getsize(a.pair):
        try:
            pair = json.loads(open(a.pair, encoding="utf-8").read().strip().splitlines()[-1])
            lines.append("channels/caller (paired blocks, interleaved, one process):")
            for name, r in pair.items():
                if isinstance(r, dict):
                    lines.append(
                        f"{name:10s} fwd {r['fwd']['ratio_median']:.3f} [{r['fwd']['ratio_min']:.3f}-{r['fwd']['ratio_max']:.3f}]"
                        f" ({r['fwd']['channels_ms']:.3f} vs {r['fwd']['caller_ms']:.3f} ms)"
                        f"  bwd {r['bwd']['ratio_median']:.3f} [{r['bwd']['ratio_min']:.3f}-{r['bwd']['ratio_max']:.3f}]"
                        f" ({r['bwd']['channels_ms']:.3f} vs {r['bwd']['caller_ms']:.3f} ms)"
                        f"  step {r['step_ratio']['median']:.3f} [{r['step_ratio']['min']:.3f}-{r['step_ratio']['max']:.3f}]"
                    )
        except (ValueError, KeyError) as e:
            lines.append(f"pair: unreadable ({e})")
    if a.example and os.path.isfile(a.example):
        lines.append(
            "examples/moe_channels.py: " + open(a.example, encoding="utf-8").read().strip()[-600:]
        )
    print("\n".join(lines))


def main() -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="verb", required=True)
    s = sub.add_parser("series")
    s.add_argument("--label", required=True)
    s.add_argument("--round", type=int, default=0)
    s.add_argument("--steps", type=int, default=30)
    s.add_argument("--blocks", type=int, default=5)
    s.set_defaults(fn=cmd_series)
    s = sub.add_parser("pair")
    s.add_argument("--label", default="")
    s.add_argument("--steps", type=int, default=20)
    s.add_argument("--blocks", type=int, default=12)
    s.set_defaults(fn=cmd_pair)
    s = sub.add_parser("report")
    s.add_argument("--series", required=True)
    s.add_argument("--pair")
    s.add_argument("--example")
    s.set_defaults(fn=cmd_report)
    a = p.parse_args()
    a.fn(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
