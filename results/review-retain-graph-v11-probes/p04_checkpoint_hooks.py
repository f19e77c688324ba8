"""Replays under activation checkpointing, saved-tensor hooks, tensor hooks."""
import torch
import torch.utils.checkpoint as cp
from _common import MulWeight, te_ops, run, tree

print("tree:", tree())
torch.manual_seed(0)


def model_and_ref():
    mul = MulWeight(4)
    seq = te_ops.Sequential(te_ops.ConstantScale(0.5), te_ops.Bias(4, device="cpu"), mul)
    def ref(x):
        return (0.5 * x + seq[1].bias) * mul.weight
    return seq, mul, ref


def two_passes(fwd, mode="backward"):
    seq, mul, ref = model_and_ref()
    x = torch.rand(3, 4, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    params = [x, seq[1].bias, mul.weight]
    y = fwd(seq, x)
    dy = torch.rand_like(y)
    exp = torch.autograd.grad(ref(x_ref), [x_ref, seq[1].bias, mul.weight], dy)
    if mode == "grad":
        g1 = torch.autograd.grad(y, params, dy, retain_graph=True)
        y.backward(dy)
        g2 = [p.grad for p in params]
    else:
        y.backward(dy, retain_graph=True)
        g1 = [p.grad.clone() for p in params]
        y.backward(dy)
        g2 = [p.grad - g for p, g in zip(params, g1)]
    ok1 = all(torch.allclose(a, b) for a, b in zip(g1, exp))
    ok2 = all(torch.allclose(a, b) for a, b in zip(g2, exp))
    return f"pass1 ok {ok1}, pass2 ok {ok2}, mul freed {mul.freed}"


run("plain", lambda: two_passes(lambda s, x: s(x)))
run("plain, autograd.grad then backward", lambda: two_passes(lambda s, x: s(x), "grad"))
run("checkpoint use_reentrant=False", lambda: two_passes(lambda s, x: cp.checkpoint(s, x, use_reentrant=False)))
run("checkpoint use_reentrant=True", lambda: two_passes(lambda s, x: cp.checkpoint(s, x, use_reentrant=True)))


def with_hooks(s, x):
    # pack to a copy (as CPU offload does), unpack returns a new tensor each time
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        return s(x)
run("saved_tensors_hooks(clone, identity)", lambda: two_passes(with_hooks))


def with_hooks_copy(s, x):
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t.clone()):
        return s(x)
run("saved_tensors_hooks(clone, clone)", lambda: two_passes(with_hooks_copy))


def tensor_hooks():
    seq, mul, ref = model_and_ref()
    x = torch.rand(3, 4, requires_grad=True)
    calls = []
    y = seq(x)
    y.register_hook(lambda g: calls.append("y"))
    mul.weight.register_post_accumulate_grad_hook(lambda p: calls.append("w"))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    return f"hook calls {calls}"
run("tensor hooks + post-accumulate hooks", tensor_hooks)


def hook_modifies_grad():
    """A hook on the output that returns a new grad: replay sees the hook's grad each time"""
    seq, mul, ref = model_and_ref()
    x = torch.rand(3, 4, requires_grad=True)
    y = seq(x)
    y.register_hook(lambda g: 2 * g)
    y.sum().backward(retain_graph=True)
    g1 = x.grad.clone()
    y.sum().backward()
    return f"pass2 == pass1 {torch.allclose(x.grad - g1, g1)}"
run("output hook doubling the grad", hook_modifies_grad)


def two_nodes_share_input():
    """Two Sequentials on one input; the second's output feeds a third"""
    s1, m1, _ = model_and_ref()
    s2, m2, _ = model_and_ref()
    x = torch.rand(3, 4, requires_grad=True)
    loss = (s2(s1(x)) + s1(x)).sum()
    loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    loss.backward()
    return f"pass2 == pass1 {torch.allclose(x.grad - g1, g1)}; m1 freed {m1.freed} m2 freed {m2.freed}"
run("chained/shared Sequentials", two_nodes_share_input)


def same_sequential_twice_in_graph():
    s, m, _ = model_and_ref()
    x = torch.rand(3, 4, requires_grad=True)
    loss = s(s(x)).sum()
    loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    loss.backward()
    return f"pass2 == pass1 {torch.allclose(x.grad - g1, g1)}; freed {m.freed}"
run("one Sequential applied twice", same_sequential_twice_in_graph)
