"""CPU overhead of a normal (not retained) forward+backward of a small te.ops pipeline.
Run on base and PR trees alternately; reports median us per step."""
import time, statistics
import torch
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops

m = te_ops.Sequential(*[op for _ in range(4) for op in (te_ops.Bias(16, device="cpu"), te_ops.ConstantScale(0.5), te_ops.Identity())])
x = torch.rand(4, 16, requires_grad=True)
def step():
    m(x).sum().backward()
for _ in range(200):
    step()
ts = []
for _ in range(15):
    t0 = time.perf_counter()
    for _ in range(300):
        step()
    ts.append((time.perf_counter() - t0) / 300 * 1e6)
print(f"{statistics.median(ts):.1f} us/step (min {min(ts):.1f})")
