import sys; sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import *
def hidden_sum():
    p = te_ops.MakeExtraOutput(in_place=True); p.set_extra_output_channel(0, "r", output_to_caller=False)
    c = te_ops.AddExtraInput(); c.set_extra_input_channel(0, "r")
    m = te_ops.Sequential(p, te_ops.ConstantScale(2.0), c)
    x = torch.rand(8, 8, requires_grad=True)
    m(x).sum().backward()
    return dict(grad_ok=torch.allclose(x.grad, torch.full_like(x, 3.0)))
case("in-place producer, hidden channel, y.sum().backward()", hidden_sum)
def public_unbound_sum():
    m = te_ops.Sequential(te_ops.MakeExtraOutput(in_place=True), te_ops.ConstantScale(2.0))
    x = torch.rand(8, 8, requires_grad=True)
    y, r = m(x)
    (y.sum() + r.sum()).backward()
    return dict(grad_ok=torch.allclose(x.grad, torch.full_like(x, 3.0)))
case("in-place producer, unbound public output, (y.sum()+r.sum()).backward()", public_unbound_sum)
