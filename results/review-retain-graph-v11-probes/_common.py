"""Shared setup for the probes: import TE on a CPU-only machine, a test op.

Run a probe with PYTHONPATH=<tree>:/work/review-rg11/probes python <probe>.py
"""
import sys
import torch
import transformer_engine.pytorch as te  # noqa: F401
import transformer_engine.pytorch.ops as te_ops
import transformer_engine.pytorch.utils as te_utils
from transformer_engine.pytorch.utils import clear_tensor_data

# clear_tensor_data empties into a CUDA tensor: use a CPU one (as the PR's fixture does)
te_utils._empty_tensor = torch.Tensor

IS_PR = hasattr(te_ops.fuser, "_backward_keeps_graph")


class MulWeight(te_ops.BasicOperation):
    """x * w, frees its saved input as TE's ops do (copy of the PR's _MulWeight)."""

    _supports_backward_replay = True

    def __init__(self, size, dtype=torch.float32):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size, dtype=dtype))
        self.freed = []

    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_)
        return input_ * self.weight

    def op_backward(self, ctx, grad_output):
        (input_,) = ctx.saved_tensors
        grad_weight = (grad_output * input_).sum(dim=0)
        clear_tensor_data(input_)
        self.freed.append(input_.numel() == 0)
        return grad_output * self.weight, (grad_weight,)


def run(name, fn):
    """Run one case, print its outcome in one line"""
    try:
        out = fn()
        print(f"[{name}] OK {out if out is not None else ''}")
    except Exception as e:  # noqa: BLE001
        msg = str(e).splitlines()[0] if str(e) else ""
        print(f"[{name}] {type(e).__name__}: {msg[:300]}")


def tree():
    return "PR" if IS_PR else "BASE"
