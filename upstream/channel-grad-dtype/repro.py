"""Channel grads reach their producer in the dtype the consumers returned, not the tensor's.

A router op makes bf16 probabilities; a consumer op returns their grad in float32, as TE's
grouped dscales kernel does for GroupedLinear(scale_bias=True) and ScaledSwiGLU. Routed by
the caller, autograd casts that grad to the probabilities' dtype before the router's
backward sees it. Routed by an extra-tensor channel, the fuser hands it over as it is.
Runs on CPU. Exits non-zero while the two differ.
"""

import torch
import transformer_engine
import transformer_engine.pytorch as te

seen = []


class Router(te.ops.BasicOperation):
    """Passes x through, with probs = sigmoid(x @ weight) as extra output"""

    num_extra_outputs = 1

    def __init__(self, size, dtype):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(size, dtype=dtype))

    def op_forward(self, *args, **kwargs):
        raise RuntimeError("Router uses fuser_forward")

    def op_backward(self, *args, **kwargs):
        raise RuntimeError("Router uses fuser_backward")

    def fuser_forward(self, basic_op_ctxs, input_, **unused):
        probs = torch.sigmoid(input_ @ self.weight)
        basic_op_ctxs[0].save_for_backward(input_, probs)
        return input_, [(probs,)]

    def fuser_backward(self, basic_op_ctxs, grad_output, *, basic_op_grad_extra_outputs):
        input_, probs = basic_op_ctxs[0].saved_tensors
        (grad_probs,) = basic_op_grad_extra_outputs[0]
        seen.append(grad_probs.dtype)
        grad_logits = grad_probs * probs * (1 - probs)
        grad_input = grad_output + grad_logits.unsqueeze(-1) * self.weight
        grad_weight = (grad_logits.unsqueeze(-1) * input_).sum(dim=0)
        return grad_input, [(grad_weight,)], [()]


class ScaleRows(te.ops.BasicOperation):
    """Scales row i of x by probs[i]; returns the grad of probs in float32"""

    num_extra_inputs = 1

    def op_forward(self, *args, **kwargs):
        raise RuntimeError("ScaleRows uses fuser_forward")

    def op_backward(self, *args, **kwargs):
        raise RuntimeError("ScaleRows uses fuser_backward")

    def fuser_forward(self, basic_op_ctxs, input_, *, basic_op_extra_inputs, **unused):
        (probs,) = basic_op_extra_inputs[0]
        basic_op_ctxs[0].save_for_backward(input_, probs)
        return input_ * probs.unsqueeze(-1), [()]

    def fuser_backward(self, basic_op_ctxs, grad_output, **unused):
        input_, probs = basic_op_ctxs[0].saved_tensors
        grad_probs = (grad_output.float() * input_.float()).sum(dim=-1)
        return grad_output * probs.unsqueeze(-1), [()], [(grad_probs,)]


dtype, size = torch.bfloat16, 8
x = torch.randn(4, size, dtype=dtype, requires_grad=True)

# Routed by the caller: autograd casts the grad of probs to bf16
router, scale = Router(size, dtype), ScaleRows()
y, probs = te.ops.Sequential(router)(x)
te.ops.Sequential(scale)(y, probs).sum().backward()

# Routed by a channel
router, scale = Router(size, dtype), ScaleRows()
router.set_extra_output_channel(0, "probs", output_to_caller=False)
scale.set_extra_input_channel(0, "probs")
te.ops.Sequential(router, scale)(x).sum().backward()

print(f"TE {transformer_engine.__version__}, torch {torch.__version__}")
print(f"grad of probs seen by the router: caller-routed {seen[0]}, channel-routed {seen[1]}")
if seen[0] != seen[1]:
    raise SystemExit("FAIL: channel routing hands the producer a grad of another dtype")
print("OK")
