# Does a replay after an in-place parameter update raise (as torch.nn does)?
from common import *
size=4
torch.manual_seed(0)
m = MulW(size)
x = torch.rand(3, size, requires_grad=True)
loss = te_ops.Sequential(m)(x).sum()
loss.backward(retain_graph=True)
g1 = x.grad.clone(); x.grad=None
with torch.no_grad():
    m.weight.mul_(2)
try:
    loss.backward()
    print("te.ops replay after in-place weight update: no error; x.grad ratio", (x.grad/g1).mean().item())
except Exception as e:
    print("te.ops raised:", type(e).__name__, str(e)[:120])
# torch reference
w = torch.nn.Parameter(torch.rand(size)); x = torch.rand(3,size,requires_grad=True)
l = (x*w).sum(); l.backward(retain_graph=True)
with torch.no_grad(): w.mul_(2)
try:
    l.backward(); print("torch: no error")
except Exception as e:
    print("torch raised:", type(e).__name__, str(e)[:100])
