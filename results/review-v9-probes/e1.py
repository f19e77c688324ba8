import sys; sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import *

# 1. Buffer as public extra output, no consumer
def buf_public():
    buf = torch.rand(4)
    m = te_ops.Sequential(Holder(buf), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, b = m(x)
    return dict(buf_grad_fn=buf.grad_fn, buf_rg=buf.requires_grad, b_is_buf=b is buf, b_rg=b.requires_grad, b_grad_fn=type(b.grad_fn).__name__ if b.grad_fn else None)
case("buffer public", buf_public)

# 2. Second step: buffer re-used; does in-place on buffer by op between steps break backward of step 1?
def buf_inplace_between():
    buf = torch.rand(4)
    m = te_ops.Sequential(Holder(buf), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, b = m(x)
    with torch.no_grad(): buf.add_(1.0)   # e.g. EMA update of a buffer
    (y.sum() + b.sum()).backward()
    return dict(xgrad=x.grad.tolist()[:2], b=b.tolist()[:2])
case("buffer updated in place before backward", buf_inplace_between)

# 3. Buffer updated in place with grad enabled (caller in-place on returned)
def caller_inplace_on_returned_buffer():
    buf = torch.rand(4)
    m = te_ops.Sequential(Holder(buf), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, b = m(x)
    before = buf.clone()
    b.mul_(3.0)
    return dict(buf_changed=not torch.equal(buf, before))
case("caller in-place on returned buffer", caller_inplace_on_returned_buffer)

# 4. buffer view
def bufview_public():
    big = torch.rand(2, 4)
    v = big[0]
    m = te_ops.Sequential(Holder(v, register=False), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, b = m(x)
    r = dict(v_grad_fn=v.grad_fn, big_grad_fn=big.grad_fn, b_base_is_big=b._base is big, b_grad_fn=type(b.grad_fn).__name__ if b.grad_fn else None)
    try:
        b.mul_(2)
        r["inplace"] = "ok"
    except RuntimeError as e:
        r["inplace"] = str(e)[:80]
    # in-place on base under grad mode afterwards
    try:
        big.add_(1.0); _ = b + 1; r["base_inplace"] = "ok"
    except RuntimeError as e:
        r["base_inplace"] = str(e)[:80]
    return r
case("buffer view public", bufview_public)

# 5. same tensor returned as main output and extra output (MakeExtraOutput after an op)
def dup_output():
    m = te_ops.Sequential(te_ops.ConstantScale(2.0), te_ops.MakeExtraOutput())
    x = torch.rand(4, requires_grad=True)
    y, r = m(x)
    (3 * y.sum() + 5 * r.sum()).backward()
    return dict(same=y is r, shares=y.data_ptr() == r.data_ptr(), xgrad=x.grad.tolist()[:2])
case("dup main/extra output", dup_output)

# 6. in-place on r after dup
def dup_inplace():
    m = te_ops.Sequential(te_ops.ConstantScale(2.0), te_ops.MakeExtraOutput())
    x = torch.rand(4, requires_grad=True)
    y, r = m(x)
    y0 = y.detach().clone()
    try:
        r.mul_(3.0)
        res = "ok"
    except RuntimeError as e:
        res = str(e)[:90]
    return dict(inplace=res, y_changed=not torch.equal(y.detach(), y0))
case("in-place on extra output that aliases y", dup_inplace)

# 7. frozen param public, registered
def frozen_param_public():
    p = torch.nn.Parameter(torch.rand(4), requires_grad=False)
    m = te_ops.Sequential(Holder(p), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, b = m(x)
    r = dict(p_rg=p.requires_grad, p_grad_fn=p.grad_fn, b_base_is_p=b._base is p)
    (y.sum()+b.sum()).backward()
    r["p.grad"] = p.grad
    return r
case("frozen param public", frozen_param_public)

# 8. trainable param public
def train_param_public():
    p = torch.nn.Parameter(torch.rand(4))
    m = te_ops.Sequential(Holder(p), te_ops.ConstantScale(2.0))
    x = torch.rand(4, requires_grad=True)
    y, b = m(x)
    (y.sum()+3*b.sum()).backward()
    return dict(pgrad=p.grad.tolist()[:2])
case("trainable param public", train_param_public)

# 9. no input requires grad, grad enabled: buffer public
def nograd_inputs():
    buf = torch.rand(4)
    m = te_ops.Sequential(Holder(buf), te_ops.ConstantScale(2.0))
    x = torch.rand(4)
    y, b = m(x)
    return dict(b_is_buf=b is buf, rg=b.requires_grad)
case("no input requires grad", nograd_inputs)

# 10. standalone call: Holder(buf)(x)
def standalone():
    buf = torch.rand(4)
    h = Holder(buf)
    x = torch.rand(4, requires_grad=True)
    y, b = h(x)
    return dict(buf_grad_fn=buf.grad_fn, b_is_buf=b is buf)
case("standalone buffer public", standalone)
