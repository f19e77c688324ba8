# torch.utils.checkpoint around te.ops, with retained graph; and saved_tensors_hooks (save_on_cpu)
from common import *
from torch.utils.checkpoint import checkpoint
size=4
for mode in ("nonreentrant", "reentrant", "save_on_cpu"):
    torch.manual_seed(0)
    m = MulW(size)
    seq = te_ops.Sequential(te_ops.ConstantScale(0.5), m)
    x = torch.rand(3, size, requires_grad=True)
    if mode == "nonreentrant":
        loss = checkpoint(seq, x, use_reentrant=False).sum()
    elif mode == "reentrant":
        loss = checkpoint(seq, x, use_reentrant=True).sum()
    else:
        with torch.autograd.graph.save_on_cpu():
            loss = seq(x).sum()
    ref_x = 0.5*m.weight.detach().expand_as(x)
    res=[]
    for i, keep in enumerate((True, True, False)):
        try:
            x.grad = None; m.weight.grad=None
            loss.backward(retain_graph=keep)
            res.append(f"pass{i}: x ok={torch.allclose(x.grad, ref_x)} w.grad={m.weight.grad.sum().item():.4f}")
        except Exception as e:
            res.append(f"pass{i}: raised {type(e).__name__}: {str(e)[:90]}")
    print(mode, "|", " | ".join(res))
