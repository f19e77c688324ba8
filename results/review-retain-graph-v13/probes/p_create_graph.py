from common import *
size=4
def mk():
    torch.manual_seed(0)
    m = MulW(size); seq = te_ops.Sequential(te_ops.ConstantScale(0.5), m)
    x = torch.rand(3, size, requires_grad=True)
    return m, x, seq(x).sum()
# 1: gradient penalty: g = grad(loss, x, create_graph) ; (loss + g^2).backward()
m, x, loss = mk()
g, = torch.autograd.grad(loss, [x], create_graph=True)
print("g.requires_grad", g.requires_grad)
try:
    (loss + g.square().sum()).backward(); print("penalty: no error (second-order term silently dropped)")
except Exception as e: print("penalty raised:", type(e).__name__, str(e)[:120])
# 2: double backward with grad_output requiring grad -> DelayedError still?
m, x, loss = mk()
y = te_ops.Sequential(te_ops.ConstantScale(0.5))(x)
dy = torch.ones_like(y, requires_grad=True)
g, = torch.autograd.grad(y, [x], dy, create_graph=True)
print("with dy.requires_grad: g.grad_fn", type(g.grad_fn).__name__)
try:
    g.sum().backward(); print("double backward no error")
except Exception as e: print("double backward raised:", str(e)[:90])
# 3: normal no-grad: is backward's grad mode False in a normal pass with enable_grad around the call?
seen=[]
class Spy(te_ops.BasicOperation):
    _supports_backward_replay=True
    def op_forward(self, ctx, x, **k): return x*1
    def op_backward(self, ctx, dy):
        seen.append(torch.is_grad_enabled()); return dy*1, ()
x = torch.rand(3, requires_grad=True)
with torch.enable_grad():
    te_ops.Sequential(Spy())(x).sum().backward()
print("grad enabled inside op_backward in a normal pass:", seen)
