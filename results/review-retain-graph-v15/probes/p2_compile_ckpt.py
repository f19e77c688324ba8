"""Compiled autograd (normal use and two passes), non-reentrant checkpoint with retain_graph."""
import sys
import torch
import torch.utils.checkpoint as ckpt
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import MulWeight, run
import transformer_engine.pytorch.ops as te_ops
from torch._dynamo.utils import counters

torch.manual_seed(0)
S = 8

def model():
    return te_ops.Sequential(te_ops.ConstantScale(0.5), MulWeight(S), te_ops.Bias(S, device="cpu"))

def ca_normal():
    torch._dynamo.reset(); counters.clear()
    m = model(); x = torch.rand(4, S, requires_grad=True)
    for _ in range(2):
        loss = m(x).sum()
        with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
            loss.backward()
    ref = 0.5 * m[1].weight.detach().expand_as(x) * 2
    return dict(ok=torch.allclose(x.grad, ref), graph_breaks=sum(counters["graph_break"].values()),
                frames=counters["stats"]["unique_graphs"])
run("compiled autograd, normal passes", ca_normal)

def ca_two_compiled_passes():
    torch._dynamo.reset()
    m = model(); x = torch.rand(4, S, requires_grad=True)
    loss = m(x).sum()
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        loss.backward(retain_graph=True)
        g1 = x.grad.clone()
        loss.backward()
    return dict(second_equals_first=torch.allclose(x.grad, 2 * g1), grad=x.grad[0, :3].tolist())
run("compiled autograd, two passes both compiled", ca_two_compiled_passes)

def checkpoint_retain():
    m = model(); x = torch.rand(4, S, requires_grad=True)
    y = ckpt.checkpoint(m, x * 1.0, use_reentrant=False)
    loss = y.sum()
    loss.backward(retain_graph=True); g1 = x.grad.clone()
    loss.backward()
    return torch.allclose(x.grad, 2 * g1), m[1].freed
run("non-reentrant checkpoint, two passes", checkpoint_retain)

def checkpoint_reentrant_retain():
    m = model(); x = torch.rand(4, S, requires_grad=True)
    y = ckpt.checkpoint(m, x * 1.0, use_reentrant=True)
    loss = y.sum()
    loss.backward(retain_graph=True); g1 = x.grad.clone()
    loss.backward()
    return torch.allclose(x.grad, 2 * g1), m[1].freed
run("reentrant checkpoint, two passes", checkpoint_reentrant_retain)

def torch_ca_reference():
    torch._dynamo.reset()
    lin = torch.nn.Linear(S, S); x = torch.rand(4, S, requires_grad=True)
    loss = lin(x).sum()
    with torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager")):
        loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    loss.backward()
    return torch.allclose(x.grad, 2 * g1)
run("torch.nn.Linear: compiled autograd retain, then eager", torch_ca_reference)
