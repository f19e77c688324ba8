from common import *
import torch._dynamo.compiled_autograd as ca
torch._dynamo.config.suppress_errors = True
size=4
torch.manual_seed(0)
m = MulW(size, brk=True)
seq = te_ops.Sequential(te_ops.ConstantScale(0.5), m)
x = torch.rand(3, size, requires_grad=True)
loss = seq(x).sum()
ref = 0.5*m.weight.detach().expand_as(x)
refw = (0.5*x.detach()).sum(0)
for i, keep in enumerate((True, True, False)):
    x.grad=None; m.weight.grad=None
    try:
        with ca._enable(torch.compile(backend="eager")):
            loss.backward(retain_graph=keep)
        print(f"pass{i} compiled: x ok={torch.allclose(x.grad, ref)} w ok={torch.allclose(m.weight.grad, refw)}")
    except Exception as e:
        print(f"pass{i} compiled raised {type(e).__name__}: {str(e).splitlines()[0][:150]}")
