import os
import sys
sys.path.insert(0, os.environ.get("SHIM_DIR", "."))  # holds cpu_shim.py
import cpu_shim  # noqa
import torch, transformer_engine.pytorch.ops as te_ops
sys.path.insert(0, os.path.join(os.environ.get("TE_TREE", "."), "tests/pytorch"))

class HoldsView(te_ops.BasicOperation):
    """Extra output: a buffer that is a view of another tensor"""
    num_extra_outputs = 1
    def __init__(self, view):
        super().__init__()
        self.register_buffer("table", torch.zeros(2, 5))
        self.held = self.table[0] if view else self.table.clone()[0].clone()
    def op_forward(self, *a, **k): raise RuntimeError
    def op_backward(self, *a, **k): raise RuntimeError
    def fuser_forward(self, ctxs, x, **unused):
        return x, [(self.held,)]
    def fuser_backward(self, ctxs, dy, **unused):
        return dy, [()], [()]

for view in (False, True):
    op = HoldsView(view)
    m = te_ops.Sequential(op)
    x = torch.rand(5, requires_grad=True)
    y, t = m(x)
    print(f"view={view}: held.grad_fn={op.held.grad_fn}, held.requires_grad={op.held.requires_grad}, returned is held: {t is op.held}")
    (y.sum() + t.sum()).backward()
    try:
        y, t = m(x); print("  second step ok; held.grad_fn", op.held.grad_fn)
    except Exception as e:
        print("  second step:", type(e).__name__, e)
