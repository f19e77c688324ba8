"""After backward(retain_graph=True) and no further pass, are saved activations still held?"""
import torch, _common as c
mul = c.MulWeight(16)
x = torch.rand(8, 16, requires_grad=True)
loss = c.te_ops.Sequential(c.te_ops.ConstantScale(0.5), mul)(x).sum()
try:
    loss.backward(retain_graph=True)
except Exception as e:
    print("first backward raised", type(e).__name__, e)
print("freed in kept pass:", mul.freed)   # PR: [False] (kept until graph dies); base: [True]
try:
    loss.backward()
    print("second pass ok, freed:", mul.freed, "x.grad ok:",
          torch.allclose(x.grad, 2 * 0.5 * mul.weight.detach().expand_as(x)))
except Exception as e:
    print("second pass raised:", type(e).__name__, str(e)[:150])
