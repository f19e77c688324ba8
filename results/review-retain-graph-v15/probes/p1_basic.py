"""Second backward: base error; patched grads vs torch; create_graph; Bias strictness;
memory release when the graph goes after a kept pass."""
import gc, weakref, sys
import torch
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import MulWeight, run
import transformer_engine.pytorch.ops as te_ops

torch.manual_seed(0)
S = 8

def second_pass():
    mul = MulWeight(S)
    x = torch.rand(4, S, requires_grad=True)
    loss = te_ops.Sequential(te_ops.Bias(S, device="cpu"), te_ops.ConstantScale(0.5), mul)(x).sum()
    loss.backward(retain_graph=True)
    g1 = x.grad.clone(); w1 = mul.weight.grad.clone()
    loss.backward()
    return (torch.allclose(x.grad, 2 * g1), torch.allclose(mul.weight.grad, 2 * w1), mul.freed)
run("second pass", second_pass)

def double_diff():
    mul = MulWeight(S)
    x = torch.rand(4, S, requires_grad=True)
    loss = te_ops.Sequential(mul)(x).pow(2).sum()
    (g,) = torch.autograd.grad(loss, [x], create_graph=True)
    g.sum().backward()
    return "no error"
run("create_graph then differentiate grads", double_diff)

def bias_modified():
    bias = te_ops.Bias(S, device="cpu")
    x = torch.rand(4, S, requires_grad=True)
    loss = te_ops.Sequential(bias)(x).sum()
    loss.backward(retain_graph=True)
    with torch.no_grad():
        bias.bias.add_(1.0)
    loss.backward()
    return "no error"
run("te.ops Bias param modified between passes", bias_modified)

def torch_bias_modified():
    b = torch.nn.Parameter(torch.zeros(S))
    x = torch.rand(4, S, requires_grad=True)
    loss = (x + b).sum()
    loss.backward(retain_graph=True)
    with torch.no_grad():
        b.add_(1.0)
    loss.backward()
    return "no error"
run("torch x+b param modified between passes", torch_bias_modified)

def memory_after_graph_dropped():
    mul = MulWeight(S)
    x = torch.rand(4, S, requires_grad=True)
    h = te_ops.Sequential(te_ops.ConstantScale(0.5))(x)   # saved by MulWeight: an intermediate
    h_ref = weakref.ref(h)
    loss = te_ops.Sequential(mul)(h * 1.0).sum()
    inner = loss.grad_fn.next_functions[0][0]
    saved = inner.saved_tensors[0]
    saved_ref = weakref.ref(saved); del saved, inner
    loss.backward(retain_graph=True)
    alive_after_kept = saved_ref() is not None
    del loss, h
    gc.collect()
    return dict(alive_after_kept=alive_after_kept, alive_after_graph_dropped=saved_ref() is not None,
                attr=getattr(saved_ref(), "_do_not_clear", None) if saved_ref() is not None else None)
run("memory when graph dropped after kept pass", memory_after_graph_dropped)
