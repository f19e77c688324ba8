from prelude import *
import traceback
import torch._dynamo.compiled_autograd as ca
size=4
a, b = MulWeight(size), MulWeight(size)
m = te_ops.Sequential(te_ops.ConstantScale(2.0), a, b)
x = torch.rand(3, size, requires_grad=True)
y = m(x).sum()
try:
    with ca._enable(torch.compile(backend="eager")):
        y.backward(retain_graph=True)
    print("pass1 ok")
except Exception as e:
    tb = traceback.format_exc()
    print([l for l in tb.splitlines() if "fuser.py" in l][-3:])
    print(str(e).splitlines()[0][:200])
