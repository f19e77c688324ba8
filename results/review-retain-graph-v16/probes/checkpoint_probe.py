"""Activation checkpointing (torch.utils.checkpoint reentrant / non-reentrant) around a
te.ops.Sequential: normal training (one pass) and retain_graph=True then a second pass.
Compares grads with the uncheckpointed model."""
import torch
import torch.utils.checkpoint as cp
import transformer_engine.pytorch as te
import transformer_engine.pytorch.utils as teu
import transformer_engine.pytorch.ops as te_ops
from transformer_engine.pytorch.utils import clear_tensor_data
teu._empty_tensor = torch.Tensor


class Mul(te_ops.BasicOperation):
    _supports_backward_replay = True
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(n) + 0.5)
    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_ * 1)  # an intermediate, so it is freed
        return input_ * self.weight
    def op_backward(self, ctx, grad_output):
        (x,) = ctx.saved_tensors
        gw = (grad_output * x).sum(0)
        clear_tensor_data(x)
        return grad_output * self.weight, (gw,)


def run(kind, passes):
    torch.manual_seed(0)
    m = te_ops.Sequential(te_ops.Bias(16, device="cpu"), Mul(16), te_ops.ConstantScale(0.5))
    x = torch.rand(8, 16, requires_grad=True)
    if kind == "none":
        y = m(torch.sin(x))
    else:
        y = cp.checkpoint(m, torch.sin(x), use_reentrant=(kind == "reentrant"))
    loss = (y * y).sum()
    try:
        for k, keep in enumerate(passes):
            loss.backward(retain_graph=keep)
        return [x.grad.clone(), m[1].weight.grad.clone(), m[0].bias.grad.clone()]
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"


for passes in ((False,), (True, False), (True, True, False)):
    ref = run("none", passes)
    for kind in ("nonreentrant", "reentrant"):
        got = run(kind, passes)
        if isinstance(got, str) or isinstance(ref, str):
            print(passes, kind, "ref:", ref if isinstance(ref, str) else "grads", "| got:", got if isinstance(got, str) else "grads")
        else:
            print(passes, kind, "match" if all(torch.allclose(a, b) for a, b in zip(got, ref)) else "MISMATCH")
