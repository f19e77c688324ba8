"""torch.utils.checkpoint around a te.ops.Sequential, two backward passes through a retained graph"""
import torch, _common as c
from torch.utils.checkpoint import checkpoint
for reentrant in (False, True):
    torch.manual_seed(0)
    mul = c.MulWeight(16)
    seq = c.te_ops.Sequential(c.te_ops.ConstantScale(0.5), mul)
    x = torch.rand(8, 16, requires_grad=True)
    y = checkpoint(seq, x, use_reentrant=reentrant)
    dy = torch.rand_like(y)
    try:
        y.backward(dy, retain_graph=True); g1 = (x.grad.clone(), mul.weight.grad.clone())
        y.backward(dy)
        ok = torch.allclose(x.grad, 2 * g1[0]) and torch.allclose(mul.weight.grad, 2 * g1[1])
        print(f"use_reentrant={reentrant}: two passes ok={ok} freed={mul.freed}")
    except Exception as e:
        print(f"use_reentrant={reentrant}: raised {type(e).__name__}: {str(e)[:160]}")
