"""Host time per training step of small te.ops blocks, several source trees interleaved.

    hostperf.py run --device cuda --rounds 6 --out rounds.jsonl [--site DIR] \
        main=TREE_A contract=TREE_B channel-routing=TREE_C
    hostperf.py report rounds.jsonl [--base main]
    hostperf.py worker --device cuda ...      (one tree, one round: what `run` starts)

Each tree is a TE checkout whose Python sources go first on PYTHONPATH (then --site, where
the one build's packages are). `run` starts one worker process per tree per round, in an
order that rotates and reverses from round to round, so that drift of the machine falls on
every tree alike; the first tree named is the base of the ratios. A worker builds every
model, warms it up, then times `--blocks` blocks of `--steps` forward+backward steps, with
cyclic GC off inside each block. Per step it records:

- `cpu_us`: CPU time of the Python thread (time.thread_time_ns), read before the final
  synchronize, so it is the host work of the step and not a wait on the GPU;
- `wall_us`: wall time, after the final synchronize;
- `peak_mib`: peak CUDA memory allocated over the model's blocks.

Models (bf16 on CUDA; small batches, so that the step is bound by the host):
`ln_mlp` (te.ops LayerNorm -> Linear -> GELU -> Linear, 16 tokens, hidden 256), `residual`
(a channel residual: MakeExtraOutput -> Linear -> GELU -> Linear -> AddExtraInput),
`grouped_mlp` (GroupedLinear -> ScaledSwiGLU -> GroupedLinear with the caller passing split
sizes and probabilities, the grouped MLP of #3410, from examples/moe_channels.py: 8 experts,
512 tokens, hidden 256, ffn 512), `moe_channels` (the same block with the router on
channels), `standalone` (8 te.ops.Linear called one after another, each `op(x)` in a
transient fuser), and the same ops as plain torch.nn: `torch_ln_mlp`, `torch_residual`,
`torch_standalone`. With `--device cpu` (a check of the harness; TE's kernels need CUDA),
Linear becomes Bias + ConstantScale, LayerNorm and GELU become ConstantScale, and the
grouped models are left out.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------- worker


def _models(device, dtype, hidden=256, tokens=16):
    """name -> (step function, input shape); built on the worker's TE."""
    import torch  # pylint: disable=import-outside-toplevel
    import transformer_engine.pytorch.ops as te_ops  # pylint: disable=import-outside-toplevel

    cuda = device.type == "cuda"
    kw = {"device": device, "dtype": dtype}

    def linear(i, o):
        if cuda:
            return [te_ops.Linear(i, o, **kw)]
        return [te_ops.Bias(o, **kw), te_ops.ConstantScale(0.5)]  # i == o on CPU

    def norm(h):
        return te_ops.LayerNorm(h, **kw) if cuda else te_ops.ConstantScale(0.9)

    def act():
        return te_ops.GELU() if cuda else te_ops.ConstantScale(1.1)

    ffn = 4 * hidden if cuda else hidden
    models = {}

    ln_mlp = te_ops.Sequential(norm(hidden), *linear(hidden, ffn), act(), *linear(ffn, hidden))
    models["ln_mlp"] = (ln_mlp, (tokens, hidden))

    make, add = te_ops.MakeExtraOutput(), te_ops.AddExtraInput()
    make.set_extra_output_channel(0, "residual", output_to_caller=False)
    add.set_extra_input_channel(0, "residual")
    residual = te_ops.Sequential(make, *linear(hidden, hidden), act(), *linear(hidden, hidden), add)
    models["residual"] = (residual, (tokens, hidden))

    lins = [op for _ in range(8) for op in linear(hidden, hidden)]

    def standalone(x):
        for op in lins:
            x = op(x)
        return x

    models["standalone"] = (standalone, (tokens, hidden))

    # The same ops in plain torch.nn
    def t_linear(i, o):
        if cuda:
            return [torch.nn.Linear(i, o, **kw)]
        return [_TorchBias(o, **kw), _TorchScale(0.5)]

    t_norm = torch.nn.LayerNorm(hidden, **kw) if cuda else _TorchScale(0.9)
    t_act = torch.nn.GELU if cuda else (lambda: _TorchScale(1.1))
    models["torch_ln_mlp"] = (
        torch.nn.Sequential(t_norm, *t_linear(hidden, ffn), t_act(), *t_linear(ffn, hidden)),
        (tokens, hidden),
    )
    t_body = torch.nn.Sequential(*t_linear(hidden, hidden), t_act(), *t_linear(hidden, hidden))
    models["torch_residual"] = (lambda x: t_body(x) + x, (tokens, hidden))
    t_lins = torch.nn.Sequential(*[m for _ in range(8) for m in t_linear(hidden, hidden)])
    models["torch_standalone"] = (t_lins, (tokens, hidden))

    if cuda:
        sys.path.insert(0, os.path.join(HERE, "..", "examples"))
        import moe_channels  # pylint: disable=import-outside-toplevel

        routed, caller, _params, moe_tokens, moe_hidden = moe_channels.build(
            num_experts=8, hidden=256, ffn=512, tokens=512, dtype=dtype
        )
        models["grouped_mlp"] = (caller, (moe_tokens, moe_hidden))
        models["moe_channels"] = (routed, (moe_tokens, moe_hidden))
    return models


