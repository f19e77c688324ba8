"""Randomized differential: random te.ops pipelines of CPU-capable ops, one forward pass, then
several backward passes (retain_graph=True via .backward or autograd.grad, then a last pass that
does or does not keep the graph), each with different grads. Each pass is compared with a fresh
forward pass of the same model given the same grads. Also checks that no two leaves' .grad alias,
and that a further pass after the last one raises.

Usage: PYTHONPATH=<tree> python differential.py [trials] [seed]
"""
import random, sys, traceback, itertools
import torch
import transformer_engine.pytorch as te
import transformer_engine.pytorch.utils as teu
import transformer_engine.pytorch.ops as te_ops
from transformer_engine.pytorch.utils import clear_tensor_data

teu._empty_tensor = torch.Tensor  # clear_tensor_data on CPU
torch.set_default_dtype(torch.float64)
N = 4
import os
SINGLE = os.environ.get('SINGLE') == '1'


class MulWeight(te_ops.BasicOperation):
    """x * w, saves input, frees it with clear_tensor_data"""
    _supports_backward_replay = True

    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(n) + 0.5)

    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_)
        return input_ * self.weight

    def op_backward(self, ctx, grad_output):
        (x,) = ctx.saved_tensors
        gw = (grad_output * x).reshape(-1, x.shape[-1]).sum(0)
        clear_tensor_data(x)
        return grad_output * self.weight, (gw,)


class Square(te_ops.BasicOperation):
    """x**2, saves its output-side intermediate (2x) and frees it"""
    _supports_backward_replay = True

    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(2 * input_)
        return input_ * input_

    def op_backward(self, ctx, grad_output):
        (two_x,) = ctx.saved_tensors
        dx = grad_output * two_x
        clear_tensor_data(two_x)
        return dx, ()


class NotOptedIn(MulWeight):
    def op_backward(self, ctx, grad_output):
        return super().op_backward(ctx, grad_output)


def build(rng, allow_not_opted):
    """Returns (list of op factories, number of public extra inputs, shapes of extra inputs)"""
    specs = []
    shape = (8, N)
    chans = {}  # channel -> shape
    n_chan = 0
    consumers_needed = set()
    n_ops = rng.randint(1, 7)
    for _ in range(n_ops):
        kinds = ["bias", "scale", "identity", "reshape", "mul", "square", "mxo", "aei"]
        if allow_not_opted:
            kinds.append("notopted")
        k = rng.choice(kinds)
        if k == "reshape":
            new = rng.choice([(8, N), (2, 4, N), (4, 2, N)])
            specs.append(("reshape", new)); shape = new
        elif k == "mxo":
            in_place = rng.random() < 0.5
            mode = rng.choice(["public", "channel", "channel+public"])
            if mode == "public":
                specs.append(("mxo", in_place, None, True))
            else:
                n_chan += 1; c = f"c{n_chan}"; chans[c] = shape
                consumers_needed.add(c)
                specs.append(("mxo", in_place, c, mode == "channel+public"))
        elif k == "aei":
            in_place = rng.random() < 0.5
            usable = [c for c, s in chans.items() if s == shape]
            if usable and rng.random() < 0.7:
                c = rng.choice(usable); consumers_needed.discard(c)
                specs.append(("aei", in_place, c, shape))
            else:
                specs.append(("aei", in_place, None, shape))
        else:
            specs.append((k,))
    # consume channels left unconsumed
    for c in sorted(consumers_needed):
        if chans[c] != shape:
            specs.append(("reshape", chans[c])); shape = chans[c]
        specs.append(("aei", rng.random() < 0.5, c, shape))
    return specs


def make_ops(specs, seed):
    torch.manual_seed(seed)
    ops = []
    for s in specs:
        k = s[0]
        if k == "bias":
            op = te_ops.Bias(N, device="cpu", dtype=torch.float64)
            with torch.no_grad():
                op.bias.copy_(torch.rand(N))
        elif k == "scale":
            op = te_ops.ConstantScale(0.75)
        elif k == "identity":
            op = te_ops.Identity()
        elif k == "reshape":
            op = te_ops.Reshape(s[1])
        elif k == "mul":
            op = MulWeight(N)
        elif k == "notopted":
            op = NotOptedIn(N)
        elif k == "square":
            op = Square()
        elif k == "mxo":
            op = te_ops.MakeExtraOutput(in_place=s[1])
            if s[2] is not None:
                op.set_extra_output_channel(0, s[2], output_to_caller=s[3])
        elif k == "aei":
            op = te_ops.AddExtraInput(in_place=s[1])
            if s[2] is not None:
                op.set_extra_input_channel(0, s[2])
        ops.append(op)
    return ops


def leaves_for(specs, x0, e0s, params):
    x = x0.clone().requires_grad_(True)
    es = [e.clone().requires_grad_(True) for e in e0s]
    return x, es


