"""CPU time of forward+backward of a small te.ops Sequential (no retain_graph): run on base and patched."""
import sys, time
import torch
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import MulWeight
import transformer_engine.pytorch.ops as te_ops

torch.manual_seed(0)
S = 16
ops = []
for _ in range(8):
    ops += [MulWeight(S), te_ops.Bias(S, device="cpu")]
m = te_ops.Sequential(*ops)
x = torch.rand(4, S, requires_grad=True)
for _ in range(200):
    m(x).sum().backward()
best = []
for rep in range(7):
    t = time.perf_counter()
    for _ in range(500):
        m(x).sum().backward()
    best.append((time.perf_counter() - t) / 500 * 1e6)
print(f"us/step min={min(best):.1f} median={sorted(best)[3]:.1f}")
