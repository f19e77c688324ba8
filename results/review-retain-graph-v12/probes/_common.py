"""Shared CPU helpers for the probes (run with PYTHONPATH=<tree>:probes dir)."""
import types, torch
torch.cuda.current_device = lambda: 0
torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(major=0, minor=0, name="cpu")
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops
import transformer_engine.pytorch.utils as te_utils
from transformer_engine.pytorch.utils import clear_tensor_data
te_utils._empty_tensor = torch.Tensor  # clear_tensor_data empties into a CUDA tensor otherwise


class MulWeight(te_ops.BasicOperation):
    """x * w, frees its saved input as TE ops do; records whether it freed it"""
    _supports_backward_replay = True

    def __init__(self, size):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size))
        self.freed = []

    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_)
        return input_ * self.weight

    def op_backward(self, ctx, grad_output):
        (x,) = ctx.saved_tensors
        gw = (grad_output * x).sum(dim=0)
        clear_tensor_data(x)
        self.freed.append(x.numel() == 0)
        return grad_output * self.weight, (gw,)
