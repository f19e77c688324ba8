"""Host time of a normal training step (fwd + bwd, retain_graph=False) on tiny CPU
tensors, where Python overhead dominates. Run on each tree, interleaved, compare medians."""
import sys, time, statistics
import torch
from _common import MulWeight, te_ops, tree

torch.manual_seed(0)
model = te_ops.Sequential(te_ops.ConstantScale(0.5), te_ops.Bias(8, device="cpu"), MulWeight(8))
x = torch.rand(4, 8, requires_grad=True)
def step():
    model(x).sum().backward()
for _ in range(300):
    step()
times = []
for r in range(int(sys.argv[1]) if len(sys.argv) > 1 else 7):
    t = time.perf_counter()
    for _ in range(2000):
        step()
    times.append((time.perf_counter() - t) / 2000 * 1e6)
print(f"{tree()}: median {statistics.median(times):.1f} us/step, min {min(times):.1f}")
