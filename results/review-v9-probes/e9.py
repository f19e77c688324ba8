import sys; sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import *
def f():
    p = torch.nn.Parameter(torch.rand(4))   # trainable, owned by another module
    m = te_ops.Sequential(Holder(p, register=False), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, b = m(x)
    r = dict(p_is_leaf=p.is_leaf, p_grad_fn=type(p.grad_fn).__name__ if p.grad_fn else None)
    (p * 3).sum().backward()   # the other module uses p
    r["p.grad"] = None if p.grad is None else p.grad.tolist()[:2]
    return r
case("unregistered trainable parameter as public output", f)
