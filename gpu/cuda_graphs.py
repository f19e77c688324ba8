"""Graph-capture channel-routed Sequentials with te.make_graphed_callables (CUDA only).

Two blocks:

* ``residual``: MakeExtraOutput -> BasicLinear -> Bias -> AddExtraInput(in_place=True), the
  residual routed by a hidden channel (the ForwardLinearBiasAdd fusion, with the series'
  copy for the in-place consumer);
* ``moe``: the MoE block of examples/moe_channels.py (router -> GroupedLinear ->
  ScaledSwiGLU -> GroupedLinear(scale_bias=True), split sizes and probabilities routed by
  channels).

Each block is captured once, then replayed on new inputs. Every replay's output and input
and parameter grads must equal those of the same block run eagerly on the same inputs.
Prints one JSON line: {block: "ok" | "capture failed: ..." | "mismatch: ..."}.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import torch  # before transformer_engine
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import moe_channels  # noqa: E402  pylint: disable=wrong-import-position


def residual_block(hidden=1024, dtype=torch.bfloat16):
    make = te_ops.MakeExtraOutput()
    linear = te_ops.BasicLinear(hidden, hidden, device="cuda", dtype=dtype)
    bias = te_ops.Bias(hidden, device="cuda", dtype=dtype)
    add = te_ops.AddExtraInput(in_place=True)
    make.set_extra_output_channel(0, "residual", output_to_caller=False)
    add.set_extra_input_channel(0, "residual")
    return te_ops.Sequential(make, linear, bias, add)


def moe_block():
    routed, *_ = moe_channels.build()
    return routed


def twin(make):
    """Two identical blocks: one to capture, one to run eagerly."""
    torch.manual_seed(0)
    a = make()
    torch.manual_seed(0)
    b = make()
    with torch.no_grad():
        for pa, pb in zip(a.parameters(), b.parameters()):
            pb.copy_(pa)
    return a, b


def check(name, make, shape, dtype, replays=3):
    graphed_block, eager = twin(make)
    sample = torch.randn(shape, device="cuda", dtype=dtype, requires_grad=True)
    try:
        graphed = te.make_graphed_callables(graphed_block, (sample,), num_warmup_iters=3)
    except Exception as e:  # pylint: disable=broad-except
        return f"capture failed: {type(e).__name__}: {str(e).splitlines()[0][:300]}"
    for _ in range(replays):
        x = torch.randn(shape, device="cuda", dtype=dtype)
        dy = torch.randn(shape, device="cuda", dtype=dtype)
        results = []
        for fn, block in ((graphed, graphed_block), (eager, eager)):
            for p in block.parameters():
                p.grad = None
            xx = x.clone().requires_grad_(True)
            y = fn(xx)
            y.backward(dy)
            results.append([y.detach().clone(), xx.grad.clone()]
                           + [p.grad.clone() for p in block.parameters()])
        for i, (g, e) in enumerate(zip(*results)):
            if not torch.allclose(g.float(), e.float(), rtol=1e-2, atol=1e-2):
                return f"mismatch in tensor {i} (0: output, 1: input grad, then params)"
    return "ok"


def main() -> None:
    out = {}
    for name, make, shape in (
        ("residual", residual_block, (2048, 1024)),
        ("moe", moe_block, (4096, 1024)),
    ):
        try:
            out[name] = check(name, make, shape, torch.bfloat16)
        except Exception:  # pylint: disable=broad-except
            out[name] = "error: " + traceback.format_exc().splitlines()[-1][:300]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
