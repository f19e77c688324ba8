import sys; sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import *
for kind in ("buffer", "buffer view"):
    def f():
        big = torch.rand(2, 4)
        t = big if kind == "buffer" else big[0]
        m = te_ops.Sequential(Holder(t, register=False), te_ops.ConstantScale(2.0))
        x = torch.rand(4, requires_grad=True)
        y, b = m(x)
        with torch.no_grad():
            big.mul_(0.9)   # op updates its buffer, as running stats do
        r = {}
        try:
            z = (b * 2).sum(); r["use after update"] = "ok"
        except RuntimeError as e:
            r["use after update"] = str(e)[:100]
        try:
            (y.sum() + b.sum()).backward(); r["backward"] = "ok"
        except RuntimeError as e:
            r["backward"] = str(e)[:100]
        return r
    case(kind, f)
