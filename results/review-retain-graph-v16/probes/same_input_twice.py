"""AddExtraInput given the same tensor as input and public extra input: seq(h, h) = 2h
(in_place=False). Grads over retained passes (PR) or one pass (base)."""
import torch
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops
multi = hasattr(te_ops.fuser, "_unshared")
for in_place in (False,):
    for via in ("leaf", "nonleaf"):
        h0 = torch.rand(4, 4, requires_grad=True)
        h = h0 if via == "leaf" else h0 * 1
        y = te_ops.Sequential(te_ops.Identity(), te_ops.AddExtraInput(in_place=in_place))(h, h)
        total = 0
        for k, keep in enumerate((True, True, False) if multi else (False,)):
            dy = torch.full_like(y, float(2**k))
            y.backward(dy, retain_graph=keep)
            total += 2 * 2**k
            print(f"{via}: pass {k}: h0.grad = {h0.grad[0,0].item()} (right: {total}); dy after = {dy[0,0].item()} (given {2**k})")
