"""Host time of forward+backward (no retain_graph) for a small CPU te.ops.Sequential;
run against both trees, interleaved, and compare medians."""
import sys, time, statistics, torch, _common as c
seq = c.te_ops.Sequential(c.te_ops.ConstantScale(0.5), c.te_ops.Identity(), c.MulWeight(16),
                          c.te_ops.Reshape((-1, 16)))
x = torch.rand(4, 16, requires_grad=True)
def step():
    seq(x).sum().backward()
for _ in range(200): step()
ts = []
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(2000): step()
    ts.append((time.perf_counter() - t0) / 2000 * 1e6)
print(f"{sys.argv[1]}: median {statistics.median(ts):.1f} us/step  all={[round(t,1) for t in ts]}")
