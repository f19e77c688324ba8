from prelude import *
import time
size=16
ops=[]
for i in range(8):
    ops += [te_ops.ConstantScale(1.0), MulWeight(size)]
m = te_ops.Sequential(*ops)
x = torch.rand(8, size, requires_grad=True)
torch.set_num_threads(1)
def step():
    m(x).sum().backward()
    for op in ops[1::2]: op.saved_refs.clear(); op.freed.clear()
for _ in range(300): step()
res=[]
for r in range(15):
    t=time.process_time()
    for _ in range(300): step()
    res.append((time.process_time()-t)/300*1e6)
res.sort()
print(sys.argv[1], "cpu us/step min %.1f p25 %.1f" % (res[0], res[3]))
