from common import *
import torch._dynamo.compiled_autograd as ca
import transformer_engine.pytorch.ops.fuser as F
size=4
orig = F._backward_keeps_graph
calls = []
def spy():
    v = orig(); calls.append((torch.compiler.is_compiling(), v)); return v
F._backward_keeps_graph = torch._dynamo.disable(spy)
torch.manual_seed(0)
m = MulW(size, brk=True)
seq = te_ops.Sequential(te_ops.ConstantScale(0.5), m)
x = torch.rand(3, size, requires_grad=True)
loss = seq(x).sum()
try:
    with ca._enable(torch.compile(backend="eager")):
        loss.backward(retain_graph=True)
    print("ok", x.grad[0])
except Exception as e:
    print("raised", type(e).__name__, str(e).splitlines()[0][:200])
print("binding calls (is_compiling, value):", calls)
