"""Residual block whose hidden channel is made by MakeExtraOutput(in_place=True):
AddExtraInput passes the node's grad_output back as the channel grad, and
MakeExtraOutput(in_place=True) then does `grad += ...` into it, i.e. into the
grad the caller gave backward. The PR clones the caller's *extra-output* grads in
a kept pass, but not grad_output. A replay with the same grad tensor is wrong."""
import torch
from _common import MulWeight, te_ops, run, tree

print("tree:", tree())
torch.manual_seed(0)


def build(in_place):
    size = 4
    res = te_ops.MakeExtraOutput(in_place=in_place)
    res.set_extra_output_channel(0, "res", output_to_caller=False)
    add = te_ops.AddExtraInput()
    add.set_extra_input_channel(0, "res")
    mul = MulWeight(size)
    return te_ops.Sequential(res, mul, add), mul


for in_place in (False, True):
    def case(in_place=in_place):
        model, mul = build(in_place)
        x = torch.rand(3, 4, requires_grad=True)
        y = model(x)
        dy = torch.ones_like(y)
        dy_before = dy.clone()
        # reference: y = x*w + x -> dx = dy*(w+1)
        ref = (dy_before * (mul.weight.detach() + 1))
        y.backward(dy, retain_graph=True)
        g1 = x.grad.clone()
        mutated = not torch.equal(dy, dy_before)
        y.backward(dy)
        g2 = x.grad - g1
        return (f"in_place={in_place}: caller's dy mutated by pass 1: {mutated}; "
                f"pass1 ok: {torch.allclose(g1, ref)}; pass2 ok: {torch.allclose(g2, ref)}; "
                f"pass2 max err {float((g2 - ref).abs().max()):.3f}")
    run(f"same dy twice, in_place={in_place}", case)

# With a loss from .sum(), the incoming grad is an expanded tensor
def case_sum():
    model, mul = build(True)
    x = torch.rand(3, 4, requires_grad=True)
    model(x).sum().backward()
    return "x.grad ok" 
run("in_place=True, y.sum().backward() (single normal pass)", case_sum)

# With a fresh grad each pass (y*c).sum(): no cross-pass corruption expected
def case_fresh():
    model, mul = build(True)
    x = torch.rand(3, 4, requires_grad=True)
    y = model(x)
    c = torch.rand_like(y)
    loss = (y * c).sum()
    loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    loss.backward()
    return f"pass2 == pass1: {torch.allclose(x.grad - g1, g1)}"
run("in_place=True, (y*c).sum() twice", case_fresh)

# autograd.grad, then backward, same grad_outputs
def case_grad():
    model, mul = build(True)
    x = torch.rand(3, 4, requires_grad=True)
    y = model(x)
    dy = torch.ones_like(y)
    ref = dy * (mul.weight.detach() + 1)
    (g1,) = torch.autograd.grad(y, x, dy, retain_graph=True)
    g1_copy = g1.clone()
    (g2,) = torch.autograd.grad(y, x, dy)
    return (f"g1 ok when returned: {torch.allclose(g1_copy, ref)}; g1 aliases dy: "
            f"{g1.data_ptr() == dy.data_ptr()}; g1 still ok after pass 2: {torch.allclose(g1, ref)}; "
            f"g2 ok: {torch.allclose(g2, ref)}")
run("in_place=True, autograd.grad twice with the same grad_outputs", case_grad)


# Pre-existing (base too): one normal pass writes into the caller's dy
def case_single():
    model, mul = build(True)
    x = torch.rand(3, 4, requires_grad=True)
    y = model(x)
    dy = torch.ones_like(y)
    y.backward(dy)
    return f"single normal pass mutated the caller's dy: {not torch.equal(dy, torch.ones_like(y))}"
run("in_place=True, one normal pass", case_single)
