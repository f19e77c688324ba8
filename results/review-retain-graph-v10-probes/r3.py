from prelude import *
from torch.utils.checkpoint import checkpoint
size=4
def ref_grads(x0, ws):
    x = x0.detach().clone().requires_grad_(True)
    wr = [w.detach().clone().requires_grad_(True) for w in ws]
    y = x*2
    for w in wr: y = y*w
    y.sum().backward()
    return x.grad, [w.grad for w in wr]

for reentrant in (False, True):
    def f():
        a, b = MulWeight(size), MulWeight(size)
        m = te_ops.Sequential(te_ops.ConstantScale(2.0), a, b)
        x = torch.rand(3, size, requires_grad=True)
        y = checkpoint(m, x, use_reentrant=reentrant).sum()
        gx, gw = ref_grads(x, [a.weight, b.weight])
        y.backward(retain_graph=True)
        ok1 = torch.allclose(x.grad, gx) and torch.allclose(a.weight.grad, gw[0])
        y.backward()
        ok2 = torch.allclose(x.grad, 2*gx) and torch.allclose(a.weight.grad, 2*gw[0]) and torch.allclose(b.weight.grad, 2*gw[1])
        print(f"  pass1 ok {ok1} pass2 ok {ok2} freed a {a.freed} b {b.freed}")
    run(f"checkpoint use_reentrant={reentrant}, retain_graph then backward", f)

def hooks_identity():
    a, b = MulWeight(size), MulWeight(size)
    m = te_ops.Sequential(te_ops.ConstantScale(2.0), a, b)
    x = torch.rand(3, size, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = m(x).sum()
    gx, gw = ref_grads(x, [a.weight, b.weight])
    y.backward(retain_graph=True); y.backward()
    print("  ok", torch.allclose(x.grad, 2*gx), torch.allclose(b.weight.grad, 2*gw[1]), "freed", a.freed, b.freed)
run("saved_tensors_hooks (pack=clone, unpack=identity)", hooks_identity)

def other_marks_then_unmarks_during_pass():
    # someone else's mark that is removed during the kept pass (before the op frees)
    class Unmarker(MulWeight):
        def op_backward(self, ctx, g):
            (t,) = ctx.saved_tensors
            return super().op_backward(ctx, g)
    a, b = MulWeight(size), MulWeight(size)
    m = te_ops.Sequential(te_ops.ConstantScale(2.0), a, b)
    x = torch.rand(3, size, requires_grad=True)
    y = m(x)
    inner = b.saved_refs[-1]()
    inner._do_not_clear = True  # someone else (e.g. an offload helper) marks first
    h = y.register_hook(lambda g: (delattr(inner, "_do_not_clear"), g)[1])  # and unmarks before the node runs
    y = y.sum()
    gx, gw = ref_grads(x, [a.weight, b.weight])
    y.backward(retain_graph=True)
    print("  pass1 freed b:", b.freed, "inner numel", inner.numel())
    try:
        y.backward()
        print("  pass2 ok:", torch.allclose(a.weight.grad, 2*gw[0]))
    except Exception as e:
        print(f"  pass2 raised {type(e).__name__}: {str(e)[:200]}")
run("other's mark removed before the kept pass reaches the node", other_marks_then_unmarks_during_pass)
