"""Pure torch: does AccumulateGrad ever leave two leaves' .grad sharing storage?
(y = x.reshape + e, two iterations, grad from a torch op; and two retained passes)"""
import torch
N, S = 2, 3
x = torch.rand(N, S, requires_grad=True); e = torch.rand(N, S, requires_grad=True)
for it in range(2):
    ((x.reshape(-1, S) + e) * 1.0).backward(torch.ones(N, S))
print("iterations:", x.grad[0, 0].item(), e.grad[0, 0].item(), x.grad.data_ptr() == e.grad.data_ptr())
x.grad = e.grad = None
loss = ((x.reshape(-1, S) + e) * 1.0).sum()
loss.backward(retain_graph=True); loss.backward()
print("retained passes:", x.grad[0, 0].item(), e.grad[0, 0].item())


class Alias(torch.autograd.Function):
    """A custom Function returning grads that share storage, as the fuser does"""
    @staticmethod
    def forward(ctx, x, e):
        return x + e
    @staticmethod
    def backward(ctx, g):
        return g.view_as(g), g


x.grad = e.grad = None
for it in range(2):
    (Alias.apply(x, e) * 1.0).backward(torch.ones(N, S))
print("custom Function returning aliased grads:", x.grad[0, 0].item(), e.grad[0, 0].item())
