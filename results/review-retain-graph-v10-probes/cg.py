from prelude import *
size=16
n = int(sys.argv[1])
ops=[]
for i in range(8):
    ops += [te_ops.ConstantScale(1.0), MulWeight(size)]
m = te_ops.Sequential(*ops)
x = torch.rand(8, size, requires_grad=True)
for _ in range(20 + n):
    m(x).sum().backward()
    for op in ops[1::2]: op.saved_refs.clear(); op.freed.clear()
