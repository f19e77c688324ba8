"""Between two passes through a retained graph, update a weight the way TE's FusedAdam does
(it hands p.data to a multi-tensor kernel: fused_adam.py:710/717, no version bump; emulated
with p.data.add_). An op that reads its weight in backward (as LayerNorm/RMSNorm do) then
gives the second pass grads from the new weight, silently; torch.optim.SGD is caught.
torch.nn.Linear is shown for comparison (it saves the weight: same blind spot)."""
import torch
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops


class ReadsWeightLive(te_ops.BasicOperation):
    """y = x * w; backward reads self.weight, as LayerNorm does"""
    _supports_backward_replay = True
    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.full((n,), 2.0))
    def op_forward(self, ctx, input_, **unused):
        return input_ * self.weight
    def op_backward(self, ctx, grad_output):
        return grad_output * self.weight, (grad_output.sum(0) * 0,)


for how in ("p.data.add_ (FusedAdam-like)", "torch.optim.SGD"):
    op = ReadsWeightLive(4)
    x = torch.ones(2, 4, requires_grad=True)
    loss = te_ops.Sequential(op)(x).sum()
    loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    if how.startswith("p.data"):
        op.weight.data.add_(1.0)
    else:
        op.weight.grad = torch.full_like(op.weight, -10.0)
        torch.optim.SGD([op.weight], lr=0.1).step()
    try:
        loss.backward()
        print(f"te.ops, {how}: second pass dx = {(x.grad - g1)[0,0].item()} (forward's weight: 2.0) - silent")
    except RuntimeError as e:
        print(f"te.ops, {how}: raises: {str(e)[:90]}")

lin = torch.nn.Linear(4, 4, bias=False)
torch.nn.init.constant_(lin.weight, 2.0)
x = torch.ones(2, 4, requires_grad=True)
loss = lin(x).sum()
loss.backward(retain_graph=True)
g1 = x.grad.clone()
lin.weight.data.add_(1.0)
loss.backward()
print(f"torch.nn.Linear, p.data.add_: second pass dx = {(x.grad - g1)[0,0].item()} (forward's weight: 8.0) - silent too")
