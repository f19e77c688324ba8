from prelude import *
import torch._dynamo.compiled_autograd as ca
size=4
def f(retain):
    a, b = MulWeight(size), MulWeight(size)
    m = te_ops.Sequential(te_ops.ConstantScale(2.0), a, b)
    x = torch.rand(3, size, requires_grad=True)
    y = m(x).sum()
    with ca._enable(torch.compile(backend="eager")):
        y.backward(retain_graph=retain)
        print("  pass1 freed", a.freed, b.freed)
        if retain:
            y.backward()
            print("  pass2 freed", a.freed, b.freed)
for r in (False, True):
    run(f"compiled autograd retain={r}", lambda: f(r))
