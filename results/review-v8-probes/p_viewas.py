import torch
base = torch.zeros(2, 5)
held_view = base[0]
held = torch.zeros(5)
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, mode):
        outs = []
        for t in (held, held_view):
            outs.append(t.view_as(t) if mode == "view_as" else t.detach() if mode == "detach" else t)
        return (x * 2, *outs)
    @staticmethod
    def backward(ctx, dy, *rest):
        return 2 * dy, None
for mode in ("raw", "detach", "view_as"):
    held.grad_fn, held_view.grad_fn
    x = torch.rand(5, requires_grad=True)
    y, a, b = F.apply(x, mode)
    print(mode, "held attached:", held.grad_fn is not None, "held_view attached:", held_view.grad_fn is not None)
    for name, t in (("a", a), ("b", b)):
        try:
            t.mul_(3); print("  in-place on", name, "allowed")
        except RuntimeError as e:
            print("  in-place on", name, "raises:", str(e)[:90])
    held.zero_(); base.zero_()
    # reset
    held = torch.zeros(5); base = torch.zeros(2, 5); held_view = base[0]