def forward(specs, seed, x0, e0s, param_rg, torch_between):
    ops = make_ops(specs, seed)
    params = [p for op in ops for p in op.parameters()]
    for p, rg in zip(params, param_rg):
        p.requires_grad_(rg)
    x = x0.clone().requires_grad_(True)
    es = [e.clone().requires_grad_(True) for e in e0s]
    inp = torch.sin(x) if torch_between else x
    outs = te_ops.Sequential(*ops)(inp, *es)
    outs = list(outs) if isinstance(outs, tuple) else [outs]
    if torch_between:
        outs[0] = torch.cos(outs[0])
    leaves = [x, *es, *[p for p in params if p.requires_grad]]
    return outs, leaves, ops


def trial(rng, t):
    allow_not_opted = rng.random() < 0.15
    specs = build(rng, allow_not_opted)
    seed = rng.randrange(1 << 30)
    x0 = torch.rand(8, N)
    e0s = []
    for s in specs:
        if s[0] == "aei" and s[2] is None:
            e0s.append(torch.rand(s[3]))
    nparams = sum(1 for s in specs if s[0] in ("bias", "mul", "notopted"))
    param_rg = [rng.random() < 0.85 for _ in range(nparams)]
    torch_between = rng.random() < 0.3
    nkeep = rng.randint(1, 3)
    passes = [rng.choice(["bwd_keep", "grad_keep"]) for _ in range(nkeep)]
    passes.append(rng.choice(["bwd", "grad"]))
    if SINGLE:  # main supports one pass only
        passes = [passes[-1]]

    outs, leaves, ops = forward(specs, seed, x0, e0s, param_rg, torch_between)
    used = [o for o in outs if o.requires_grad]
    if not used:
        return "skip"
    outs_idx = [i for i, o in enumerate(outs) if o.requires_grad]
    acc = [None] * len(leaves)
    desc = f"trial {t}: specs={specs} param_rg={param_rg} torch_between={torch_between} passes={passes}"
    for k, mode in enumerate(passes):
        dys = [torch.randn_like(outs[i]) for i in outs_idx]
        # Reference: fresh forward with the same grads
        routs, rleaves, _ = forward(specs, seed, x0, e0s, param_rg, torch_between)
        ref = torch.autograd.grad([routs[i] for i in outs_idx], rleaves, [d.clone() for d in dys], allow_unused=True)
        ref = [torch.zeros_like(l) if r is None else r for r, l in zip(ref, rleaves)]
        keep = mode.endswith("keep")
        try:
            if mode.startswith("grad"):
                got = torch.autograd.grad([outs[i] for i in outs_idx], leaves, [d.clone() for d in dys], retain_graph=keep, allow_unused=True)
                got = [torch.zeros_like(l) if g is None else g for g, l in zip(got, leaves)]
                for j, (g, r) in enumerate(zip(got, ref)):
                    if not torch.allclose(g, r, atol=1e-10, rtol=1e-10):
                        return f"WRONG GRAD pass {k} ({mode}) leaf {j}: max err {(g - r).abs().max().item():.3g}\n  {desc}"
            else:
                torch.autograd.backward([outs[i] for i in outs_idx], [d.clone() for d in dys], retain_graph=keep)
                for j, r in enumerate(ref):
                    acc[j] = r.clone() if acc[j] is None else acc[j] + r
                for j, (l, a) in enumerate(zip(leaves, acc)):
                    g = l.grad if l.grad is not None else torch.zeros_like(l)
                    if not torch.allclose(g, a, atol=1e-10, rtol=1e-10):
                        return f"WRONG .grad pass {k} ({mode}) leaf {j}: max err {(g - a).abs().max().item():.3g}\n  {desc}"
        except RuntimeError as e:
            msg = str(e)
            if k > 0 and allow_not_opted and "does not support it" in msg:
                return "raised-not-opted"
            return f"RAISED pass {k} ({mode}): {msg[:200]}\n  {desc}"
    # aliasing of .grad
    ptrs = {}
    for j, l in enumerate(leaves):
        if l.grad is not None and l.grad.numel():
            p = l.grad.untyped_storage().data_ptr()
            if p in ptrs:
                return f"ALIASED .grad leaves {ptrs[p]} and {j}\n  {desc}"
            ptrs[p] = j
    # a further pass raises
    try:
        torch.autograd.backward([outs[i] for i in outs_idx], [torch.ones_like(outs[i]) for i in outs_idx])
        return f"NO RAISE after last pass\n  {desc}"
    except RuntimeError:
        pass
    return "ok"


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    rng = random.Random(seed)
    counts = {}
    bad = []
    for t in range(trials):
        try:
            r = trial(rng, t)
        except Exception as e:
            r = f"EXC {type(e).__name__}: {str(e)[:200]}"
        key = r.split(":")[0].split("\n")[0] if r not in ("ok", "skip", "raised-not-opted") else r
        counts[key] = counts.get(key, 0) + 1
        if key not in ("ok", "skip", "raised-not-opted"):
            bad.append(r)
    print(counts)
    for b in bad[:15]:
        print(b)


main()
