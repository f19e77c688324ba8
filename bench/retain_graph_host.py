"""Host time per training step of a small te.ops model whose ops save tensors (CUDA).

Two LayerNorm, Linear, GELU, Linear blocks, 8 x 64 in bf16: launch-bound, so the step's
wall time is the host's (Python and launches). Each step is a normal one: forward, then one
backward without retain_graph. Prints one JSON object {"te_mlp8": seconds_per_step}, the
median of `--repeats` blocks of `--steps` steps (each block synchronised at its end).
gpu/rg_cuda.sh runs it on two source trees in alternating order.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time

import torch  # before transformer_engine
import transformer_engine.pytorch.ops as te_ops


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--size", type=int, default=64)
    args = p.parse_args()
    kw = {"device": "cuda", "dtype": torch.bfloat16}
    ops = []
    for _ in range(2):
        ops += [te_ops.LayerNorm(args.size, **kw), te_ops.Linear(args.size, args.size, **kw)]
        ops += [te_ops.GELU(), te_ops.Linear(args.size, args.size, **kw)]
    model = te_ops.Sequential(*ops)
    x = torch.rand((8, args.size), requires_grad=True, **kw)
    dy = torch.rand((8, args.size), **kw)
    for _ in range(20):  # warm-up
        model(x).backward(dy)
    torch.cuda.synchronize()
    blocks = []
    for _ in range(args.repeats):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        for _ in range(args.steps):
            model(x).backward(dy)
        torch.cuda.synchronize()
        blocks.append((time.perf_counter() - start) / args.steps)
        gc.enable()
    print(json.dumps({"te_mlp8": statistics.median(blocks)}))


if __name__ == "__main__":
    main()
