"""The op_backward contract says a kept pass gives an op "the fuser's copies" of the grads,
"so it may write into those". An op that writes into its grad_output in place, between a
channel's producer and its consumer (AddExtraInput returns one tensor as dx and as the channel
grad), corrupts the channel grad. Single pass on base and PR; kept passes on PR."""
import torch
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops


class InPlaceScale(te_ops.BasicOperation):
    """y = 3x; backward writes into the grad it is given (what the contract allows)"""
    _supports_backward_replay = True
    def op_forward(self, ctx, input_, **unused):
        return input_ * 3
    def op_backward(self, ctx, grad_output):
        return grad_output.mul_(3), ()


def model():
    produce, consume = te_ops.MakeExtraOutput(), te_ops.AddExtraInput()
    produce.set_extra_output_channel(0, "r", output_to_caller=False)
    consume.set_extra_input_channel(0, "r")
    return te_ops.Sequential(produce, InPlaceScale(), consume)  # y = 3x + x


x = torch.rand(4, 4, requires_grad=True)
y = model()(x)
for k, keep in enumerate((False,) if not hasattr(te_ops.fuser, "_unshared") else (True, False)):
    dy = torch.ones_like(y)
    (g,) = torch.autograd.grad(y, x, dy, retain_graph=keep)
    print(f"pass {k} (retain_graph={keep}): dx = {g[0,0].item()} (right: 4.0)")
