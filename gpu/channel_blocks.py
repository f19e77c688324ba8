"""Channel-routed blocks the way users run them, against the same ops routed by the caller.

Each case builds a block twice with the same weights: ``channels`` (one ``te.ops.Sequential``,
the residual or the router's tensors routed by named channels) and ``caller`` (the same ops,
the caller passing those tensors as extra inputs), runs both on the same inputs and compares
outputs, input grads and every parameter grad. The caller's input tensor and grad must never
be overwritten. A case where the caller-routed block fails too is a TE-wide limit
(``status: "te-limit"``, with where each failed), not a failure of the channels.

Cases (CUDA; on CPU only what TE runs there, with a Bias+ConstantScale body for Linear):
  train_<recipe>   MakeExtraOutput -> Linear -> AddExtraInput(in_place=True), a few SGD steps
                   under te.autocast for bf16, delayed, current and float8 block scaling
  graph_<recipe>   the block captured with te.make_graphed_callables, replays against eager
  checkpoint_*     te.checkpoint, reentrant and not
  compile          torch.compile of the block
  moe_bf16         router -> GroupedLinear -> ScaledSwiGLU -> GroupedLinear(scale_bias=True)
  moe_graph        the MoE block captured (a known TE-wide limit: split sizes go to the host)
  docs_example     docs/examples/op_fuser/moe_channels.py as shipped (--docs-example PATH)

Prints one JSON line per case; exits 1 if any case is "fail". ``--routing caller`` runs only
the caller-routed halves (for a base without the series: where does TE itself fail?).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import runpy
import sys
import traceback

import torch  # before transformer_engine
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA = torch.cuda.is_available()
DEV = "cuda" if CUDA else "cpu"
TOKENS, HIDDEN = (256, 512) if CUDA else (8, 16)


def short(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = next(
        (
            f"{os.path.basename(f.filename)}:{f.lineno}"
            for f in reversed(tb)
            if "transformer_engine" in f.filename or "torch" in f.filename
        ),
        "",
    )
    msg = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}" + (f" (at {where})" if where else "")


# --------------------------------------------------------------------------- recipes


def recipes():
    from transformer_engine.common import recipe as r  # pylint: disable=import-outside-toplevel

    out = {"bf16": None}
    if CUDA and te.is_fp8_available():
        out["delayed"] = r.DelayedScaling()
        out["current"] = r.Float8CurrentScaling()
    if CUDA and te.is_fp8_block_scaling_available():
        out["block"] = r.Float8BlockScaling()
    return out


def autocast(recipe):
    if recipe is None:  # plain bf16: no quantization context (te.autocast needs CUDA)
        return contextlib.nullcontext()
    return te.autocast(enabled=True, recipe=recipe)


# --------------------------------------------------------------------------- blocks


def body(dtype):
    if CUDA:
        return [te_ops.Linear(HIDDEN, HIDDEN, bias=True, device=DEV, dtype=dtype)]
    # CPU: TE's GEMM needs CUDA; a body TE runs on CPU keeps the harness testable
    return [te_ops.Bias(HIDDEN, device=DEV, dtype=dtype), te_ops.ConstantScale(0.5)]


class ChannelBlock(torch.nn.Module):
    """x -> body -> + x, the residual routed by a hidden channel into an in-place add."""

    def __init__(self, dtype, in_place=True):
        super().__init__()
        make = te_ops.MakeExtraOutput()
        add = te_ops.AddExtraInput(in_place=in_place)
        make.set_extra_output_channel(0, "residual", output_to_caller=False)
        add.set_extra_input_channel(0, "residual")
        self.seq = te_ops.Sequential(make, *body(dtype), add)

    def forward(self, x):
        return self.seq(x)


class CallerBlock(torch.nn.Module):
    """The same ops; the caller passes the residual (a copy, as the in-place add writes it)."""

    def __init__(self, dtype, in_place=True):
        super().__init__()
        self.in_place = in_place
        self.head = te_ops.Sequential(te_ops.MakeExtraOutput())
        self.tail = te_ops.Sequential(*body(dtype), te_ops.AddExtraInput(in_place=in_place))

    def forward(self, x):
        h, residual = self.head(x)
        return self.tail(h, residual.clone() if self.in_place else residual)


def twins(dtype, routing):
    torch.manual_seed(1)
    made = {}
    if routing in ("both", "channels"):
        made["channels"] = ChannelBlock(dtype)
    if routing in ("both", "caller"):
        made["caller"] = CallerBlock(dtype)
    ref = None
    for m in made.values():
        if ref is None:
            ref = m
            continue
        with torch.no_grad():
            for pa, pb in zip(ref.parameters(), m.parameters()):
                pb.copy_(pa)
    return made


def grads(x, model):
    return [x.grad] + [p.grad for p in model.parameters()]


def snapshot(ts):
    return [None if t is None else t.detach().float().clone() for t in ts]


def compare(a, b, tol):
    """Max abs difference of two lists of tensors; raises AssertionError on mismatch."""
    worst = 0.0
    assert len(a) == len(b), f"{len(a)} tensors against {len(b)}"
    for i, (ta, tb) in enumerate(zip(a, b)):
        if ta is None or tb is None:
            assert ta is None and tb is None, f"tensor {i}: one is None"
            continue
        worst = max(worst, (ta - tb).abs().max().item() if ta.numel() else 0.0)
        torch.testing.assert_close(ta, tb, **tol, msg=lambda m, i=i: f"tensor {i}: {m}")
    return worst


def tol_for(dtype, recipe):
    if recipe is not None:
        return {"rtol": 0.125, "atol": 0.0625}  # identical FP8 GEMMs; loose for amax drift
    return (
        {"rtol": 1.6e-2, "atol": 1e-3} if dtype == torch.bfloat16 else {"rtol": 1e-4, "atol": 1e-5}
    )


# --------------------------------------------------------------------------- runner


def run_variants(name, fns, tol, routing):
    """fns: {variant: callable -> (list of tensors, note)}. One JSON-able dict."""
    res = {"case": name}
    outs, errs = {}, {}
    for v, fn in fns.items():
        try:
            outs[v] = fn()
        except Exception as e:  # pylint: disable=broad-except
            errs[v] = short(e)
    res.update({f"{v}_error": e for v, e in errs.items()})
    if routing != "both":
        (v,) = fns
        res["status"] = "ok" if v in outs else "error"
        return res
    if errs:
        if "overwritten" in errs.get("channels", ""):
            res["status"] = "fail"  # the caller's tensor written: ours, whatever the caller does
        elif "caller" in errs and "channels" in errs:
            res["status"] = "te-limit"
        elif "channels" in errs:
            res["status"] = "fail"
        else:
            res["status"] = "caller-failed"
        return res
    try:
        res["max_abs_diff"] = compare(outs["channels"], outs["caller"], tol)
        res["status"] = "ok"
    except AssertionError as e:
        res["status"] = "fail"
        res["mismatch"] = " | ".join(str(e).splitlines())[:600]
    return res


def intact(x, x0, what):
    if not torch.equal(x.detach(), x0):
        raise AssertionError(f"the caller's {what} was overwritten")


def case_train(rname, recipe, dtype, routing, steps=3):
    blocks = twins(dtype, routing)

    def make(model):
        def fn():
            opt = torch.optim.SGD(model.parameters(), lr=0.05)
            gen = torch.Generator(device=DEV).manual_seed(7)
            out = []
            for _ in range(steps):
                x = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=dtype, generator=gen)
                dy = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=dtype, generator=gen)
                x.requires_grad_(True)
                x0, dy0 = x.detach().clone(), dy.clone()
                with autocast(recipe):
                    y = model(x)
                y.backward(dy)
                intact(x, x0, "input")
                intact(dy, dy0, "grad")
                out += snapshot([y] + grads(x, model))
                opt.step()
                opt.zero_grad(set_to_none=True)
            return out + snapshot(list(model.parameters()))

        return fn

    return run_variants(
        f"train_{rname}", {v: make(m) for v, m in blocks.items()}, tol_for(dtype, recipe), routing
    )


def case_graph(rname, recipe, dtype, routing, replays=3):
    if not CUDA:
        return {"case": f"graph_{rname}", "status": "skipped", "why": "needs CUDA"}
    made = twins(dtype, routing)

    def make(v):
        def fn():
            graphed_block = made[v]
            torch.manual_seed(1)
            eager = ChannelBlock(dtype) if v == "channels" else CallerBlock(dtype)
            with torch.no_grad():
                for pa, pb in zip(graphed_block.parameters(), eager.parameters()):
                    pb.copy_(pa)
            sample = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=dtype, requires_grad=True)
            g = te.make_graphed_callables(
                graphed_block,
                (sample,),
                num_warmup_iters=3,
                enabled=recipe is not None,
                recipe=recipe,
            )
            out, worst = [], 0.0
            gen = torch.Generator(device=DEV).manual_seed(11)
            for _ in range(replays):
                x = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=dtype, generator=gen)
                dy = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=dtype, generator=gen)
                res = []
                for fn_, mod in ((g, graphed_block), (eager, eager)):
                    for p in mod.parameters():
                        p.grad = None
                    xx = x.clone().requires_grad_(True)
                    x0, dy0 = xx.detach().clone(), dy.clone()
                    with autocast(recipe):
                        y = fn_(xx)
                    y.backward(dy)
                    intact(xx, x0, "input")
                    intact(dy, dy0, "grad")
                    res.append(snapshot([y] + grads(xx, mod)))
                worst = max(
                    worst, compare(res[0], res[1], tol_for(dtype, recipe))
                )  # replay vs eager
                out += res[0]
            return out

        return fn

    r = run_variants(f"graph_{rname}", {v: make(v) for v in made}, tol_for(dtype, recipe), routing)
    r["compared"] = "each replay against eager, then channels against caller"
    return r


def case_checkpoint(reentrant, dtype, routing):
    blocks = twins(dtype, routing)

    def make(model):
        def fn():
            gen = torch.Generator(device=DEV).manual_seed(3)
            x = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=dtype, generator=gen)
            dy = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=dtype, generator=gen)
            x.requires_grad_(True)
            x0 = x.detach().clone()
            y = te.checkpoint(model, x, use_reentrant=reentrant)
            y.backward(dy)
            intact(x, x0, "input")
            return snapshot([y] + grads(x, model))

        return fn

    name = f"checkpoint_{'reentrant' if reentrant else 'nonreentrant'}"
    return run_variants(
        name, {v: make(m) for v, m in blocks.items()}, tol_for(dtype, None), routing
    )


def case_compile(dtype, routing, backend):
    blocks = twins(dtype, routing)

    def make(model):
        def fn():
            torch._dynamo.reset()  # pylint: disable=protected-access
            compiled = torch.compile(model, backend=backend)
            gen = torch.Generator(device=DEV).manual_seed(5)
            out = []
            for _ in range(2):
                for p in model.parameters():
                    p.grad = None
                x = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=dtype, generator=gen)
                dy = torch.randn(TOKENS, HIDDEN, device=DEV, dtype=dtype, generator=gen)
                x.requires_grad_(True)
                x0 = x.detach().clone()
                y = compiled(x)
                y.backward(dy)
                intact(x, x0, "input")
                out += snapshot([y] + grads(x, model))
            return out

        return fn

    r = run_variants(
        "compile", {v: make(m) for v, m in blocks.items()}, tol_for(dtype, None), routing
    )
    r["backend"] = backend
    return r


def moe_module():
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import moe_channels  # pylint: disable=import-outside-toplevel

    return moe_channels


class RouterMath(torch.autograd.Function):
    """The caller's router with the example Router's own backward arithmetic (bf16 products
    summed over tokens), instead of autograd's matmul and sigmoid backward."""

    @staticmethod
    def forward(ctx, x, weight):  # pylint: disable=arguments-differ
        probs = torch.sigmoid(x @ weight)
        ctx.save_for_backward(x, weight, probs)
        return probs

    @staticmethod
    def backward(ctx, grad_probs):  # pylint: disable=arguments-differ
        x, weight, probs = ctx.saved_tensors
        grad_pre = grad_probs * probs * (1 - probs)
        return grad_pre.unsqueeze(-1) * weight, (grad_pre.unsqueeze(-1) * x).sum(dim=0)


