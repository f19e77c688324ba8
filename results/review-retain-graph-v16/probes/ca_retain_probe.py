"""Compiled autograd: retain_graph=True then a second pass also under compiled autograd
(or eager). Does the second pass raise, or give grads (and which)? Also: reference grads."""
import sys
import torch
import transformer_engine.pytorch as te
import transformer_engine.pytorch.utils as teu
import transformer_engine.pytorch.ops as te_ops
from transformer_engine.pytorch.utils import clear_tensor_data
teu._empty_tensor = torch.Tensor


class Mul(te_ops.BasicOperation):
    _supports_backward_replay = True
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(n))
    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_)
        return input_ * self.weight
    def op_backward(self, ctx, grad_output):
        (x,) = ctx.saved_tensors
        gw = (grad_output * x).sum(0)
        clear_tensor_data(x)
        return grad_output * self.weight, (gw,)


def one(mode2, graph_break=False):
    torch.manual_seed(0)
    torch._dynamo.reset()
    mul = Mul(16)
    x = torch.rand(8, 16, requires_grad=True)
    loss = te_ops.Sequential(te_ops.ConstantScale(0.5), mul)(x).sum()
    ref_w = 0.5 * x.detach().sum(0)
    ctx = torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager"))
    with ctx:
        loss.backward(retain_graph=True)
    g1 = mul.weight.grad.clone()
    try:
        if mode2 == "ca":
            with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
                loss.backward()
        else:
            loss.backward()
        print(f"second pass ({mode2}): no error; w.grad/ref = {(mul.weight.grad / ref_w).mean().item():.4f} (2.0 is right)")
    except Exception as e:
        print(f"second pass ({mode2}): {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    print("   first pass w.grad ok:", torch.allclose(g1, ref_w))

for m in ("ca", "eager"):
    one(m)
