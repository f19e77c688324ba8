import sys; sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import *

# input itself is a view; MakeExtraOutput first returns input_
def input_is_view():
    base = torch.rand(2, 4, requires_grad=True)
    x = base[0]
    m = te_ops.Sequential(te_ops.MakeExtraOutput(), te_ops.ConstantScale(2.0))
    y, r = m(x)
    res = dict(r_is_x=r is x, r_base_is_base=r._base is base)
    try:
        r.mul_(2.0); res["inplace"] = "ok"
    except RuntimeError as e:
        res["inplace"] = str(e)[:70]
    y, r = m(x)
    (y.sum() + 3 * r.sum()).backward()
    res["grad"] = base.grad[0].tolist()[:2]
    return res
case("input is a view", input_is_view)

# checkpoint (non-reentrant) with a buffer public output
def ckpt():
    buf = torch.rand(4)
    m = te_ops.Sequential(Holder(buf), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, b = torch.utils.checkpoint.checkpoint(m, x, use_reentrant=False)
    (y.sum() + b.sum()).backward()
    return dict(buf_grad_fn=buf.grad_fn, buf_rg=buf.requires_grad, xg=x.grad.tolist()[:2])
case("checkpoint non-reentrant buffer public", ckpt)

def ckpt_r():
    buf = torch.rand(4)
    m = te_ops.Sequential(Holder(buf), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, b = torch.utils.checkpoint.checkpoint(m, x, use_reentrant=True)
    (y.sum()).backward()
    return dict(buf_grad_fn=buf.grad_fn, buf_rg=buf.requires_grad, xg=x.grad.tolist()[:2])
case("checkpoint reentrant buffer public", ckpt_r)

# Two public outputs the same buffer object (two slots)
class Two(te_ops.BasicOperation):
    num_extra_outputs = 2
    def __init__(self, t):
        super().__init__(); self.register_buffer("t", t)
    def op_forward(self, *a, **k): raise RuntimeError
    def op_backward(self, *a, **k): raise RuntimeError
    def fuser_forward(self, ctxs, x, **unused):
        return x, [(self.t, self.t)]
    def fuser_backward(self, ctxs, dy, **unused):
        return dy, [()], [()]
def two_slots():
    buf = torch.rand(4)
    m = te_ops.Sequential(Two(buf), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, a, b = m(x)
    (y.sum() + a.sum() + b.sum()).backward()
    return dict(buf_grad_fn=buf.grad_fn, a_is_b=a is b)
case("same buffer in two public slots", two_slots)

# Channel consumer alias when channel tensor is an int tensor; and when producer's y requires grad
def x_no_grad_weight_grad():
    # x doesn't require grad; Bias later does; producer before boundary
    p = te_ops.MakeExtraOutput(); p.set_extra_output_channel(0, "r", output_to_caller=False)
    c = te_ops.AddExtraInput(); c.set_extra_input_channel(0, "r")
    m = te_ops.Sequential(te_ops.ConstantScale(2.0), p, te_ops.Bias(4, device="cpu"), c)
    x = torch.rand(4)
    y = m(x); y.sum().backward()
    return dict(y=y.tolist()[:2], grad=m[2].bias.grad.tolist()[:2])
case("producer before backward boundary", x_no_grad_weight_grad)
