import torch
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x): return x * 2
    @staticmethod
    def backward(ctx, g):
        print("  grad enabled in backward:", torch.is_grad_enabled(), "keep_graph:", torch._C._autograd._get_current_graph_task_keep_graph())
        return g * 2
x = torch.rand(3, requires_grad=True)
for kw in ({}, {"retain_graph": True}, {"create_graph": True}):
    y = F.apply(x).sum(); print(kw); torch.autograd.grad(y, x, **kw)
print("outside a graph task:", torch._C._autograd._get_current_graph_task_keep_graph())
