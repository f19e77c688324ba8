"""Memory: does a kept pass leave saved tensors alive only as long as the graph, and does the
last pass free them (clear_tensor_data) as before? Weakrefs to an op's saved intermediate."""
import gc, weakref
import torch
import transformer_engine.pytorch as te
import transformer_engine.pytorch.utils as teu
import transformer_engine.pytorch.ops as te_ops
from transformer_engine.pytorch.utils import clear_tensor_data
teu._empty_tensor = torch.Tensor

saved = []


class Mul(te_ops.BasicOperation):
    _supports_backward_replay = True
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(n))
    def op_forward(self, ctx, input_, **unused):
        t = input_ * 1
        saved.append(weakref.ref(t))
        ctx.save_for_backward(t)
        return input_ * self.weight
    def op_backward(self, ctx, grad_output):
        (x,) = ctx.saved_tensors
        gw = (grad_output * x).sum(0)
        clear_tensor_data(x)
        return grad_output * self.weight, (gw,)


def state(tag):
    t = saved[-1]()
    print(f"  {tag}: saved tensor {'collected' if t is None else ('alive, numel=%d, _do_not_clear=%s' % (t.numel(), hasattr(t, '_do_not_clear')))}")


for scenario in ("kept then del", "kept then last pass", "normal pass"):
    print(scenario)
    m = te_ops.Sequential(Mul(16), te_ops.ConstantScale(2.0))
    x = torch.rand(8, 16, requires_grad=True)
    loss = m(x).sum()
    keep = scenario != "normal pass"
    try:
        loss.backward(retain_graph=keep)
    except Exception as e:
        print("  ", type(e).__name__, e)
    state("after first pass")
    if scenario == "kept then last pass":
        loss.backward()
        state("after last pass")
    del loss
    state("after del loss (no gc)")
    gc.collect()
    state("after gc")
