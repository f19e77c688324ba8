"""Host time per training step of small te.ops blocks, several source trees paired block by block.

    hostperf.py run --device cuda --rounds 30 --cpu 3 --out rounds.jsonl [--site DIR] \
        main=TREE_A contract=TREE_B channel-routing=TREE_C main-again=TREE_A
    hostperf.py report rounds.jsonl [--base main]
    hostperf.py serve --device cuda ...      (one tree's worker: what `run` starts)

Each tree is a TE checkout whose Python sources go first on PYTHONPATH (then --site, where
the one build's packages are). `run` starts one long-lived worker per tree (with --cpu, all
pinned to the same CPU; only one works at a time); each builds every model and warms it up.
Then, round by round and model by model, the driver asks each tree in turn for one block of
`--steps` forward+backward steps, in an order that rotates and reverses from round to round.
The blocks of one round and model run back to back, so a tree's ratio to the base is taken
per round (paired) and drift of the machine falls on both sides of it. Workers are started
anew for each of `--generations` sets of rounds, with one PYTHONHASHSEED, so that what one
process draws (its memory layout) does not stay with its tree; naming the base tree twice
(`main-again` above) gives a null row, the noise of the method. Per block, cyclic GC off:

- `cpu_us`: CPU time of the Python thread (time.thread_time_ns) per step, read before the
  final synchronize, so it is the host work of the step and not a wait on the GPU;
- `wall_us`: wall time per step, after the final synchronize;
- `peak_mib`: peak CUDA memory allocated over the block.

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


def _block(fn, x, dy, steps, sync, cuda):
    """One timed block: per-step CPU time of this thread and wall time, cyclic GC off."""
    import torch  # pylint: disable=import-outside-toplevel

    if cuda:
        torch.cuda.reset_peak_memory_stats()
    gc.collect()
    gc.disable()
    try:
        w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        for _ in range(steps):
            _first(fn(x)).backward(dy)
        c1 = time.thread_time_ns()
        sync()
        w1 = time.perf_counter_ns()
    finally:
        gc.enable()
    return {
        "cpu_us": (c1 - c0) / steps / 1e3,
        "wall_us": (w1 - w0) / steps / 1e3,
        "peak_mib": torch.cuda.max_memory_allocated() / 2**20 if cuda else None,
    }


def cmd_serve(args) -> int:
    """Build every model on this tree's TE, warm each up, then time one block per request.

    Requests are lines of JSON on stdin, {"model": NAME, "steps": N}; each answer is one line
    of JSON on stdout. The process stays up between requests, so the driver can alternate
    trees block by block without paying an import per block.
    """
    global _TorchBias, _TorchScale  # pylint: disable=global-statement
    import torch  # pylint: disable=import-outside-toplevel
    import transformer_engine.pytorch.ops.fuser as fuser  # pylint: disable=import-outside-toplevel

    _TorchBias, _TorchScale = _torch_modules()
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)
    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    dtype = torch.bfloat16 if cuda else torch.float32
    torch.manual_seed(0)
    ready, errors = {}, {}
    for name, (fn, shape) in _models(device, dtype).items():
        if args.only and name not in args.only.split(","):
            continue
        try:
            x = torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
            dy = torch.randn(shape, device=device, dtype=dtype)
            _block(fn, x, dy, args.warmup, sync, cuda)
            ready[name] = (fn, x, dy)
        except Exception as e:  # pylint: disable=broad-except
            # One model that fails must not cost the others' numbers
            errors[name] = f"{type(e).__name__}: {e}"[:500]
    print(json.dumps({"ready": list(ready), "errors": errors, "fuser": fuser.__file__}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        fn, x, dy = ready[req["model"]]
        print(json.dumps(_block(fn, x, dy, req["steps"], sync, cuda)), flush=True)
    return 0


# --------------------------------------------------------------------------- driver


def _order(trees, r):
    """Rotate by the round, reversed every other round: each tree takes each slot."""
    k = r % len(trees)
    order = trees[k:] + trees[:k]
    return order if r % 2 == 0 else order[::-1]


def _start(name, path, args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.abspath(path), args.site]))
    env["PYTHONHASHSEED"] = "0"  # the same str hashes, so dicts and sets alike, in every worker
    cmd = [sys.executable, os.path.abspath(__file__), "serve", "--device", args.device]
    cmd += ["--warmup", str(args.warmup)] + (["--only", args.only] if args.only else [])
    pin = (lambda: os.sched_setaffinity(0, {args.cpu})) if args.cpu is not None else None
    return subprocess.Popen(  # pylint: disable=consider-using-with,subprocess-popen-preexec-fn
        cmd,
        env=env,
        cwd=args.cwd or None,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
        preexec_fn=pin,
    )


def _answer(proc, name):
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"hostperf: the worker of tree {name} ended (rc {proc.wait()})")
    return json.loads(line)


def cmd_run(args) -> int:
    trees = [spec.partition("=")[0] for spec in args.trees]
    paths = dict(spec.partition("=")[::2] for spec in args.trees)
    for name, path in paths.items():
        if not os.path.isdir(os.path.join(path, "transformer_engine")):
            sys.exit(f"hostperf: tree {name}={path} has no transformer_engine/")
    t0 = time.monotonic()
    per_generation = -(-args.rounds // args.generations)
    with open(args.out, "a", encoding="utf-8") as f:
        for first in range(0, args.rounds, per_generation):
            if args.budget_s and time.monotonic() - t0 > args.budget_s:
                print(f"hostperf: budget spent after {first} rounds", file=sys.stderr)
                break
            rounds = range(first, min(args.rounds, first + per_generation))
            if not _generation(trees, paths, rounds, args, f, t0):
                break
    report(args.out, trees[0])
    return 0


def _generation(trees, paths, rounds, args, f, t0) -> bool:
    """Rounds with one set of workers. Workers are started anew for each generation, so that
    what one process draws (its memory layout) does not stay with its tree for every round."""
    procs = {name: _start(name, paths[name], args) for name in trees}
    try:
        hello = {name: _answer(procs[name], name) for name in trees}
        models = [m for m in hello[trees[0]]["ready"] if all(m in h["ready"] for h in hello.values())]
        for name, h in hello.items():
            f.write(json.dumps({"tree": name, "fuser": h["fuser"], "errors": h["errors"]}) + "\n")
        print(f"hostperf: workers up after {time.monotonic() - t0:.0f} s", file=sys.stderr)
        for r in rounds:
            if args.budget_s and time.monotonic() - t0 > args.budget_s:
                print(f"hostperf: budget spent after {r} rounds", file=sys.stderr)
                return False
            for i, model in enumerate(models):
                for name in _order(trees, r + i):
                    procs[name].stdin.write(json.dumps({"model": model, "steps": args.steps}) + "\n")
                    row = {"tree": name, "round": r, "model": model, **_answer(procs[name], name)}
                    f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"hostperf: round {r + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        for proc in procs.values():
            proc.stdin.close()
            proc.wait(timeout=60)
    return True


# --------------------------------------------------------------------------- report


def _q(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def _spread(xs, fmt="{:.3f}"):
    """median [interquartile range]"""
    if not xs:
        return "-"
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(_q(xs, 0.25))}-{fmt.format(_q(xs, 0.75))}]"


def report(path, base=None) -> None:
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip().startswith("{")]
    blocks = [r for r in rows if "model" in r]
    trees = list(dict.fromkeys(r["tree"] for r in rows))
    base = base or trees[0]
    by = {(r["tree"], r["round"], r["model"]): r for r in blocks}
    rounds = sorted({r["round"] for r in blocks})
    models = list(dict.fromkeys(r["model"] for r in blocks))
    print(
        f"{len(rounds)} rounds, trees {trees}, base {base}; per step, median [interquartile"
        " range] of the rounds; ratios are paired: each tree's block over the base's block of"
        " the same round and model, timed back to back"
    )
    for r in rows:
        if r.get("errors"):
            print(f"  {r['tree']}: models that failed: {r['errors']}")
    for m in models:
        print(f"{m}:")
        for t in trees:
            cells = [by[t, r, m] for r in rounds if (t, r, m) in by]
            if not cells:
                continue
            line = (
                f"  {t:18} cpu {_spread([c['cpu_us'] for c in cells], '{:.1f}')} us"
                f"  wall {_spread([c['wall_us'] for c in cells], '{:.1f}')} us"
            )
            peaks = [c["peak_mib"] for c in cells if c.get("peak_mib") is not None]
            if peaks:
                line += f"  peak {max(peaks):.1f} MiB"
            if t != base:
                pairs = [(by[t, r, m], by[base, r, m]) for r in rounds if (t, r, m) in by and (base, r, m) in by]
                cpu = [a["cpu_us"] / b["cpu_us"] for a, b in pairs]
                wall = [a["wall_us"] / b["wall_us"] for a, b in pairs]
                line += f"  /{base}: cpu {_spread(cpu)} wall {_spread(wall)} n={len(pairs)}"
            print(line)


def main() -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="verb", required=True)
    for verb in ("run", "serve"):
        s = sub.add_parser(verb)
        s.add_argument("--device", default="cuda")
        s.add_argument("--warmup", type=int, default=20, help="untimed steps per model")
        s.add_argument("--only", help="comma-separated model names")
    s = sub.choices["run"]
    s.add_argument("--steps", type=int, default=50, help="steps per block")
    s.add_argument("--rounds", type=int, default=30, help="blocks per model and tree")
    s.add_argument("--cpu", type=int, help="pin every worker to this CPU")
    s.add_argument("--generations", type=int, default=3, help="sets of workers, started anew")
    s.add_argument("--out", required=True, help="JSON lines, appended")
    s.add_argument("--site", help="appended to PYTHONPATH after each tree")
    s.add_argument("--cwd", help="working directory of the workers (neither tree)")
    s.add_argument("--budget-s", type=int, default=0, help="start no round after this")
    s.add_argument("trees", nargs="+", help="NAME=PATH; the first is the base")
    s = sub.add_parser("report")
    s.add_argument("path")
    s.add_argument("--base")
    args = p.parse_args()
    if args.verb == "serve":
        return cmd_serve(args)
    if args.verb == "run":
        return cmd_run(args)
    report(args.path, args.base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
