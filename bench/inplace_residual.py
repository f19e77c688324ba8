"""In-place residual through a channel: step time and peak memory of four ways to write it.

The residual block x -> Linear -> Bias -> + x, on one GPU, in four forms:

* ``channel_in_place``: one Sequential, the residual routed by a channel into
  ``AddExtraInput(in_place=True)``. The fuser fuses Linear, Bias and the add into
  ``ForwardLinearBiasAdd`` (the GEMM accumulates into the residual) and, with the series,
  gives the add its own copy of the channel tensor.
* ``channel_out_of_place``: the same with ``AddExtraInput(in_place=False)``: no GEMM
  accumulate, a separate add.
* ``caller_in_place``: two Sequentials, the caller passes a copy of the residual to
  ``AddExtraInput(in_place=True)``. (Passing the residual itself would let the GEMM write
  into the tensor it reads.)
* ``caller_out_of_place``: two Sequentials, ``AddExtraInput(in_place=False)``.

Each variant is checked against plain PyTorch first. Then blocks of ``--steps`` training
steps (forward and backward) are timed, variants interleaved, ``--repeats`` blocks each.
Peak memory is ``torch.cuda.max_memory_allocated`` during one step, above what was allocated
before it. Prints one JSON object: {variant: {"step_ms": median, "step_ms_all": [...],
"peak_mib": ..., "fused": [...]}}.
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch  # before transformer_engine
import transformer_engine.pytorch.ops as te_ops

VARIANTS = ("channel_in_place", "channel_out_of_place", "caller_in_place", "caller_out_of_place")


def build(variant: str, hidden: int, dtype: torch.dtype, weight, bias):
    """The block as a function x -> y, and the Sequentials it runs."""
    in_place = variant.endswith("_in_place")
    make = te_ops.MakeExtraOutput()
    linear = te_ops.BasicLinear(hidden, hidden, device="cuda", dtype=dtype)
    bias_op = te_ops.Bias(hidden, device="cuda", dtype=dtype)
    add = te_ops.AddExtraInput(in_place=in_place)
    with torch.no_grad():
        linear.weight.copy_(weight)
        bias_op.bias.copy_(bias)
    if variant.startswith("channel"):
        make.set_extra_output_channel(0, "residual", output_to_caller=False)
        add.set_extra_input_channel(0, "residual")
        block = te_ops.Sequential(make, linear, bias_op, add)
        return block, [block], (linear, bias_op)
    head, tail = te_ops.Sequential(make), te_ops.Sequential(linear, bias_op, add)

    def caller(x):
        h, residual = head(x)
        return tail(h, residual.clone() if in_place else residual)

    return caller, [head, tail], (linear, bias_op)


def fused_ops(seqs) -> list[str]:
    return [
        type(op).__name__
        for seq in seqs
        for group in seq._module_groups
        for op, _ in getattr(group, "_forward_ops", [])
    ]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tokens", type=int, default=8192)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args()
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    weight = torch.randn(args.hidden, args.hidden, device="cuda", dtype=dtype) / args.hidden**0.5
    bias = torch.randn(args.hidden, device="cuda", dtype=dtype)
    x = torch.randn(args.tokens, args.hidden, device="cuda", dtype=dtype, requires_grad=True)
    dy = torch.randn(args.tokens, args.hidden, device="cuda", dtype=dtype)

    # Plain PyTorch reference
    w_ref = weight.clone().requires_grad_(True)
    b_ref = bias.clone().requires_grad_(True)
    x_ref = x.detach().clone().requires_grad_(True)
    y_ref = torch.nn.functional.linear(x_ref, w_ref, b_ref) + x_ref
    y_ref.backward(dy)
    tols = {"rtol": 2e-2, "atol": 2e-2}

    blocks, out = {}, {}
    for variant in VARIANTS:
        fn, seqs, (linear, bias_op) = build(variant, args.hidden, dtype, weight, bias)
        x_before = x.detach().clone()
        x.grad = None
        y = fn(x)
        y.backward(dy)
        torch.testing.assert_close(x.detach(), x_before, rtol=0, atol=0)
        torch.testing.assert_close(y, y_ref, **tols)
        torch.testing.assert_close(x.grad, x_ref.grad, **tols)
        torch.testing.assert_close(linear.weight.grad, w_ref.grad, **tols)
        torch.testing.assert_close(bias_op.bias.grad, b_ref.grad, **tols)
        blocks[variant] = (fn, linear, bias_op)
        out[variant] = {"fused": fused_ops(seqs), "step_ms_all": []}

    def step(variant):
        fn, linear, bias_op = blocks[variant]
        x.grad = linear.weight.grad = bias_op.bias.grad = None
        fn(x).backward(dy)

    for variant in VARIANTS:  # peak memory of one step, after warm-up
        step(variant)
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step(variant)
        torch.cuda.synchronize()
        out[variant]["peak_mib"] = (torch.cuda.max_memory_allocated() - base) / 2**20

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for r in range(args.repeats):
        order = VARIANTS if r % 2 == 0 else tuple(reversed(VARIANTS))
        for variant in order:
            step(variant)  # warm-up
            torch.cuda.synchronize()
            start.record()
            for _ in range(args.steps):
                step(variant)
            end.record()
            torch.cuda.synchronize()
            out[variant]["step_ms_all"].append(start.elapsed_time(end) / args.steps)
    for variant in VARIANTS:
        out[variant]["step_ms"] = statistics.median(out[variant]["step_ms_all"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
