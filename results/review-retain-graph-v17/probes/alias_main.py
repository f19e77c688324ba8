"""Description's 'found on main': AddExtraInput's one grad for input and extra input, through a
Reshape (view), where a torch op feeds the fuser a fresh grad. No retain_graph."""
import sys, torch
sys.path.insert(0, "probes")
from common import *
S = 8
x = torch.zeros(4, S, requires_grad=True); e = torch.zeros(4, S, requires_grad=True)
m = te_ops.Sequential(te_ops.Reshape((-1, S)), te_ops.AddExtraInput())
for it in range(2):
    (m(x, e) * 1.0).sum().backward()
print("alias:", x.grad.untyped_storage().data_ptr() == e.grad.untyped_storage().data_ptr(),
      "x.grad", x.grad[0, 0].item(), "e.grad", e.grad[0, 0].item(), "(expect 2.0 each)")
