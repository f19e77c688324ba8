"""Randomized differential: a forward, then passes (keep, keep, last) each with a *different*
grad, vs a fresh forward + one backward with that grad. Random pipelines of Bias, ConstantScale,
Identity, Reshape, MulWeight, MakeExtraOutput / AddExtraInput (in place or not, public or
bound to channels), unfused. Run with TREE=<the PR tree>."""
import random, sys
import torch
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from common import MulWeight
import transformer_engine.pytorch.ops as te_ops

N, S = 4, 8


def build(spec, seed):
    torch.manual_seed(seed)
    ops = []
    for kind, arg in spec:
        if kind == "bias":
            op = te_ops.Bias(S, device="cpu")
            with torch.no_grad():
                op.bias.uniform_()
        elif kind == "scale":
            op = te_ops.ConstantScale(arg)
        elif kind == "id":
            op = te_ops.Identity()
        elif kind == "reshape":
            op = te_ops.Reshape((-1, S))
        elif kind == "mul":
            op = MulWeight(S)
        elif kind == "mk":
            in_place, channel, to_caller = arg
            op = te_ops.MakeExtraOutput(in_place=in_place)
            if channel:
                op.set_extra_output_channel(0, channel, output_to_caller=to_caller)
        elif kind == "add":
            in_place, channel = arg
            op = te_ops.AddExtraInput(in_place=in_place)
            if channel:
                op.set_extra_input_channel(0, channel)
        ops.append(op)
    return te_ops.Sequential(*ops)


def random_spec(rng):
    spec, channels = [], []
    for _ in range(rng.randint(2, 9)):
        kind = rng.choice(["bias", "scale", "id", "reshape", "mul", "mul", "mk", "mk", "add", "add"])
        if kind == "scale":
            spec.append((kind, rng.choice([0.5, 2.0])))
        elif kind == "mk":
            ch = f"c{len(channels)}" if rng.random() < 0.6 else None
            if ch:
                channels.append(ch)
            spec.append((kind, (rng.random() < 0.5, ch, rng.random() < 0.5)))
        elif kind == "add":
            ch = rng.choice(channels) if channels and rng.random() < 0.7 else None
            spec.append((kind, (rng.random() < 0.5, ch)))
        else:
            spec.append((kind, None))
    return spec


def one(spec, seed, passes):
    torch.manual_seed(seed + 1)
    x0 = torch.rand(N, S)
    n_pub_in = sum(1 for k, a in spec if k == "add" and not a[1])
    ex0 = [torch.rand(N, S) for _ in range(n_pub_in)]

    def run_forward(model):
        x = x0.clone().requires_grad_(True)
        ex = [e.clone().requires_grad_(True) for e in ex0]
        ys = model(x, *ex)
        ys = list(ys) if isinstance(ys, tuple) else [ys]
        return x, ex, ys

    model = build(spec, seed)
    x, ex, ys = run_forward(model)
    leaves = [x, *ex, *model.parameters()]
    torch.manual_seed(seed + 2)
    dys_per_pass = [[torch.rand_like(y) for y in ys] for _ in passes]
    prev = [torch.zeros_like(t) for t in leaves]
    bad = []
    for k, (keep, dys) in enumerate(zip(passes, dys_per_pass)):
        torch.autograd.backward(ys, [d.clone() for d in dys], retain_graph=keep)
        got = [(t.grad if t.grad is not None else torch.zeros_like(t)) - p for t, p in zip(leaves, prev)]
        prev = [(t.grad.clone() if t.grad is not None else torch.zeros_like(t)) for t in leaves]
        # Reference: fresh forward, one backward with this grad
        rmodel = build(spec, seed)
        rx, rex, rys = run_forward(rmodel)
        rleaves = [rx, *rex, *rmodel.parameters()]
        torch.autograd.backward(rys, [d.clone() for d in dys])
        ref = [(t.grad if t.grad is not None else torch.zeros_like(t)) for t in rleaves]
        for i, (g, r) in enumerate(zip(got, ref)):
            if not torch.allclose(g, r, atol=1e-5, rtol=1e-5):
                bad.append((k, i, (g - r).abs().max().item()))
    ptrs = [t.grad.untyped_storage().data_ptr() for t in leaves if t.grad is not None]
    alias = len(ptrs) != len(set(ptrs))
    return bad, alias


rng = random.Random(1234)
n_ok = n_err = n_bad = n_alias_wrong = 0
errors = {}
for it in range(int(sys.argv[1]) if len(sys.argv) > 1 else 400):
    spec = random_spec(rng)
    try:
        bad, alias = one(spec, it, (True, True, False))
        n_alias_wrong += bool(bad) and alias
    except Exception as e:  # noqa
        msg = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
        errors.setdefault(msg, spec)
        n_err += 1
        continue
    if bad:
        n_bad += 1
        if n_bad <= 5:
            print("WRONG", spec, bad[:4])
    else:
        n_ok += 1
print(f"ok={n_ok} wrong={n_bad} (of which leaf .grad share storage: {n_alias_wrong}) raised={n_err}")
for msg, spec in errors.items():
    print("  raised:", msg, "e.g.", spec)
