"""Compiled autograd: what the binding and is_compiling() say inside the fuser's backward,
and whether a pass that does not keep the graph frees saved tensors."""
import sys, torch, _common as c
import transformer_engine.pytorch.ops.fuser as fuser
seen = []
orig = fuser._backward_keeps_graph
def spy():
    v = orig(); seen.append((v, torch.compiler.is_compiling())); return v
fuser._backward_keeps_graph = spy
for retain in (False, True):
    seen.clear()
    mul = c.MulWeight(16)
    x = torch.rand(8, 16, requires_grad=True)
    loss = c.te_ops.Sequential(c.te_ops.ConstantScale(0.5), mul)(x).sum()
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        loss.backward(retain_graph=retain)
    print(f"retain_graph={retain}: binding/is_compiling seen={seen} freed={mul.freed}",
          "grad ok:", torch.allclose(x.grad, 0.5 * mul.weight.detach().expand_as(x)))
    torch._dynamo.reset()