def _torch_modules():
    import torch  # pylint: disable=import-outside-toplevel

    class TorchBias(torch.nn.Module):
        """x + b, the CPU stand-in of a Linear's torch.nn twin"""

        def __init__(self, size, device, dtype):
            super().__init__()
            self.bias = torch.nn.Parameter(torch.zeros(size, device=device, dtype=dtype))

        def forward(self, x):
            return x + self.bias

    class TorchScale(torch.nn.Module):
        """x * s"""

        def __init__(self, scale):
            super().__init__()
            self.scale = scale

        def forward(self, x):
            return x * self.scale

    return TorchBias, TorchScale


_TorchBias = _TorchScale = None


def _first(y):
    return y[0] if isinstance(y, tuple) else y


def _time_model(fn, shape, device, dtype, args):
    import torch  # pylint: disable=import-outside-toplevel

    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    x = torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
    dy = torch.randn(shape, device=device, dtype=dtype)

    def step():
        _first(fn(x)).backward(dy)

    for _ in range(args.warmup):
        step()
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    cpu, wall = [], []
    for _ in range(args.blocks):
        gc.collect()
        gc.disable()
        try:
            w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
            for _ in range(args.steps):
                step()
            c1 = time.thread_time_ns()
            sync()
            w1 = time.perf_counter_ns()
        finally:
            gc.enable()
        cpu.append((c1 - c0) / args.steps / 1e3)
        wall.append((w1 - w0) / args.steps / 1e3)
    peak = torch.cuda.max_memory_allocated() / 2**20 if cuda else None
    return {
        "cpu_us": statistics.median(cpu),
        "wall_us": statistics.median(wall),
        "cpu_blocks": cpu,
        "wall_blocks": wall,
        "peak_mib": peak,
    }


def cmd_worker(args) -> int:
    global _TorchBias, _TorchScale  # pylint: disable=global-statement
    import torch  # pylint: disable=import-outside-toplevel
    import transformer_engine.pytorch.ops.fuser as fuser  # pylint: disable=import-outside-toplevel

    _TorchBias, _TorchScale = _torch_modules()
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    torch.manual_seed(0)
    out = {"tree": args.tree, "round": args.round, "fuser": fuser.__file__, "models": {}}
    for name, (fn, shape) in _models(device, dtype).items():
        if args.only and name not in args.only.split(","):
            continue
        try:
            out["models"][name] = _time_model(fn, shape, device, dtype, args)
        except Exception as e:  # pylint: disable=broad-except
            # One model that fails must not cost the others' numbers
            out["models"][name] = {"error": f"{type(e).__name__}: {e}"[:500]}
    print(json.dumps(out))
    return 0


# --------------------------------------------------------------------------- driver


def _order(trees, r):
    """Rotate by the round, reversed every other round: each tree takes each slot."""
    k = r % len(trees)
    order = trees[k:] + trees[:k]
    return order if r % 2 == 0 else order[::-1]


def cmd_run(args) -> int:
    trees = [spec.partition("=")[0] for spec in args.trees]
    paths = dict(spec.partition("=")[::2] for spec in args.trees)
    for name, path in paths.items():
        if not os.path.isdir(os.path.join(path, "transformer_engine")):
            sys.exit(f"hostperf: tree {name}={path} has no transformer_engine/")
    worker = [sys.executable, os.path.abspath(__file__), "worker", "--device", args.device]
    worker += ["--steps", str(args.steps), "--blocks", str(args.blocks)]
    worker += ["--warmup", str(args.warmup)] + (["--only", args.only] if args.only else [])
    t0 = time.monotonic()
    with open(args.out, "a", encoding="utf-8") as f:
        for r in range(args.rounds):
            if args.budget_s and time.monotonic() - t0 > args.budget_s:
                print(f"hostperf: budget spent after {r} rounds", file=sys.stderr)
                break
            for name in _order(trees, r):
                env = dict(os.environ)
                env["PYTHONPATH"] = os.pathsep.join(
                    filter(None, [os.path.abspath(paths[name]), args.site])
                )
                cmd = worker + ["--tree", name, "--round", str(r)]
                proc = subprocess.run(
                    cmd,
                    env=env,
                    cwd=args.cwd or None,
                    capture_output=True,
                    text=True,
                    timeout=args.timeout_s,
                    check=False,
                )
                lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
                if proc.returncode != 0 or not lines:
                    row = {"tree": name, "round": r, "error": proc.stderr[-2000:]}
                else:
                    row = json.loads(lines[-1])
                f.write(json.dumps(row) + "\n")
                f.flush()
            print(f"hostperf: round {r + 1}/{args.rounds} done", file=sys.stderr)
    report(args.out, trees[0])
    return 0


