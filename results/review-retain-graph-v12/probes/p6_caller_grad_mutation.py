"""MakeExtraOutput(in_place=True) adds its channel grad into the incoming grad. With Bias
in between (dx is dy itself) the incoming grad can be the caller's dy. The kept pass works
on a copy; does the last pass still write into the caller's dy (as a single pass does on base)?"""
import torch, _common as c
res, add = c.te_ops.MakeExtraOutput(in_place=True), c.te_ops.AddExtraInput()
res.set_extra_output_channel(0, "r", output_to_caller=False); add.set_extra_input_channel(0, "r")
bias = c.te_ops.Bias(16, device="cpu")
x = torch.rand(8, 16, requires_grad=True)
y = c.te_ops.Sequential(res, bias, add)(x)
dy = torch.rand_like(y); dy0 = dy.clone()
try:
    y.backward(dy, retain_graph=True)
    print("after kept pass: dy intact =", torch.equal(dy, dy0), " x.grad == 2dy:", torch.allclose(x.grad, 2 * dy0))
except Exception as e:
    print("kept pass raised", type(e).__name__)
y2 = c.te_ops.Sequential(res, bias, add)(x.detach().requires_grad_())
dy2 = dy0.clone(); y2.backward(dy2)
print("after a normal pass: caller's dy intact =", torch.equal(dy2, dy0))
