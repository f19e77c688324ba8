import sys; sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import *

def public_and_inplace_consumer():
    p = te_ops.MakeExtraOutput(); p.set_extra_output_channel(0, "r")  # public + channel
    c = te_ops.AddExtraInput(in_place=True); c.set_extra_input_channel(0, "r")
    m = te_ops.Sequential(te_ops.ConstantScale(1.0), p, te_ops.ConstantScale(2.0), c)
    x = torch.rand(4, requires_grad=True)
    y, r = m(x)
    return dict(r_ok=torch.allclose(r, x), y_ok=torch.allclose(y, 3 * x))
case("public channel + in-place consumer", public_and_inplace_consumer)

def fused_standalone_rebind():
    p = te_ops.MakeExtraOutput(in_place=True); p.set_extra_output_channel(0, "r", output_to_caller=False)
    c = te_ops.AddExtraInput(); c.set_extra_input_channel(0, "r")
    f = te_ops.FusedOperation((te_ops.ConstantScale(1.0), p, te_ops.ConstantScale(2.0), c))
    x = torch.rand(4, requires_grad=True)
    y = f(x)
    p.set_extra_output_channel(0, None)   # rebind before backward
    dy = torch.rand(4); dy0 = dy.clone()
    y.backward(dy)
    return dict(dy_unchanged=torch.equal(dy, dy0), grad_ok=torch.allclose(x.grad, 3 * dy0))
case("standalone FusedOperation rebind before backward", fused_standalone_rebind)

def checkpointed():
    p = te_ops.MakeExtraOutput(in_place=True); p.set_extra_output_channel(0, "r", output_to_caller=False)
    c = te_ops.AddExtraInput(in_place=True); c.set_extra_input_channel(0, "r")
    m = te_ops.Sequential(p, te_ops.ConstantScale(2.0), c)
    x = torch.rand(4, requires_grad=True); x0 = x.detach().clone()
    y = torch.utils.checkpoint.checkpoint(m, x, use_reentrant=False)
    dy = torch.rand(4); dy0 = dy.clone()
    y.backward(dy)
    return dict(x_unchanged=torch.equal(x.detach(), x0), dy_unchanged=torch.equal(dy, dy0), grad_ok=torch.allclose(x.grad, 3 * dy0))
case("checkpointed in-place residual", checkpointed)

def nograd_inference():
    p = te_ops.MakeExtraOutput(); p.set_extra_output_channel(0, "r", output_to_caller=False)
    c = te_ops.AddExtraInput(in_place=True); c.set_extra_input_channel(0, "r")
    m = te_ops.Sequential(p, te_ops.ConstantScale(2.0), c)
    x = torch.rand(4); x0 = x.clone()
    with torch.no_grad():
        y = m(x)
    return dict(x_unchanged=torch.equal(x, x0), y_ok=torch.allclose(y, 3 * x0))
case("inference in-place residual", nograd_inference)
