import sys, gc, weakref, torch
sys.path.insert(0, "probes")
from common import *
from torch.utils.checkpoint import checkpoint
S = 8
def mk():
    torch.manual_seed(0)
    r = te_ops.MakeExtraOutput(in_place=True); r.set_extra_output_channel(0, "r", output_to_caller=False)
    a = te_ops.AddExtraInput(); a.set_extra_input_channel(0, "r")
    return te_ops.Sequential(r, MulWeight(S), te_ops.Bias(S, device="cpu", dtype=torch.float64), a, te_ops.MakeExtraOutput(in_place=True))
def report(name, f):
    try: print(f"{name}: {f()}")
    except Exception as e: print(f"{name}: raises {type(e).__name__}: {str(e)[:150]}")

def grads_of(fn, leaves, g):
    out = fn(); outs = list(out) if isinstance(out, tuple) else [out]
    return torch.autograd.grad(outs, leaves, [gi.clone() for gi in g[:len(outs)]])

# (a) one module called twice, outputs summed: autograd hands both nodes one grad tensor
def shared_grad():
    m = mk(); x = torch.randn(4, S, dtype=torch.float64, requires_grad=True); x2 = torch.randn_like(x).requires_grad_()
    f = lambda: m(x)[0] + m(x2)[0]
    leaves = [x, x2, *m.parameters()]
    res = []
    y = f()
    for k in range(3):
        g = torch.randn(4, S, dtype=torch.float64)
        ref = torch.autograd.grad(f(), leaves, g.clone())
        got = torch.autograd.grad(y, leaves, g.clone(), retain_graph=k < 2)
        res.append(all(torch.allclose(a, b) for a, b in zip(got, ref)))
    return res
report("(a) shared grad tensor, 3 passes match fresh forward", shared_grad)

# (b) checkpointing
def ckpt(reentrant):
    m = mk(); x = torch.randn(4, S, dtype=torch.float64, requires_grad=True)
    leaves = [x, *m.parameters()]
    f = lambda: checkpoint(lambda t: m(t)[0] * 2, x, use_reentrant=reentrant)
    y = f(); res = []
    for k in range(3):
        g = torch.randn(4, S, dtype=torch.float64)
        ref = torch.autograd.grad(m(x)[0] * 2, leaves, g.clone())
        for l in leaves: l.grad = None
        torch.autograd.backward(y, g.clone(), retain_graph=k < 2)
        res.append(all(torch.allclose(l.grad, r) for l, r in zip(leaves, ref)))
    return res
report("(b1) checkpoint non-reentrant, 3 passes", lambda: ckpt(False))
report("(b2) checkpoint reentrant, 3 passes", lambda: ckpt(True))

# (c) memory: kept pass, then drop graph without a final pass
def memory(final):
    m = mk(); x = torch.randn(64, S, dtype=torch.float64, requires_grad=True)
    h = x * 1.0  # saved by MulWeight (non-leaf, not a fuser output)
    out = m(h)[0]; fn = out.grad_fn
    refs = [weakref.ref(t) for t in fn.saved_tensors]
    out.sum().backward(retain_graph=True)
    if final: out.sum().backward()
    alive_nodes = weakref.ref(fn); del fn
    del out, h; gc.collect()
    return f"saved tensors alive after del: {sum(r() is not None for r in refs)}/{len(refs)}, node alive: {alive_nodes() is not None}"
report("(c1) kept, then graph dropped", lambda: memory(False))
report("(c2) kept, final pass, dropped", lambda: memory(True))

# (d) AddExtraInput public extra input: do x.grad and e.grad alias after passes?
def alias(passes):
    x = torch.randn(4, S, dtype=torch.float64, requires_grad=True); e = torch.randn_like(x).requires_grad_()
    y = te_ops.Sequential(te_ops.AddExtraInput())(x * 1.0, e)  # torch op feeds a fresh grad? no: y is last
    for k, keep in enumerate(passes):
        (y * 1.0).backward(torch.ones_like(y), retain_graph=keep)
    return f"x.grad[0,0]={x.grad[0,0].item()}, e.grad[0,0]={e.grad[0,0].item()}, alias={x.grad.data_ptr()==e.grad.data_ptr()}"
report("(d1) single pass, x via torch op", lambda: alias([False]))
report("(d2) two passes", lambda: alias([True, False]))
def alias_main_two_iters():
    x = torch.randn(4, S, dtype=torch.float64, requires_grad=True); e = torch.randn_like(x).requires_grad_()
    m = te_ops.Sequential(te_ops.AddExtraInput())
    for it in range(2):
        y = m(x, e); (y * 1.0).backward(torch.ones_like(y))
    return f"after 2 iterations x.grad[0,0]={x.grad[0,0].item()} (expect 2), e.grad[0,0]={e.grad[0,0].item()} (expect 2)"
report("(d3) two iterations, no retain (description's 'found on main')", alias_main_two_iters)

# (e) ConstantScale.scale changed between passes: torch keeps the forward's constant
def scale_change():
    op = te_ops.ConstantScale(2.0); x = torch.randn(4, S, dtype=torch.float64, requires_grad=True)
    y = te_ops.Sequential(op)(x)
    g1, = torch.autograd.grad(y.sum(), x, retain_graph=True)
    op.scale = 5.0
    g2, = torch.autograd.grad(y.sum(), x)
    return f"pass1 dx={g1[0,0].item()} pass2 dx={g2[0,0].item()} (forward used 2.0)"
report("(e) scale attr changed between passes", scale_change)

# (g) create_graph pass that does not go through te.ops twice, then backward
def create_graph_then_backward():
    op = MulWeight(S); x = torch.randn(4, S, dtype=torch.float64, requires_grad=True)
    loss = te_ops.Sequential(op)(x).pow(2).sum()
    gx, = torch.autograd.grad(loss, x, create_graph=True)
    loss.backward()
    return "ok"
report("(g) autograd.grad(create_graph=True) then loss.backward()", create_graph_then_backward)

# (h) param swapped (not in place) between passes: LayerNorm-style live read
class LiveRead(MulWeight):
    _supports_backward_replay = True
    def op_backward(self, ctx, grad_output):
        (input_,) = ctx.saved_tensors
        gw = (grad_output * input_).sum(dim=0); clear_tensor_data(input_)
        return grad_output * self.weight, (gw,)   # reads the weight live, as LayerNorm does
def param_swap():
    op = LiveRead(S); x = torch.randn(4, S, dtype=torch.float64, requires_grad=True)
    y = te_ops.Sequential(op)(x)
    g1, = torch.autograd.grad(y.sum(), x, retain_graph=True)
    with torch.no_grad(): op.weight.data.mul_(3)   # .data, as FusedAdam: documented
    g2, = torch.autograd.grad(y.sum(), x, retain_graph=True)
    op.weight = torch.nn.Parameter(op.weight.detach() * 3)  # rebinding: not documented
    g3, = torch.autograd.grad(y.sum(), x)
    return f"dx0: {g1[0,0].item():.3f}, after .data*3: {g2[0,0].item():.3f}, after rebinding *3: {g3[0,0].item():.3f}"
report("(h) live-read param changed via .data / rebinding", param_swap)
