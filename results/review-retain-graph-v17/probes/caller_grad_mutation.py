"""On main and here: a pass that does not keep the graph writes into the caller's grad tensors
(public MakeExtraOutput(in_place=True)); a kept pass works on copies."""
import sys, torch
sys.path.insert(0, "probes")
from common import *
x = torch.randn(4, 8, requires_grad=True)
y, e = te_ops.Sequential(te_ops.MakeExtraOutput(in_place=True), te_ops.ConstantScale(2.0))(x)
gy, ge = torch.ones_like(y), torch.ones_like(e)
for keep in ((True, False) if sys.argv[1:] == ["retain"] else (False,)):
    torch.autograd.backward([y, e], [gy, ge], retain_graph=keep)
    print(f"keep={keep}: caller's ge[0,0] after pass = {ge[0,0].item()} (passed 1.0)")