# --------------------------------------------------------------------------- report


def _spread(xs, fmt="{:.3f}"):
    if not xs:
        return "-"
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))}-{fmt.format(max(xs))}]"


def report(path, base=None) -> None:
    rows = []
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip().startswith("{")]
    trees = list(dict.fromkeys(r["tree"] for r in rows))
    base = base or trees[0]
    by = {(r["tree"], r["round"]): r for r in rows}
    rounds = sorted({r["round"] for r in rows})
    errors = [r for r in rows if "error" in r]
    models = list(dict.fromkeys(m for r in rows for m in r.get("models", {})))
    print(f"{len(rounds)} rounds, trees {trees}, base {base}; per step, median [min-max] of rounds")
    for e in errors:
        print(f"  worker error, {e['tree']} round {e['round']}: {e['error'][-300:]}")
    for m in models:
        print(f"{m}:")
        for t in trees:
            cells = [by[t, r]["models"].get(m, {}) for r in rounds if (t, r) in by]
            cells = [c for c in cells if "cpu_us" in c]
            errs = {
                by[t, r]["models"][m].get("error")
                for r in rounds
                if (t, r) in by and "error" in by[t, r].get("models", {}).get(m, {})
            }
            if not cells:
                print(f"  {t:18} no result {sorted(e for e in errs if e)[:1]}")
                continue
            line = (
                f"  {t:18} cpu {_spread([c['cpu_us'] for c in cells], '{:.1f}')} us"
                f"  wall {_spread([c['wall_us'] for c in cells], '{:.1f}')} us"
            )
            peaks = {c["peak_mib"] for c in cells if c.get("peak_mib") is not None}
            if peaks:
                line += f"  peak {max(peaks):.1f} MiB"
            if t != base:
                ratios = {"cpu": [], "wall": []}
                for r in rounds:
                    a = by.get((t, r), {}).get("models", {}).get(m, {})
                    b = by.get((base, r), {}).get("models", {}).get(m, {})
                    if "cpu_us" in a and "cpu_us" in b:
                        ratios["cpu"].append(a["cpu_us"] / b["cpu_us"])
                        ratios["wall"].append(a["wall_us"] / b["wall_us"])
                line += f"  /{base}: cpu {_spread(ratios['cpu'])} wall {_spread(ratios['wall'])}"
            print(line)


def main() -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="verb", required=True)
    for verb in ("run", "worker"):
        s = sub.add_parser(verb)
        s.add_argument("--device", default="cuda")
        s.add_argument("--steps", type=int, default=50, help="steps per block")
        s.add_argument("--blocks", type=int, default=5, help="timed blocks per model")
        s.add_argument("--warmup", type=int, default=20, help="untimed steps per model")
        s.add_argument("--only", help="comma-separated model names")
    s = sub.choices["run"]
    s.add_argument("--rounds", type=int, default=6)
    s.add_argument("--out", required=True, help="JSON lines, appended")
    s.add_argument("--site", help="appended to PYTHONPATH after each tree")
    s.add_argument("--cwd", help="working directory of the workers (neither tree)")
    s.add_argument("--timeout-s", type=int, default=180, help="per worker")
    s.add_argument("--budget-s", type=int, default=0, help="start no round after this")
    s.add_argument("trees", nargs="+", help="NAME=PATH; the first is the base")
    s = sub.choices["worker"]
    s.add_argument("--tree", default="")
    s.add_argument("--round", type=int, default=0)
    s = sub.add_parser("report")
    s.add_argument("path")
    s.add_argument("--base")
    args = p.parse_args()
    if args.verb == "worker":
        return cmd_worker(args)
    if args.verb == "run":
        return cmd_run(args)
    report(args.path, args.base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
