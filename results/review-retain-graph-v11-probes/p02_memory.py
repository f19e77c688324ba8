"""When are saved tensors freed? Process RSS (MB) with 256 MB activations on CPU.
Sequential(ConstantScale, MulWeight): MulWeight saves ConstantScale's output
(an intermediate, freed by clear_tensor_data in backward). Each line prints the
RSS delta of the saved intermediate: ~256 if held, ~0 if freed."""
import gc, os
import torch
from _common import MulWeight, te_ops, run, tree

print("tree:", tree())
N = 64 * 1024 * 1024 // 1  # 64M floats = 256 MB
ROWS, COLS = N // 1024, 1024
page = os.sysconf("SC_PAGE_SIZE")


def rss():
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page / 2**20


class Keeper(te_ops.BasicOperation):
    """op without opt-in that saves nothing, runs in backward"""
    def op_forward(self, ctx, x, **unused):
        return x
    def op_backward(self, ctx, dy):
        return dy, ()


def setup(extra_ops=()):
    mul = MulWeight(COLS)
    mul.weight.requires_grad_(False)
    model = te_ops.Sequential(*extra_ops, te_ops.ConstantScale(0.5), mul)
    x = torch.rand(ROWS, COLS, requires_grad=True)
    return model, x


def measure(label, body):
    base = rss()
    out = body(lambda: rss() - base)
    print(f"[{label}] {out}")


def normal(m):
    model, x = setup()
    y = model(x)
    dy = torch.ones_like(y)
    a = m()
    y.backward(dy)
    return f"after fwd {a:.0f}, after normal bwd {m():.0f}"


def kept_then_last(m):
    model, x = setup()
    y = model(x)
    dy = torch.ones_like(y)
    a = m()
    y.backward(dy, retain_graph=True)
    b = m()
    y.backward(dy, retain_graph=True)
    c = m()
    y.backward(dy)
    return f"after fwd {a:.0f}, kept pass {b:.0f}, kept pass {c:.0f}, last pass {m():.0f}"


def kept_then_drop(m):
    model, x = setup()
    y = model(x)
    dy = torch.ones_like(y)
    a = m()
    y.backward(dy, retain_graph=True)
    b = m()
    x.grad = None
    del y
    return f"after fwd {a:.0f}, kept pass {b:.0f}, after del y (graph dropped) {m():.0f} (dy+x still held)"


def kept_with_unsupported_op(m):
    model, x = setup((Keeper(),))
    y = model(x)
    dy = torch.ones_like(y)
    a = m()
    y.backward(dy, retain_graph=True)
    return f"after fwd {a:.0f}, kept pass with a non-opted op {m():.0f}"


def create_graph(m):
    model, x = setup()
    y = model(x)
    dy = torch.ones_like(y)
    a = m()
    torch.autograd.grad(y, x, dy, create_graph=True)
    return f"after fwd {a:.0f}, create_graph pass {m():.0f} (grad result dropped)"


def grad_then_backward(m):
    model, x = setup()
    y = model(x)
    dy = torch.ones_like(y)
    a = m()
    g = torch.autograd.grad(y, x, dy, retain_graph=True)
    del g
    b = m()
    y.backward(dy)
    return f"after fwd {a:.0f}, autograd.grad kept {b:.0f}, last backward {m():.0f}"


for name, f in [("normal", normal), ("kept,kept,last", kept_then_last), ("kept, then graph dropped", kept_then_drop),
                ("kept + non-opted op", kept_with_unsupported_op), ("create_graph", create_graph),
                ("autograd.grad kept, then backward", grad_then_backward)]:
    run(name, lambda f=f, name=name: measure(name, f))
