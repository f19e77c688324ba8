import torch, sys
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops
from transformer_engine.pytorch.utils import clear_tensor_data
import transformer_engine.pytorch.utils as teu
teu._empty_tensor = torch.Tensor  # as the tests' CPU fixture

class MulWeight(te_ops.BasicOperation):
    _supports_backward_replay = True
    def __init__(self, size, dtype=torch.float64):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size, dtype=dtype))
    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_)
        return input_ * self.weight
    def op_backward(self, ctx, grad_output):
        (input_,) = ctx.saved_tensors
        gw = (grad_output * input_).reshape(-1, input_.shape[-1]).sum(dim=0)
        clear_tensor_data(input_)
        return grad_output * self.weight, (gw,)