def per_tensor(names, a, b):
    """{name: max abs diff} for the tensors that are not bit-equal."""
    return {
        n: (ta - tb).abs().max().item()
        for n, ta, tb in zip(names, a, b)
        if ta is not None and not torch.equal(ta, tb)
    }


def case_moe(routing, dtype=torch.bfloat16, same_router=False):
    name = "moe_bf16_same_router" if same_router else "moe_bf16"
    if not CUDA:
        return {"case": name, "status": "skipped", "why": "the example's experts are CUDA"}
    mc = moe_module()
    torch.manual_seed(0)
    probs_fn = RouterMath.apply if same_router else None
    routed, caller, params, tokens, hidden = mc.build(dtype=dtype, probs_fn=probs_fn)
    x = torch.randn(tokens, hidden, device="cuda", dtype=dtype)
    dy = torch.randn(tokens, hidden, device="cuda", dtype=dtype)

    def make(fn_, side):
        def fn():
            xx = x.clone().requires_grad_(True)
            x0, dy0 = xx.detach().clone(), dy.clone()
            y = fn_(xx)
            y.backward(dy)
            intact(xx, x0, "input")
            intact(dy, dy0, "grad")
            return snapshot([y, xx.grad] + [params[k][side].grad for k in sorted(params)])

        return fn

    seen = {}

    def kept(v, fn_):
        def fn():
            seen[v] = fn_()
            return seen[v]

        return fn

    fns = {"channels": kept("channels", make(routed, 0)), "caller": kept("caller", make(caller, 1))}
    if routing != "both":
        fns = {routing: fns[routing]}
    res = run_variants(name, fns, {"rtol": 2e-2, "atol": 2e-2}, routing)
    if len(seen) == 2:
        names = ["y", "x.grad", *sorted(params)]
        res["not_bit_equal"] = per_tensor(names, seen["channels"], seen["caller"])
    return res


