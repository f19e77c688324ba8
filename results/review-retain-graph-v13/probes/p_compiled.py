# compiled autograd: (a) a normal loop of two iterations, (b) retain_graph with a graph break in op_backward
from common import *
import torch._dynamo.compiled_autograd as ca
size=4
def run(brk, retain):
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = MulW(size, brk=brk)
    seq = te_ops.Sequential(te_ops.ConstantScale(0.5), m)
    out=[]
    for it in range(2):
        x = torch.rand(3, size, requires_grad=True)
        loss = seq(x).sum()
        with ca._enable(torch.compile(backend="eager")):
            loss.backward(retain_graph=retain)
        ref = 0.5*m.weight.detach().expand_as(x)
        ok = torch.allclose(x.grad, ref)
        res = f"iter{it} grad_ok={ok}"
        if retain:
            x.grad=None
            try:
                loss.backward()
                res += f" replay(eager) grad_ok={torch.allclose(x.grad, ref)}"
            except Exception as e:
                res += f" replay raised {type(e).__name__}: {str(e)[:150]}"
        out.append(res)
    print(f"brk={brk} retain={retain}:", "; ".join(out))
for brk in (False, True):
    for retain in (False, True):
        try:
            run(brk, retain)
        except Exception as e:
            print(f"brk={brk} retain={retain}: raised {type(e).__name__}: {str(e)[:300]}")
