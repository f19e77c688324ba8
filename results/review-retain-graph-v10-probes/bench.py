from prelude import *
import time
size=16
ops=[]
for i in range(8):
    ops += [te_ops.ConstantScale(1.0), MulWeight(size)]
m = te_ops.Sequential(*ops)
x = torch.rand(8, size, requires_grad=True)
def step():
    m(x).sum().backward()
for _ in range(200): step()
best=[]
for r in range(7):
    t=time.perf_counter()
    for _ in range(500): step()
    best.append((time.perf_counter()-t)/500*1e6)
print(sys.argv[1], "us/step min %.1f median %.1f" % (min(best), sorted(best)[3]))
