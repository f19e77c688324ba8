# Who keeps the saved intermediate, and until when
import weakref, gc
from common import *
size=4
class MulW2(MulW):
    _supports_backward_replay = True
    refs = []
    def op_forward(self, ctx, input_, **unused):
        t = input_ * 1.0
        MulW2.refs.append(t)  # keep python obj to inspect numel
        ctx.save_for_backward(t)
        return input_ * self.weight
    def op_backward(self, ctx, grad_output):
        return MulW.op_backward(self, ctx, grad_output)
def state(): return [t.numel() for t in MulW2.refs]
for scenario in ("kept_then_last", "kept_then_del", "kept_refused_then_del"):
    MulW2.refs.clear()
    gc.disable()
    m = MulW2(size)
    ops = [te_ops.ConstantScale(0.5), m]
    if scenario == "kept_refused_then_del":
        class NoOpt(te_ops.ConstantScale):
            def op_backward(self, ctx, dy): return dy*0.5, ()
        ops = [NoOpt(0.5), m]
    x = torch.rand(3, size, requires_grad=True)
    loss = te_ops.Sequential(*ops)(x).sum()
    loss.backward(retain_graph=True)
    s1 = state()
    t_ref = weakref.ref(MulW2.refs[0]); 
    if scenario == "kept_then_last":
        loss.backward(); s2 = state()
    else:
        s2 = None
    MulW2.refs_numel = s1
    del loss
    alive_tensor = t_ref() is not None
    print(f"{scenario}: numel after kept pass={s1}, after last pass={s2}, saved tensor obj alive after del loss (only our list holds it)={alive_tensor}")
    # drop our own ref and check the graph no longer holds it
    wr = weakref.ref(MulW2.refs[0]); MulW2.refs.clear()
    print("   alive after dropping our ref too (no gc):", wr() is not None)
    gc.enable()
