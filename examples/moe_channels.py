"""MoE-shaped expert block whose routing tensors travel through extra-tensor channels.

A router op makes per-token probabilities (fresh, with a parameter) and per-expert split
sizes (tokens are assumed already permuted by expert). Channels route them into
GroupedLinear (split sizes), ScaledSwiGLU (probabilities) and the second
GroupedLinear(scale_bias=True) (both), so the caller passes only the tokens.

The script checks the block against the same experts called with caller-routed extra
inputs: output and every gradient, then times both (CUDA only). It prints one JSON line.
"""

from __future__ import annotations

import json
import statistics
import time

import torch  # before transformer_engine
import transformer_engine.pytorch.ops as te_ops


class Router(te_ops.BasicOperation):
    """Main output: its input. Extra outputs: split sizes and sigmoid(x @ w)."""

    num_extra_outputs = 2

    def __init__(self, hidden: int, split_sizes: list[int], device="cuda", dtype=None) -> None:
        super().__init__()
        weight = torch.randn(hidden, device=device, dtype=dtype) / hidden**0.5
        self.weight = torch.nn.Parameter(weight)
        self.register_buffer("split_sizes", torch.tensor(split_sizes, device=device))

    def op_forward(self, *args, **kwargs):
        raise RuntimeError("Router uses fuser_forward")

    def op_backward(self, *args, **kwargs):
        raise RuntimeError("Router uses fuser_backward")

    def fuser_forward(self, basic_op_ctxs, input_, **unused):
        probs = torch.sigmoid(input_ @ self.weight)
        basic_op_ctxs[0].save_for_backward(input_, probs)
        return input_, [(self.split_sizes, probs)]

    def fuser_backward(self, basic_op_ctxs, grad_output, *, basic_op_grad_extra_outputs):
        input_, probs = basic_op_ctxs[0].saved_tensors
        grad_probs = basic_op_grad_extra_outputs[0][1]
        grad_pre = grad_probs * probs * (1 - probs)
        grad_input = grad_output + grad_pre.unsqueeze(-1) * self.weight
        grad_weight = (grad_pre.unsqueeze(-1) * input_).sum(dim=0)
        return grad_input, [(grad_weight,)], [()]


def experts(num_experts: int, hidden: int, ffn: int, dtype):
    fc1 = te_ops.GroupedLinear(num_experts, hidden, 2 * ffn, bias=True, device="cuda", dtype=dtype)
    act = te_ops.ScaledSwiGLU()
    fc2 = te_ops.GroupedLinear(
        num_experts, ffn, hidden, bias=True, scale_bias=True, device="cuda", dtype=dtype
    )
    return fc1, act, fc2


def build(num_experts=8, hidden=1024, ffn=2048, tokens=4096, dtype=torch.bfloat16, probs_fn=None):
    """The channel-routed block and its caller-routed twin with the same parameters.

    ``probs_fn(x, weight)`` computes the caller's router probabilities (default
    ``sigmoid(x @ weight)`` under autograd).
    """
    base = tokens // num_experts
    split_sizes = [base + (i % 3 - 1) * 16 for i in range(num_experts)]
    split_sizes[-1] += tokens - sum(split_sizes)

    # Channel-routed: the caller passes only x.
    router = Router(hidden, split_sizes, dtype=dtype)
    fc1, act, fc2 = experts(num_experts, hidden, ffn, dtype)
    router.set_extra_output_channel(0, "split_sizes", output_to_caller=False)
    router.set_extra_output_channel(1, "probs", output_to_caller=False)
    fc1.set_extra_input_channel(0, "split_sizes")
    act.set_extra_input_channel(0, "probs")
    fc2.set_extra_input_channel(0, "split_sizes")
    fc2.set_extra_input_channel(1, "probs")
    routed = te_ops.Sequential(router, fc1, act, fc2)

    # Caller-routed: same parameters, router computed by the caller.
    fc1_c, act_c, fc2_c = experts(num_experts, hidden, ffn, dtype)
    with torch.no_grad():
        for src, dst in ((fc1, fc1_c), (fc2, fc2_c)):
            for name, param in dst.named_parameters():
                param.copy_(getattr(src, name))
    router_w = router.weight.detach().clone().requires_grad_(True)
    plain = te_ops.Sequential(fc1_c, act_c, fc2_c)

    def caller(x):
        probs = probs_fn(x, router_w) if probs_fn else torch.sigmoid(x @ router_w)
        return plain(x, router.split_sizes, probs, router.split_sizes, probs)

    params = {
        "router": (router.weight, router_w),
        **{f"fc1.{n}": (p, getattr(fc1_c, n)) for n, p in fc1.named_parameters()},
        **{f"fc2.{n}": (p, getattr(fc2_c, n)) for n, p in fc2.named_parameters()},
    }
    return routed, caller, params, tokens, hidden


def main() -> None:
    torch.manual_seed(0)
    dtype = torch.float32
    routed, caller, params, tokens, hidden = build(dtype=dtype)
    x = torch.randn((tokens, hidden), device="cuda", dtype=dtype)
    dy = torch.randn((tokens, hidden), device="cuda", dtype=dtype)

    x_r = x.clone().requires_grad_(True)
    x_c = x.clone().requires_grad_(True)
    y_r = routed(x_r)
    y_c = caller(x_c)
    y_r.backward(dy)
    y_c.backward(dy)
    tols = {"rtol": 1e-3, "atol": 1e-3}  # TF32 grouped GEMMs
    torch.testing.assert_close(y_r, y_c, **tols)
    torch.testing.assert_close(x_r.grad, x_c.grad, **tols)
    for name, (p_r, p_c) in params.items():
        torch.testing.assert_close(p_r.grad, p_c.grad, **tols, msg=lambda m, n=name: f"{n}: {m}")

    def step(fn, xx):
        y = fn(xx)
        y.backward(dy)

    def timed(fn, xx, steps=20):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            step(fn, xx)
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / steps

    for fn, xx in ((routed, x_r), (caller, x_c)):
        timed(fn, xx, 5)
    times = {"channels": [], "caller": []}
    for _ in range(15):
        times["channels"].append(timed(routed, x_r))
        times["caller"].append(timed(caller, x_c))
    ratios = [a / b for a, b in zip(times["channels"], times["caller"])]
    print(
        json.dumps(
            {
                "moe_example": "outputs and all grads match",
                "step_ms_channels": 1e3 * statistics.median(times["channels"]),
                "step_ms_caller": 1e3 * statistics.median(times["caller"]),
                "ratio_median": statistics.median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
            }
        )
    )


if __name__ == "__main__":
    main()
