from prelude import *
size=4
def f():
    mw = MulWeight(size)
    m = te_ops.Sequential(te_ops.Identity(), te_ops.ConstantScale(2.0), mw)
    x = torch.rand(3, size)  # no grad: Identity is past the backward boundary
    y = m(x).sum()
    y.backward(retain_graph=True); y.backward()
    print("  ok, w.grad", mw.weight.grad[0].item())
run("op before the backward boundary that does not opt in", f)
