"""Can TE graph-capture the MoE experts when the caller routes split sizes and probabilities?

The channel-routed MoE block of examples/moe_channels.py fails in
`te.make_graphed_callables`. This captures the same experts (GroupedLinear ->
ScaledSwiGLU -> GroupedLinear(scale_bias=True)) without channels, the caller passing
the split sizes and router probabilities as extra inputs, which works on an unpatched
TE too. Run it with the base's sources and with the series to see where capture fails.
"""

from __future__ import annotations

import json
import os
import sys

import torch  # before transformer_engine
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import moe_channels  # noqa: E402  pylint: disable=wrong-import-position


def main() -> None:
    torch.manual_seed(0)
    experts, hidden, tokens, dtype = 8, 1024, 4096, torch.bfloat16
    fc1, act, fc2 = moe_channels.experts(experts, hidden, 2048, dtype)
    block = te_ops.Sequential(fc1, act, fc2)
    split = torch.full((experts,), tokens // experts, device="cuda", dtype=torch.int64)
    x = torch.randn((tokens, hidden), device="cuda", dtype=dtype, requires_grad=True)
    probs = torch.rand((tokens,), device="cuda", dtype=dtype, requires_grad=True)
    out = {"fuser": te_ops.Sequential.__module__}
    try:
        te.make_graphed_callables(block, (x, split, probs, split, probs), num_warmup_iters=3)
        out["caller_routed_moe_capture"] = "ok"
    except Exception as e:  # pylint: disable=broad-except
        out["caller_routed_moe_capture"] = (
            f"capture failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
