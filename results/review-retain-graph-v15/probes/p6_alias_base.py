"""Is grad aliasing between leaves reachable without retain_graph? Same model as p5, two
iterations of forward + backward (grad accumulation), the grad from a torch op (fresh tensor),
and with a caller-held grad."""
import sys
import torch
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import common  # noqa
import transformer_engine.pytorch.ops as te_ops

N, S = 2, 3
for how in ("caller dy", "fresh grad from torch op"):
    torch.manual_seed(0)
    model = te_ops.Sequential(te_ops.Reshape((-1, S)), te_ops.AddExtraInput())
    x = torch.rand(N, S, requires_grad=True)
    e = torch.rand(N, S, requires_grad=True)
    for it in range(2):
        y = model(x, e)
        if how == "caller dy":
            y.backward(torch.ones(N, S))
        else:
            (y * 1.0).backward(torch.ones(N, S))
    print(f"{how}: x.grad={x.grad[0,0].item():g} e.grad={e.grad[0,0].item():g} (torch: 2, 2) "
          f"alias={x.grad.data_ptr() == e.grad.data_ptr()}")
# the same with retain_graph=True passes, grads by a torch op after the fuser
torch.manual_seed(0)
model = te_ops.Sequential(te_ops.Reshape((-1, S)), te_ops.AddExtraInput())
x = torch.rand(N, S, requires_grad=True)
e = torch.rand(N, S, requires_grad=True)
loss = (model(x, e) * 1.0).sum()
try:
    loss.backward(retain_graph=True)
    loss.backward()
    print(f"retain passes: x.grad={x.grad[0,0].item():g} e.grad={e.grad[0,0].item():g} (torch: 2, 2)")
except Exception as err:  # noqa
    print("retain passes:", type(err).__name__, str(err)[:100])
