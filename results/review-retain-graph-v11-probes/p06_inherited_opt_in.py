"""The opt-in is inherited: a subclass of an opted-in op that overrides op_backward
(and breaks the contract) replays without an error."""
import torch
from _common import te_ops, run, tree

print("tree:", tree())


class CountingScale(te_ops.ConstantScale):
    """Overrides backward and consumes per-forward state (breaks the replay contract)"""
    def op_forward(self, ctx, x, **kwargs):
        ctx.pending = [0.5]          # one-shot state for backward
        return super().op_forward(ctx, x, **kwargs)
    def op_backward(self, ctx, dy):
        s = ctx.pending.pop() if ctx.pending else 0.0   # second pass reads nothing
        return dy * s, ()


def case():
    x = torch.rand(2, 4, requires_grad=True)
    loss = te_ops.Sequential(CountingScale(0.5))(x).sum()
    loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    loss.backward()
    return (f"_supports_backward_replay={CountingScale._supports_backward_replay}; "
            f"second pass raised nothing; pass2 grad == pass1 grad: {torch.allclose(x.grad - g1, g1)}")
run("subclass overriding op_backward", case)
