"""Users who never retain the graph: compiled autograd, torch.compile, timing; base vs head."""
import sys, time, torch
sys.path.insert(0, "probes")
from common import *
S = 64
def model():
    torch.manual_seed(0)
    ops = []
    for _ in range(8): ops += [MulWeight(S, torch.float32), te_ops.Bias(S, device="cpu")]
    return te_ops.Sequential(*ops)
def ref_grads(m, x):
    for p in m.parameters(): p.grad = None
    x.grad = None
    m(x).square().sum().backward()
    return [x.grad.clone()] + [p.grad.clone() for p in m.parameters()]
def ca():
    m = model(); x = torch.rand(8, S, requires_grad=True)
    r = ref_grads(m, x)
    for p in m.parameters(): p.grad = None
    x.grad = None
    loss = m(x).square().sum()
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        loss.backward()
    return all(torch.allclose(a, b) for a, b in zip(r, [x.grad] + [p.grad for p in m.parameters()]))
def tc():
    m = model(); x = torch.rand(8, S, requires_grad=True)
    r = ref_grads(m, x)
    for p in m.parameters(): p.grad = None
    x.grad = None
    f = torch.compile(lambda t: m(t).square().sum(), backend="aot_eager")
    f(x).backward()
    return all(torch.allclose(a, b) for a, b in zip(r, [x.grad] + [p.grad for p in m.parameters()]))
for name, fn in () and (("compiled autograd, no retain", ca), ("torch.compile aot_eager, no retain", tc)):
    try: print(name, fn())
    except Exception as e: print(name, "raises", type(e).__name__, str(e)[:200])
m = model(); x = torch.rand(8, S, requires_grad=True)
for _ in range(200): m(x).sum().backward()
best = 1e9
for _ in range(5):
    t = time.perf_counter()
    for _ in range(500): m(x).sum().backward()
    best = min(best, (time.perf_counter() - t) / 500)
print(f"fwd+bwd 16 ops, best of 5: {best*1e6:.1f} us/iter")
