"""Randomized differential: forward once, several backward passes (retain/grad/last) with
different random grads per pass; each pass's grads vs. a fresh forward with the same grads."""
import random, sys, torch
sys.path.insert(0, "probes")
from common import *

S = 8
def build(rng):
    ops, n_pub_in = [], 0
    chan = rng.random() < 0.6
    pool = ["scale", "bias", "mul", "ident", "reshape", "pub_out", "pub_in"]
    body = [rng.choice(pool) for _ in range(rng.randint(1, 6))]
    if chan:
        i = rng.randint(0, len(body)); j = rng.randint(i, len(body))
        body = body[:i] + ["ch_out"] + body[i:j] + ["ch_in"] + body[j:]
    for k in body:
        if k == "scale": ops.append(te_ops.ConstantScale(rng.choice([0.5, -1.5, 3.0])))
        elif k == "bias":
            b = te_ops.Bias(S, device="cpu", dtype=torch.float64); torch.nn.init.normal_(b.bias); ops.append(b)
        elif k == "mul": ops.append(MulWeight(S))
        elif k == "ident": ops.append(te_ops.Identity())
        elif k == "reshape": ops.append(te_ops.Reshape((-1, S)))
        elif k == "pub_out": ops.append(te_ops.MakeExtraOutput(in_place=rng.random() < 0.5))
        elif k == "pub_in": ops.append(te_ops.AddExtraInput(in_place=rng.random() < 0.5)); n_pub_in += 1
        elif k == "ch_out":
            o = te_ops.MakeExtraOutput(in_place=rng.random() < 0.5)
            o.set_extra_output_channel(0, "r", output_to_caller=rng.random() < 0.3); ops.append(o)
        elif k == "ch_in":
            a = te_ops.AddExtraInput(in_place=rng.random() < 0.5); a.set_extra_input_channel(0, "r"); ops.append(a)
    return te_ops.Sequential(*ops), n_pub_in, body

def run_graph(model, x0, extras, wrap):
    x = x0 * 1.5 if wrap else x0
    outs = model(x, *[e * 1.0 for e in extras]) if extras else model(x)
    outs = list(outs) if isinstance(outs, tuple) else [outs]
    if wrap:  # a torch consumer of the main output
        outs.append(outs[0] * outs[0])
    return outs

def trial(seed):
    rng = random.Random(seed); torch.manual_seed(seed)
    model, n_in, body = build(rng)
    wrap = rng.random() < 0.5
    x0 = torch.randn(4, S, dtype=torch.float64, requires_grad=True)
    extras = [torch.randn(4, S, dtype=torch.float64, requires_grad=True) for _ in range(n_in)]
    leaves = [x0, *extras, *model.parameters()]
    outs = run_graph(model, x0, extras, wrap)
    npass = rng.randint(2, 4)
    modes = [rng.choice(["bwd", "grad"]) for _ in range(npass - 1)] + [rng.choice(["bwd", "grad_last"])]
    for l in leaves: l.grad = None
    for k, mode in enumerate(modes):
        dys = [torch.randn_like(o) for o in outs]
        # reference: fresh forward
        ref_outs = run_graph(model, x0, extras, wrap)
        ref = torch.autograd.grad(ref_outs, leaves, [d.clone() for d in dys], allow_unused=True)
        before = [None if l.grad is None else l.grad.clone() for l in leaves]
        if mode == "bwd":
            torch.autograd.backward(outs, [d.clone() for d in dys], retain_graph=(k < npass - 1))
            got = [None if l.grad is None else (l.grad - (b if b is not None else 0)) for l, b in zip(leaves, before)]
        else:
            got = torch.autograd.grad(outs, leaves, [d.clone() for d in dys], retain_graph=(k < npass - 1), allow_unused=True)
        for i, (g, r) in enumerate(zip(got, ref)):
            if r is None and g is None: continue
            if g is None or r is None or not torch.allclose(g, r, atol=1e-10):
                return f"seed {seed} pass {k} mode {mode} leaf {i}: MISMATCH body={body} wrap={wrap} modes={modes}"
    return None

bad = 0; N = int(sys.argv[1]) if len(sys.argv) > 1 else 300; errs = {}
for s in range(N):
    try:
        r = trial(s)
    except Exception as e:
        r = None; key = f"{type(e).__name__}: {str(e)[:120]}"; errs[key] = errs.get(key, 0) + 1
    if r: bad += 1; print(r)
print(f"{N} trials, {bad} silent mismatches; exceptions: {errs}")
