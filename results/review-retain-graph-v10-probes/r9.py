from prelude import *
from transformer_engine.pytorch.ops.fuser import OperationFuser
lin = te_ops.BasicLinear(8, 8, device="cpu")
fuser = OperationFuser([lin, te_ops.ConstantScale(0.5)])
x = torch.rand(2, 8, requires_grad=True)
fuser.maybe_fuse_ops(True, None, x, [[], []])
print([(type(op).__name__, op._supports_backward_replay) for op, _ in fuser._backward_ops])
