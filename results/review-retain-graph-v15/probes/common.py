"""Shared helpers for the probes: a CPU test op like the PR's _MulWeight."""
import torch
import transformer_engine.pytorch.utils as te_utils
import transformer_engine.pytorch.ops as te_ops
from transformer_engine.pytorch.utils import clear_tensor_data

if not torch.cuda.is_available():
    te_utils._empty_tensor = torch.Tensor  # as the PR's fixture does


class MulWeight(te_ops.BasicOperation):
    _supports_backward_replay = True  # harmless on base

    def __init__(self, size, dtype=torch.float32):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size, dtype=dtype))
        self.freed = []

    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_)
        return input_ * self.weight

    def op_backward(self, ctx, grad_output):
        (input_,) = ctx.saved_tensors
        gw = (grad_output * input_).sum(dim=0)
        clear_tensor_data(input_)
        self.freed.append(input_.numel() == 0)
        return grad_output * self.weight, (gw,)


def run(name, fn):
    try:
        out = fn()
        print(f"[{name}] OK: {out}")
    except Exception as e:  # noqa
        print(f"[{name}] {type(e).__name__}: {str(e).splitlines()[0][:300]}")
