"""NOT RUN (needs CUDA; this machine has none). Reproducer sketches for defects found by
reading the code, for the author to run on a GPU. Each prints the expected and the seen value.

(a) BasicLinear(accumulate_into_main_grad=True) with weight.overwrite_main_grad=True:
    every pass overwrites main_grad, so two backward passes leave 1x the wgrad, not 2x.
(b) BasicLinear(accumulate_into_main_grad=True): torch.autograd.grad(loss, [x],
    retain_graph=True) (the doc's own pattern) writes the wgrad into main_grad too, so a
    following loss.backward() leaves 2x the wgrad where torch.nn would leave 1x.
(c) BackwardLinearAdd with a hidden channel: AddExtraInput returns grad_output as the channel
    grad, BackwardLinearAdd accumulates dgrad into it in place, i.e. into the caller's dy.
"""
import torch
import transformer_engine.pytorch.ops as te_ops

dev, n = "cuda", 64


def main_grad_case(overwrite):
    lin = te_ops.BasicLinear(n, n, device=dev, accumulate_into_main_grad=True)
    lin.weight.main_grad = torch.zeros_like(lin.weight)
    lin.weight.overwrite_main_grad = overwrite
    x = torch.rand(8, n, device=dev, requires_grad=True)
    loss = te_ops.Sequential(lin)(x).sum()
    one = torch.ones(8, n, device=dev).T @ x.detach()  # wgrad of one pass
    if overwrite:
        loss.backward(retain_graph=True); loss.backward()
        print("(a) expect 2x:", float((lin.weight.main_grad / one).mean()))
    else:
        torch.autograd.grad(loss, [x], retain_graph=True); loss.backward()
        print("(b) expect 1x:", float((lin.weight.main_grad / one).mean()))


def linear_add_channel():
    res = te_ops.MakeExtraOutput(in_place=True)
    res.set_extra_output_channel(0, "res", output_to_caller=False)
    add = te_ops.AddExtraInput()
    add.set_extra_input_channel(0, "res")
    model = te_ops.Sequential(res, te_ops.Linear(n, n, bias=False, device=dev), add)
    x = torch.rand(8, n, device=dev, requires_grad=True)
    y = model(x)
    dy = torch.rand_like(y)
    y.backward(dy, retain_graph=True)
    g1 = x.grad.clone()
    y.backward(dy)
    print("(c) pass 2 == pass 1:", torch.allclose(x.grad - g1, g1))


main_grad_case(True)
main_grad_case(False)
linear_add_channel()