def case_moe_graph(routing, dtype=torch.bfloat16):
    if not CUDA:
        return {"case": "moe_graph", "status": "skipped", "why": "needs CUDA"}
    mc = moe_module()

    def channels():
        torch.manual_seed(0)
        routed, *_, tokens, hidden = mc.build(dtype=dtype)
        sample = torch.randn(tokens, hidden, device="cuda", dtype=dtype, requires_grad=True)
        te.make_graphed_callables(routed, (sample,), num_warmup_iters=3)
        return []

    def caller():
        torch.manual_seed(0)
        experts, hidden, tokens = 8, 1024, 4096
        fc1, act, fc2 = mc.experts(experts, hidden, 2048, dtype)
        block = te_ops.Sequential(fc1, act, fc2)
        split = torch.full((experts,), tokens // experts, device="cuda", dtype=torch.int64)
        x = torch.randn((tokens, hidden), device="cuda", dtype=dtype, requires_grad=True)
        probs = torch.rand((tokens,), device="cuda", dtype=dtype, requires_grad=True)
        te.make_graphed_callables(block, (x, split, probs, split, probs), num_warmup_iters=3)
        return []

    fns = {"channels": channels, "caller": caller}
    if routing != "both":
        fns = {routing: fns[routing]}
    r = run_variants("moe_graph", fns, {}, routing)
    r["compared"] = "capture only (replay needs a capture first)"
    return r


def case_docs(path):
    if not path:
        return {"case": "docs_example", "status": "skipped", "why": "no --docs-example"}
    if not CUDA:
        return {"case": "docs_example", "status": "skipped", "why": "needs CUDA"}
    try:
        runpy.run_path(path, run_name="__main__")
        return {"case": "docs_example", "status": "ok", "path": path}
    except Exception as e:  # pylint: disable=broad-except
        return {"case": "docs_example", "status": "fail", "channels_error": short(e)}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--label", default="")
    p.add_argument("--routing", choices=("both", "caller", "channels"), default="both")
    p.add_argument("--docs-example")
    p.add_argument("--cases", help="comma-separated case-name prefixes")
    p.add_argument("--compile-backend", default="inductor")
    a = p.parse_args()
    dtype = torch.bfloat16
    plan = []
    for rname, recipe in recipes().items():
        plan.append(
            (f"train_{rname}", lambda rn=rname, rc=recipe: case_train(rn, rc, dtype, a.routing))
        )
    rs = recipes()
    for rname in ("bf16", "current", "delayed"):
        if rname in rs:
            plan.append(
                (f"graph_{rname}", lambda rn=rname: case_graph(rn, rs[rn], dtype, a.routing))
            )
    if CUDA and "delayed" not in rs:
        plan.append(
            ("graph_fp8", lambda: {"case": "graph_fp8", "status": "skipped", "why": "no FP8"})
        )
    for reentrant in (True, False):
        plan.append(
            (f"checkpoint_{reentrant}", lambda r=reentrant: case_checkpoint(r, dtype, a.routing))
        )
    plan.append(("compile", lambda: case_compile(dtype, a.routing, a.compile_backend)))
    plan.append(("moe_bf16", lambda: case_moe(a.routing)))
    plan.append(("moe_bf16_same_router", lambda: case_moe(a.routing, same_router=True)))
    plan.append(("moe_graph", lambda: case_moe_graph(a.routing)))
    if a.routing == "both":
        plan.append(("docs_example", lambda: case_docs(a.docs_example)))
    wanted = a.cases.split(",") if a.cases else None
    failed = 0
    for name, fn in plan:
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        try:
            res = fn()
        except Exception as e:  # pylint: disable=broad-except
            res = {"case": name, "status": "fail", "harness_error": short(e)}
        res = {"label": a.label, "device": DEV, "routing": a.routing, **res}
        failed += res.get("status") == "fail"
        print(json.dumps(res), flush=True)
        if CUDA:
            torch.cuda.synchronize()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
