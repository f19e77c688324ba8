import sys; sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import *
# A fused op over (ConstantScale, Bias) whose fuser_backward returns too few param-grad entries
class F(te_ops.FusedOperation):
    def __init__(self, a, b, mode): super().__init__((a, b)); self.mode = mode
    def fuser_forward(self, ctxs, x, **unused):
        ctxs[1].grad_input_quantizer = None
        return 2 * x + self.basic_ops[1].bias, [(), ()]
    def fuser_backward(self, ctxs, dy, **unused):
        db = dy.sum(0)
        if self.mode == "short":
            return 2 * dy, [()], [(), ()]
        if self.mode == "gen":
            return 2 * dy, (e for e in [(), (db,)]), [(), ()]
        return 2 * dy, [(), (db,)], [(), ()]
for mode in ("short", "gen", "ok"):
    def f():
        a, b = te_ops.ConstantScale(2.0), te_ops.Bias(4, device="cpu")
        fused = F(a, b, mode)
        def fuse(ops, **unused):
            return [fused] if len(ops) == 2 and ops[0] is a and ops[1] is b else ops
        te_ops.register_backward_fusion(fuse, prepend=True)
        try:
            m = te_ops.Sequential(a, b)
            x = torch.rand(3, 4, requires_grad=True)
            m(x).sum().backward()
            return dict(bias_grad=None if b.bias.grad is None else b.bias.grad.tolist()[:2])
        finally:
            OperationFuser.backward_fusion_functions.remove(fuse)
    case(f"fused backward {mode}", f)
