"""Compiled autograd with retain_graph=True, then a second pass (eager or compiled).
The PR says compiled autograd "keeps nothing ... a second fails as on main" and that
where a replay cannot be trusted the next pass "raises an error that says why"."""
import torch
from _common import MulWeight, te_ops, run, tree, clear_tensor_data

print("tree:", tree())
torch.manual_seed(0)


class SumScale(te_ops.BasicOperation):
    """y = x * c with c = sum(x) taken as a constant: backward reads a reduction of its saved input"""
    _supports_backward_replay = True
    def op_forward(self, ctx, x, **unused):
        ctx.save_for_backward(x)
        return x * float(x.sum())
    def op_backward(self, ctx, dy):
        (x,) = ctx.saved_tensors
        scale = x.sum()  # reads the saved tensor (a reduction)
        clear_tensor_data(x)
        return dy * scale, ()


def state_after_compiled_pass():
    mul = MulWeight(4)
    x = torch.rand(2, 4, requires_grad=True)
    y = te_ops.Sequential(te_ops.ConstantScale(0.5), mul)(x)
    loss = y.sum()
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        loss.backward(retain_graph=True)
    fctx = y.grad_fn
    saved = fctx.saved_tensors
    return (f"tensor_objects after the compiled pass: {getattr(fctx, 'tensor_objects', 'missing')}; "
            f"saved tensor numels: {[t.numel() for t in saved]}")
run("state after compiled kept pass", state_after_compiled_pass)


def silent_case():
    op = SumScale()
    x = torch.rand(2, 4, requires_grad=True)
    loss = te_ops.Sequential(te_ops.ConstantScale(0.5), op)(x).sum()
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    loss.backward()
    return f"eager pass 2 ran without error; pass2 grad == pass1 grad: {torch.allclose(x.grad - g1, g1)}"
run("compiled kept pass, then eager pass (op reads a reduction)", silent_case)


def compiled_normal_pass():
    mul = MulWeight(4)
    x = torch.rand(2, 4, requires_grad=True)
    loss = te_ops.Sequential(te_ops.ConstantScale(0.5), mul)(x).sum()
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        loss.backward()
    return f"grad ok: {torch.allclose(x.grad, 0.5 * mul.weight.detach().expand_as(x))}"
run("compiled autograd, one normal pass", compiled_normal_pass)
