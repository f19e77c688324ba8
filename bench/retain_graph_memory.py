"""Peak CPU memory of te.ops forward+backward steps, from torch.profiler's memory events.

For PR (e) (retain_graph): run it with the series without the PR and with it first on
PYTHONPATH (one installed build), and compare. Models: 8 x (ConstantScale, MulWeight), where
MulWeight frees its saved input with clear_tensor_data as TE's linear and activation ops do,
and a residual block (MakeExtraOutput, MulWeight, Bias, MulWeight, AddExtraInput on a
hidden channel); 512 x 2048 fp32, 3 measured steps after 2 warm-up steps. The peak is the
running sum of each op's own net allocation and each free, in time order. Prints JSON.
"""

import json
import sys
from pathlib import Path

import torch  # before transformer_engine
import transformer_engine.pytorch.ops as te_ops
from transformer_engine.pytorch import utils as te_utils

# The acceptance suite's op that frees its saved input as TE's ops do
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "acceptance"))
from test_retain_graph import MulWeight  # pylint: disable=wrong-import-position

# clear_tensor_data swaps in an empty CUDA tensor; use an empty CPU tensor here
te_utils._empty_tensor = torch.Tensor


def model(kind, size):
    if kind == "mul8":
        ops = []
        for _ in range(8):
            ops += [te_ops.ConstantScale(0.9), MulWeight(size)]
        return te_ops.Sequential(*ops)
    mk, add = te_ops.MakeExtraOutput(), te_ops.AddExtraInput()
    mk.set_extra_output_channel(0, "r", output_to_caller=False)
    add.set_extra_input_channel(0, "r")
    return te_ops.Sequential(
        mk, MulWeight(size), te_ops.Bias(size, device="cpu"), MulWeight(size), add
    )


def peak(kind, rows=512, size=2048, retain=False):
    torch.manual_seed(0)
    m = model(kind, size)
    x = torch.rand(rows, size, requires_grad=True)
    for _ in range(2):  # warm-up
        m(x).sum().backward()
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True
    ) as prof:
        for _ in range(3):
            m(x).sum().backward(retain_graph=retain)
    # Net allocation of each op (self) and each free outside an op, in time order
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    cur = top = 0
    for e in events:
        cur += e.self_cpu_memory_usage
        top = max(top, cur)
    return {"peak_bytes": top, "net_bytes": cur}


out = {k: peak(k) for k in ("mul8", "residual")}
out["mul8, each backward with retain_graph=True"] = peak("mul8", retain=True)
print(json.dumps(out))
