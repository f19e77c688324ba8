import sys, torch
import transformer_engine.pytorch.ops as te_ops
import transformer_engine.pytorch.utils as teu
from transformer_engine.pytorch.utils import clear_tensor_data
if not torch.cuda.is_available():
    teu._empty_tensor = torch.Tensor

class MulW(te_ops.BasicOperation):
    _supports_backward_replay = True
    def __init__(self, size, brk=False):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size))
        self.brk = brk
    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_ * 1.0)  # an intermediate, not the fuser input
        return input_ * self.weight
    def op_backward(self, ctx, grad_output):
        (x,) = ctx.saved_tensors
        if self.brk:
            torch._dynamo.graph_break()
        gw = (grad_output * x).sum(0)
        clear_tensor_data(x)
        return grad_output * self.weight, (gw,)
