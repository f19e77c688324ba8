"""The errors of a second pass, and whether they say the right thing."""
import torch
from _common import MulWeight, te_ops, run, tree

print("tree:", tree())
torch.manual_seed(0)


class Failing(MulWeight):
    fails = True
    def op_backward(self, ctx, dy):
        if self.fails:
            raise RuntimeError("op failed")
        return super().op_backward(ctx, dy)


def normal_pass_raises_then_retry():
    f = Failing(4)
    loss = te_ops.Sequential(te_ops.ConstantScale(0.5), f)(torch.rand(2, 4, requires_grad=True)).sum()
    try:
        loss.backward()  # retain_graph=False
    except RuntimeError as e:
        print("   first (normal) pass:", e)
    f.fails = False
    loss.backward()
run("normal pass raised mid-pass, retry", normal_pass_raises_then_retry)


def kept_pass_raises_then_retry():
    f = Failing(4)
    loss = te_ops.Sequential(te_ops.ConstantScale(0.5), f)(torch.rand(2, 4, requires_grad=True)).sum()
    try:
        loss.backward(retain_graph=True)
    except RuntimeError as e:
        print("   first (kept) pass:", e)
    f.fails = False
    loss.backward()
    return f"freed: {f.freed}"
run("kept pass raised mid-pass, retry", kept_pass_raises_then_retry)


def compiled_then_eager():
    mul = MulWeight(4)
    x = torch.rand(2, 4, requires_grad=True)
    loss = te_ops.Sequential(te_ops.ConstantScale(0.5), mul)(x).sum()
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        loss.backward(retain_graph=True)
    print("   compiled pass freed:", mul.freed)
    loss.backward()
run("compiled autograd retain_graph=True, then eager", compiled_then_eager)


def compiled_twice():
    mul = MulWeight(4)
    x = torch.rand(2, 4, requires_grad=True)
    loss = te_ops.Sequential(te_ops.ConstantScale(0.5), mul)(x).sum()
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        loss.backward(retain_graph=True)
        g1 = x.grad.clone()
        loss.backward()
    return f"pass 2 == pass 1: {torch.allclose(x.grad, 2 * g1)}"
run("compiled autograd twice", compiled_twice)


def create_graph_then_penalty():
    """Gradient penalty: (loss + |dloss/dx|^2).backward()"""
    mul = MulWeight(4)
    x = torch.rand(2, 4, requires_grad=True)
    loss = te_ops.Sequential(te_ops.ConstantScale(0.5), mul)(x).sum()
    (g,) = torch.autograd.grad(loss, x, create_graph=True)
    print("   g.requires_grad:", g.requires_grad)
    (loss + (g ** 2).sum()).backward()
run("gradient penalty (create_graph, then loss+gp)", create_graph_then_penalty)


def create_graph_grad_of_grad():
    """grad-of-grad through a nonlinear loss: once_differentiable's DelayedError"""
    mul = MulWeight(4)
    x = torch.rand(2, 4, requires_grad=True)
    y = te_ops.Sequential(te_ops.ConstantScale(0.5), mul)(x)
    (g,) = torch.autograd.grad((y ** 2).sum(), x, create_graph=True)
    print("   g.requires_grad:", g.requires_grad)
    g.sum().backward()
run("grad of grad (nonlinear loss)", create_graph_grad_of_grad)


def create_graph_silent():
    """grads of te.ops mixed with torch ops: the te term of the 2nd order is silently 0"""
    mul = MulWeight(4)
    x = torch.rand(2, 4, requires_grad=True)
    seq = te_ops.Sequential(te_ops.ConstantScale(0.5), mul)
    loss = seq(x).sum() + (x ** 3).sum()
    (g,) = torch.autograd.grad(loss, x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    return f"second order = 6x exactly (te part contributes 0, as it should since linear): {torch.allclose(gg, 6 * x)}"
run("create_graph mixed", create_graph_silent)


def unsupported_op():
    class Plain(te_ops.BasicOperation):
        def op_forward(self, ctx, x, **unused):
            return 2 * x
        def op_backward(self, ctx, dy):
            return 2 * dy, ()
    x = torch.rand(2, 4, requires_grad=True)
    loss = te_ops.Sequential(Plain(), MulWeight(4))(x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
run("op without opt-in", unsupported_op)


def retain_graph_false_explicit_create_graph():
    mul = MulWeight(4)
    x = torch.rand(2, 4, requires_grad=True)
    loss = te_ops.Sequential(te_ops.ConstantScale(0.5), mul)(x).sum()
    torch.autograd.grad(loss, x, create_graph=True, retain_graph=False)
    loss.backward()
run("create_graph=True, retain_graph=False, then backward", retain_graph_false_explicit_create_graph)
