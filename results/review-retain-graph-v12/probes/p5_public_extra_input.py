"""Public extra input: AddExtraInput returns the same tensor as dx and as the extra input's grad.
Two (and three) passes through a retained graph must give k * (single-pass grads)."""
import torch, _common as c
for in_place in (False, True):
    for passes in ((True, False), (True, True, False), ("grad", True, False)):
        add = c.te_ops.AddExtraInput(in_place=in_place)
        seq = c.te_ops.Sequential(c.te_ops.Identity(), add)
        x = torch.rand(8, 16, requires_grad=True); e = torch.rand(8, 16, requires_grad=True)
        y = seq(x, e); dy = torch.rand_like(y); dy0 = dy.clone()
        n = 0
        for mode in passes:
            if mode == "grad":
                gx, ge = torch.autograd.grad(y, [x, e], dy, retain_graph=True)
                assert torch.equal(gx, dy0) and torch.equal(ge, dy0)
            else:
                n += 1; y.backward(dy, retain_graph=mode)
        ok = torch.allclose(x.grad, n * dy0) and torch.allclose(e.grad, n * dy0)
        print(f"in_place={in_place} passes={passes}: grads ok={ok} aliased={x.grad.data_ptr()==e.grad.data_ptr()} dy intact={torch.equal(dy, dy0)}")
