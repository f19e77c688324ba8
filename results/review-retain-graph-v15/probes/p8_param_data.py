"""A parameter updated through .data (as TE's FusedAdam does, fused_adam.py:710/717) between
passes: the version check does not see it; the op reads the new weight live (like LayerNorm).
torch.nn does the same for a saved weight, so this matches PyTorch, but the docs' 'e.g. by an
optimizer step' overclaims."""
import sys
import torch
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import MulWeight, run
import transformer_engine.pytorch.ops as te_ops

def data_update():
    mul = MulWeight(4)
    x = torch.rand(2, 4, requires_grad=True)
    loss = te_ops.Sequential(mul)(x).sum()
    loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    mul.weight.data.mul_(3.0)
    loss.backward()
    return f"no error; second-pass dx / first-pass dx = {((x.grad - g1) / g1).mean().item():.2f}"
run("param updated via .data between passes", data_update)
