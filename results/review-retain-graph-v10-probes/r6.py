from prelude import *
size=4
torch.manual_seed(0)
mw = MulWeight(size)
m = te_ops.Sequential(mw)
w_ref = mw.weight.detach().clone().requires_grad_(True)
x = torch.rand(3, size, requires_grad=True)
xr = x.detach().clone().requires_grad_(True)
# gradient penalty: loss = y + |dy/dx|^2
y = m(x).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print("te.ops: dy/dx requires_grad:", g.requires_grad)
(y + g.pow(2).sum()).backward()
yr = (xr * w_ref).sum()
(gr,) = torch.autograd.grad(yr, xr, create_graph=True)
(yr + gr.pow(2).sum()).backward()
print("w.grad te.ops", mw.weight.grad.tolist())
print("w.grad torch ", w_ref.grad.tolist())
