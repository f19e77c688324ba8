import sys, gc, weakref, warnings
warnings.filterwarnings("ignore")
import torch
import te_series.cpu_shim  # noqa: lets TE import without CUDA
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops
import transformer_engine.pytorch.utils as te_utils
from transformer_engine.pytorch.utils import clear_tensor_data
te_utils._empty_tensor = torch.Tensor  # as the PR's fixture does on CPU

class MulWeight(te_ops.BasicOperation):
    """x * w, frees its saved input like TE ops"""
    _supports_backward_replay = True
    def __init__(self, size, replay=True):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size))
        self.freed = []
        self.saved_refs = []
    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_)
        self.saved_refs.append(weakref.ref(input_))
        return input_ * self.weight
    def op_backward(self, ctx, grad_output):
        (input_,) = ctx.saved_tensors
        gw = (grad_output * input_).sum(0)
        clear_tensor_data(input_)
        self.freed.append(input_.numel() == 0)
        return grad_output * self.weight, (gw,)

class NoOptIn(MulWeight):
    _supports_backward_replay = False

def run(name, fn):
    print(f"--- {name}")
    try:
        fn()
    except Exception as e:
        print(f"  raised {type(e).__name__}: {str(e)[:300]}")
