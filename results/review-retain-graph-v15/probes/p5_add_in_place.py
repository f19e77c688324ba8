"""Minimal case from p4: Sequential(Reshape, AddExtraInput(in_place=True)) with a public extra
input; three passes with different grads."""
import sys
import torch
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import common  # noqa
import transformer_engine.pytorch.ops as te_ops

torch.manual_seed(0)
N, S = 2, 3
model = te_ops.Sequential(te_ops.Reshape((-1, S)), te_ops.AddExtraInput(in_place=True))
x = torch.rand(N, S, requires_grad=True)
e = torch.rand(N, S, requires_grad=True)
y = model(x, e)
print("y is e's alias:", y.data_ptr() == e.data_ptr())
for k, keep in enumerate((True, True, False)):
    dy = torch.full((N, S), float(10 ** k))
    prev = (x.grad.clone() if x.grad is not None else 0, e.grad.clone() if e.grad is not None else 0)
    y.backward(dy, retain_graph=keep)
    print(f"pass {k}: dy={dy[0,0].item():g}  x.grad increment={(x.grad - prev[0])[0,0].item():g}  "
          f"e.grad increment={(e.grad - prev[1])[0,0].item():g}  x.grad is e.grad storage: "
          f"{x.grad.data_ptr() == e.grad.data_ptr()}")
