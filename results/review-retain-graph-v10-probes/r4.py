from prelude import *
size=4
def nothing_saved_twice():
    m = te_ops.Sequential(te_ops.ConstantScale(2.0))
    x = torch.rand(3, size, requires_grad=True)
    y = m(x).sum()
    y.backward()
    y.backward()
    print("  x.grad", x.grad[0,0].item())
run("node saving nothing: backward() twice without retain_graph", nothing_saved_twice)
def torch_ref():
    x = torch.rand(3, size, requires_grad=True)
    y = (x*2.0).sum(); y.backward(); y.backward(); print("  torch ok, x.grad", x.grad[0,0].item())
run("torch reference", torch_ref)
def nothing_saved_bias():
    m = te_ops.Sequential(te_ops.Bias(size, device="cpu"))
    x = torch.rand(3, size, requires_grad=True)
    y = m(x).sum(); y.backward(); y.backward()
run("Bias only: backward() twice without retain_graph", nothing_saved_bias)
