"""Regression probe for users who never retain the graph: torch.compile (eager/aot_eager
backends, fullgraph or not) and compiled autograd, on a CPU pipeline of te.ops.
Prints grads checksums and Dynamo graph-break counts; run on base and PR trees."""
import sys, traceback
import torch
import transformer_engine.pytorch as te
import transformer_engine.pytorch.utils as teu
import transformer_engine.pytorch.ops as te_ops
from torch._dynamo.utils import counters

teu._empty_tensor = torch.Tensor  # clear_tensor_data on CPU


def model():
    torch.manual_seed(0)
    return te_ops.Sequential(
        te_ops.Bias(16, device="cpu"), te_ops.ConstantScale(0.5), te_ops.Identity(),
        te_ops.Reshape((-1, 16)),
    )


def run(name, fn):
    torch._dynamo.reset(); counters.clear()
    try:
        m = model()
        x = torch.rand(8, 16, requires_grad=True, generator=torch.Generator().manual_seed(1))
        fn(m, x)
        brk = sum(counters["graph_break"].values())
        print(f"{name}: ok x.grad={x.grad.sum().item():.6f} b.grad={m[0].bias.grad.sum().item():.6f} graph_breaks={brk}")
        for k, v in counters["graph_break"].items():
            print("   break:", k[:160], v)
    except Exception as e:
        print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")


def eager(m, x):
    m(x).sum().backward()


def compiled(backend, fullgraph):
    def f(m, x):
        cm = torch.compile(m, backend=backend, fullgraph=fullgraph)
        for _ in range(2):
            x.grad = None; m[0].bias.grad = None
            cm(x).sum().backward()
    return f


def compiled_autograd(m, x):
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        m(x).sum().backward()


def compiled_autograd_and_fwd(m, x):
    cm = torch.compile(m, backend="aot_eager")
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="aot_eager")):
        cm(x).sum().backward()


run("eager", eager)
for backend in ("eager", "aot_eager"):
    for fg in (False, True):
        run(f"compile[{backend},fullgraph={fg}]", compiled(backend, fg))
run("compiled_autograd", compiled_autograd)
run("compiled_autograd+compile", compiled_autograd_and_fwd)
