"""Randomized differential testing of channel routing: TE's fuser against plain PyTorch.

A case is a random chain of ops with random channel bindings and random registered
fusions. `run_case` runs it through `te.ops.Sequential` and through `reference`, a
plain-PyTorch executor written from the documented channel semantics, and compares the
output, the public extra outputs and the gradients of the input, the public extra inputs
and every parameter. It also checks that the caller's tensors are not modified.

Cases are built through a `Draw` interface so that hypothesis can drive (and shrink) them
in tests, and a seeded `random.Random` can sample many of them for a failure census:

    python acceptance/differential.py --examples 2000     # prints distinct failures
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import random

import torch  # before transformer_engine
import transformer_engine.pytorch.ops as te_ops
from transformer_engine.pytorch.ops.fuser import OperationFuser

SIZE = 4
# Chains multiply values by up to 3 per op and sum in different orders than the reference.
TOLS = {"rtol": 1e-4, "atol": 1e-4}


# --------------------------------------------------------------------------- custom ops


class _Custom(te_ops.BasicOperation):
    """Base for the small custom ops: forward/backward through fuser_* only."""

    def op_forward(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} uses fuser_forward")

    def op_backward(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} uses fuser_backward")


class FreshProducer(_Custom):
    """y = x; extra output a * x, a new tensor."""

    num_extra_outputs = 1

    def __init__(self, a: float) -> None:
        super().__init__()
        self.a = a

    def fuser_forward(self, basic_op_ctxs, input_, **unused):
        return input_, [(self.a * input_,)]

    def fuser_backward(self, basic_op_ctxs, grad_output, *, basic_op_grad_extra_outputs):
        (g,) = basic_op_grad_extra_outputs[0]
        return (grad_output if g is None else grad_output + self.a * g), [()], [()]


class GeneratorProducer(_Custom):
    """y = x; extra output b * x, returned (with its grads' counterparts) as generators.

    That breaks the fuser's Sequence contract: where the fuser calls it, it must name it
    (`contract_error`). A fused op that calls it (`DelegatingFusion`) may accept it.
    """

    num_extra_outputs = 1

    def __init__(self, b: float) -> None:
        super().__init__()
        self.b = b

    def fuser_forward(self, basic_op_ctxs, input_, **unused):
        return input_, (ys for ys in [(y for y in (self.b * input_,))])

    def fuser_backward(self, basic_op_ctxs, grad_output, *, basic_op_grad_extra_outputs):
        (g,) = basic_op_grad_extra_outputs[0]
        dx = grad_output if g is None else grad_output + self.b * g
        return dx, (p for p in [()]), (d for d in [()])


class MultiSlot(_Custom):
    """y = x + a0 e0 + a1 e1; extra outputs (b0 x, b1 x)."""

    num_extra_inputs = 2
    num_extra_outputs = 2

    def __init__(self, a: tuple[float, float], b: tuple[float, float]) -> None:
        super().__init__()
        self.a, self.b = a, b

    def fuser_forward(self, basic_op_ctxs, input_, *, basic_op_extra_inputs, **unused):
        e0, e1 = basic_op_extra_inputs[0]
        y = input_ + self.a[0] * e0 + self.a[1] * e1
        return y, [(self.b[0] * input_, self.b[1] * input_)]

    def fuser_backward(self, basic_op_ctxs, grad_output, *, basic_op_grad_extra_outputs):
        dx = grad_output
        for b, g in zip(self.b, basic_op_grad_extra_outputs[0]):
            if g is not None:
                dx = dx + b * g
        return dx, [()], [(self.a[0] * grad_output, self.a[1] * grad_output)]


class FlagReadingScale(_Custom):
    """y = x * e. Like ScaledSwiGLU, computes de only if e arrives requiring grad."""

    num_extra_inputs = 1

    def fuser_forward(self, basic_op_ctxs, input_, *, basic_op_extra_inputs, **unused):
        (e,) = basic_op_extra_inputs[0]
        ctx = basic_op_ctxs[0]
        ctx.e_requires_grad = e.requires_grad
        ctx.save_for_backward(input_, e)
        return input_ * e, [()]

    def fuser_backward(self, basic_op_ctxs, grad_output, **unused):
        ctx = basic_op_ctxs[0]
        input_, e = ctx.saved_tensors
        de = grad_output * input_ if ctx.e_requires_grad else None
        return grad_output * e, [()], [(de,)]


# --------------------------------------------------------------------------- generic fusion


def _writes_in_place(op) -> bool:
    """Whether op writes into its extra input (AddExtraInput(in_place=True))."""
    return isinstance(op, te_ops.AddExtraInput) and op._in_place


def _writes_grad_in_place(op) -> bool:
    """Whether op accumulates into its extra output's grad (MakeExtraOutput(in_place=True))."""
    return isinstance(op, te_ops.MakeExtraOutput) and op._in_place


class DelegatingFusion(te_ops.FusedOperation):
    """Fusion of consecutive basic ops that runs them one by one.

    Because it calls each basic op's own fuser_forward/fuser_backward with that op's
    context, it is valid as a forward-only, backward-only or joint fusion. Channels
    between its own basic ops are its job: the fuser leaves those consumer slots unset
    in forward and does not route those grads in backward.
    """

    def __init__(self, ops) -> None:
        super().__init__(tuple(ops))
        producers = {}
        self.internal = []  # per op: {input slot: (local producer, output slot)}
        for i, op in enumerate(self.basic_ops):
            self.internal.append(
                {
                    j: producers[ch]
                    for j, ch in enumerate(op._extra_input_channels)
                    if ch is not None and ch in producers
                }
            )
            for j, ch in enumerate(op._extra_output_channels):
                if ch is not None:
                    producers[ch] = (i, j)

    def fuser_forward(self, basic_op_ctxs, input_, *, basic_op_extra_inputs, **kwargs):
        x, outs = input_, []
        for i, op in enumerate(self.basic_ops):
            inputs = list(basic_op_extra_inputs[i])
            for j, (k, s) in self.internal[i].items():
                # What the fuser does for channels that cross ops, this fusion does
                # for its own: flag for grad, and copy for an in-place consumer.
                t = outs[k][s]
                if basic_op_ctxs[k].requires_grad and not t.requires_grad:
                    t = t.detach().requires_grad_(True)
                if _writes_in_place(op):
                    t = t.detach().clone().requires_grad_(t.requires_grad)
                inputs[j] = t
            x, ys = op.fuser_forward(
                [basic_op_ctxs[i]],
                x,
                basic_op_extra_inputs=[tuple(inputs)],
                prev_op_grad_output_quantizer=None,
                next_op_input_quantizer=None,
                basic_op_kwargs=[{}],
            )
            outs.append(tuple(tuple(y) for y in ys)[0])
        return x, outs

    def fuser_backward(self, basic_op_ctxs, grad_output, *, basic_op_grad_extra_outputs):
        grads = [list(g) for g in basic_op_grad_extra_outputs]
        dparams, dextras = [None] * len(self.basic_ops), [None] * len(self.basic_ops)
        dx = grad_output
        for i in reversed(range(len(self.basic_ops))):
            dx, dp, de = self.basic_ops[i].fuser_backward(
                [basic_op_ctxs[i]], dx, basic_op_grad_extra_outputs=[tuple(grads[i])]
            )
            dparams[i] = tuple(tuple(p) for p in dp)[0]
            dextras[i] = tuple(tuple(d) for d in de)[0]
            for j, (k, s) in self.internal[i].items():
                g = dextras[i][j]
                if g is not None:
                    if grads[k][s] is not None:
                        grads[k][s] = grads[k][s] + g
                    elif _writes_grad_in_place(self.basic_ops[k]):
                        grads[k][s] = g.clone()
                    else:
                        grads[k][s] = g
        return dx, dparams, dextras


# --------------------------------------------------------------------------- cases


class Draw:
    """Where a case's random choices come from."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def bool(self) -> bool:
        return self.rng.random() < 0.5

    def choice(self, options):
        return options[self.int(0, len(options) - 1)]


KINDS = (
    "make",
    "make_inplace",
    "add",
    "add_inplace",
    "scale",
    "bias",
    "fresh",
    "generator",
    "multi",
    "mul",
)
SCALES = (0.5, 2.0, -1.0, 3.0)


@dataclasses.dataclass
class Case:
    kinds: list[str]
    params: list[tuple]
    out_bindings: list[list[tuple[str | None, bool]]]  # (channel, output_to_caller)
    in_bindings: list[list[str | None]]
    fusions: list[tuple[int, int, str]]  # (start, length, kind)

    def describe(self) -> str:
        return (
            f"ops={list(zip(self.kinds, self.params))} outs={self.out_bindings} "
            f"ins={self.in_bindings} fusions={self.fusions}"
        )


def draw_case(d: Draw, kinds=KINDS) -> Case:
    n = d.int(1, 7)
    case = Case([], [], [], [], [])
    channels: list[str] = []
    for i in range(n):
        kind = d.choice(kinds)
        if kind == "scale":
            params = (d.choice(SCALES),)
        elif kind == "fresh":
            params = (d.choice(SCALES),)
        elif kind == "generator":
            params = (d.choice(SCALES),)
        elif kind == "multi":
            params = ((d.choice(SCALES), d.choice(SCALES)), (d.choice(SCALES), d.choice(SCALES)))
        else:
            params = ()
        n_in = {"add": 1, "add_inplace": 1, "multi": 2, "mul": 1}.get(kind, 0)
        n_out = {"make": 1, "make_inplace": 1, "fresh": 1, "generator": 1, "multi": 2}.get(kind, 0)
        ins = [d.choice(channels) if channels and d.bool() else None for _ in range(n_in)]
        outs = []
        for j in range(n_out):
            if d.bool():
                outs.append((f"c{i}_{j}", d.bool()))
                channels.append(f"c{i}_{j}")
            else:
                outs.append((None, True))
        case.kinds.append(kind)
        case.params.append(params)
        case.in_bindings.append(ins)
        case.out_bindings.append(outs)
    start = 0
    while start < n - 1 and d.bool():
        length = d.int(2, min(3, n - start))
        case.fusions.append((start, length, d.choice(("forward", "backward", "forward_backward"))))
        start += length + d.int(0, 2)
    return case


def build_ops(case: Case) -> list:
    ops = []
    for kind, params in zip(case.kinds, case.params):
        if kind == "make":
            op = te_ops.MakeExtraOutput()
        elif kind == "make_inplace":
            op = te_ops.MakeExtraOutput(in_place=True)
        elif kind == "add":
            op = te_ops.AddExtraInput()
        elif kind == "add_inplace":
            op = te_ops.AddExtraInput(in_place=True)
        elif kind == "scale":
            op = te_ops.ConstantScale(params[0])
        elif kind == "bias":
            op = te_ops.Bias(SIZE, device="cpu")
            with torch.no_grad():
                op.bias.copy_(torch.randn(SIZE))
        elif kind == "fresh":
            op = FreshProducer(*params)
        elif kind == "generator":
            op = GeneratorProducer(*params)
        elif kind == "mul":
            op = FlagReadingScale()
        else:
            op = MultiSlot(*params)
        ops.append(op)
    for op, outs, ins in zip(ops, case.out_bindings, case.in_bindings):
        for j, (ch, to_caller) in enumerate(outs):
            if ch is not None:
                op.set_extra_output_channel(j, ch, output_to_caller=to_caller)
        for j, ch in enumerate(ins):
            if ch is not None:
                op.set_extra_input_channel(j, ch)
    return ops


# --------------------------------------------------------------------------- reference


def reference(case: Case, ops, x, public_inputs, *, broken: bool = False):
    """Plain PyTorch: the documented semantics, with autograd doing the gradients."""
    chan: dict[str, torch.Tensor] = {}
    public_in = iter(public_inputs)
    public_out = []
    for kind, params, op, outs, ins in zip(
        case.kinds, case.params, ops, case.out_bindings, case.in_bindings
    ):
        e = [chan[ch] if ch is not None else next(public_in) for ch in ins]
        if kind in ("make", "make_inplace"):
            ys = [x]
        elif kind in ("add", "add_inplace"):
            x, ys = x + (2 * e[0] if broken else e[0]), []
        elif kind == "scale":
            x, ys = params[0] * x, []
        elif kind == "bias":
            x, ys = x + op.bias, []
        elif kind == "fresh":
            ys = [params[0] * x]
        elif kind == "generator":
            ys = [params[0] * x]
        elif kind == "mul":
            x, ys = x * e[0], []
        else:
            (a0, a1), (b0, b1) = params
            ys = [b0 * x, b1 * x]
            x = x + a0 * e[0] + a1 * e[1]
        for (ch, to_caller), y in zip(outs, ys):
            if ch is not None:
                chan[ch] = y
            if to_caller:
                public_out.append(y)
    return x, public_out


def contract_error(case: Case) -> str | None:
    """The method of a GeneratorProducer that the fuser calls itself, so must reject.

    Forward first: a forward error ends the case. A generator op inside a fusion window is
    called by `DelegatingFusion`, which turns its generators into tuples.
    """
    fused = {"fuser_forward": set(), "fuser_backward": set()}
    for start, length, kind in case.fusions:
        window = range(start, start + length)
        if kind != "backward":
            fused["fuser_forward"].update(window)
        if kind != "forward":
            fused["fuser_backward"].update(window)
    for method, idxs in fused.items():
        if any(k == "generator" and i not in idxs for i, k in enumerate(case.kinds)):
            return method
    return None


def is_contract_error(exc: RuntimeError, method: str) -> bool:
    """Whether exc is the fuser's error for generators from GeneratorProducer.<method>."""
    msg = str(exc)
    return msg.startswith(f"GeneratorProducer.{method} must return ") and (
        "but got generator" in msg
    )


def run_pass(case, ops, method: str, error: str | None, fn):
    """Run one pass (fn) with the case's fusions registered.

    Returns (result, False), or (None, True) when the pass raised the contract error that
    ``error`` expects from GeneratorProducer.<method>. A case expecting that error whose pass
    runs through fails.
    """
    try:
        with fusions_registered(case, ops):
            result = fn()
    except RuntimeError as exc:
        if error == method and is_contract_error(exc, error):
            return None, True
        raise
    if error == method:
        raise AssertionError(f"GeneratorProducer.{method} gave generators, no contract error")
    return result, False


# --------------------------------------------------------------------------- TE run


FUSION_REGISTRIES = {
    "forward": OperationFuser.forward_fusion_functions,
    "backward": OperationFuser.backward_fusion_functions,
    "forward_backward": OperationFuser.forward_backward_fusion_functions,
}


@contextlib.contextmanager
def registered(kind: str, func):
    """Register a fusion function first in its pass for a block (registration is global)."""
    FUSION_REGISTRIES[kind].insert(0, func)
    try:
        yield
    finally:
        FUSION_REGISTRIES[kind].remove(func)


@contextlib.contextmanager
def fusions_registered(case: Case, ops):
    """Register one fusion function per window; remove them all afterwards."""
    with contextlib.ExitStack() as stack:
        for start, length, kind in case.fusions:
            stack.enter_context(registered(kind, _window_fusion(ops[start : start + length])))
        yield


def _window_fusion(window):
    """Fusion function replacing exactly these consecutive op objects."""

    def fuse(current, **unused):
        out, i = [], 0
        while i < len(current):
            if all(i + k < len(current) and current[i + k] is w for k, w in enumerate(window)):
                out.append(DelegatingFusion(window))
                i += len(window)
            else:
                out.append(current[i])
                i += 1
        return out

    return fuse


def run_case(case: Case, *, broken_reference: bool = False) -> None:
    """Raise AssertionError (or TE's own error) if TE and the reference disagree.

    The reference of a case whose GeneratorProducer the fuser calls itself is the fuser's
    contract error, in that pass (`contract_error`).
    """
    error = contract_error(case)
    torch.manual_seed(0)
    ops = build_ops(case)
    n_public_in = sum(ch is None for ins in case.in_bindings for ch in ins)
    x0 = torch.randn(SIZE)
    e0 = [torch.randn(SIZE) for _ in range(n_public_in)]

    # Reference
    x_ref = x0.clone().requires_grad_(True)
    e_ref = [e.clone().requires_grad_(True) for e in e0]
    params = [p for op in ops for p in op.parameters()]
    p_ref = [p.detach().clone().requires_grad_(True) for p in params]
    ref_ops = []
    p_iter = iter(p_ref)
    for op in ops:
        shadow = type("Shadow", (), {})()
        for name, _ in op.named_parameters():
            setattr(shadow, name, next(p_iter))
        ref_ops.append(shadow)
    y_ref, outs_ref = reference(case, ref_ops, x_ref, e_ref, broken=broken_reference)

    # TE
    x_te = x0.clone().requires_grad_(True)
    e_te = [e.clone().requires_grad_(True) for e in e0]
    model = te_ops.Sequential(*ops)
    result, stopped = run_pass(case, ops, "fuser_forward", error, lambda: model(x_te, *e_te))
    if stopped:
        return
    y_te, outs_te = (result[0], list(result[1:])) if isinstance(result, tuple) else (result, [])

    # Caller's main input must be untouched (public extra inputs of an in-place op are
    # written by contract, so only check the others).
    assert torch.equal(x_te.detach(), x0), "the caller's input was modified"
    in_place_public = []
    for kind, ins in zip(case.kinds, case.in_bindings):
        in_place_public += [kind == "add_inplace" for ch in ins if ch is None]
    for e, orig, written in zip(e_te, e0, in_place_public):
        if not written:
            assert torch.equal(e.detach(), orig), "a caller's extra input was modified"

    assert len(outs_te) == len(outs_ref), f"{len(outs_te)} public outputs, expected {len(outs_ref)}"
    torch.testing.assert_close(y_te, y_ref, **TOLS, msg=lambda m: f"output: {m}")
    for i, (a, b) in enumerate(zip(outs_te, outs_ref)):
        torch.testing.assert_close(a, b, **TOLS, msg=lambda m, i=i: f"public output {i}: {m}")

    # Backward with the same upstream grads
    gen = torch.Generator().manual_seed(1)
    grads = [torch.randn(SIZE, generator=gen) for _ in range(1 + len(outs_ref))]
    torch.autograd.backward([y_ref, *outs_ref], grads)
    grads_before = [g.clone() for g in grads]
    _, stopped = run_pass(
        case, ops, "fuser_backward", error, lambda: torch.autograd.backward([y_te, *outs_te], grads)
    )
    if stopped:
        return
    # The caller's grad of the main output must be untouched. (Grads the caller supplies
    # for public extra outputs of an in-place MakeExtraOutput are written by contract.)
    assert torch.equal(grads[0], grads_before[0]), "the caller's output grad was modified"

    def same_grad(a, b, what):
        a = torch.zeros(SIZE) if a is None else a
        b = torch.zeros(SIZE) if b is None else b
        torch.testing.assert_close(a, b, **TOLS, msg=lambda m: f"{what}: {m}")

    same_grad(x_te.grad, x_ref.grad, "input grad")
    for i, (a, b) in enumerate(zip(e_te, e_ref)):
        same_grad(a.grad, b.grad, f"public extra input {i} grad")
    for i, (a, b) in enumerate(zip(params, p_ref)):
        same_grad(a.grad, b.grad, f"parameter {i} grad")


def signature(exc: BaseException) -> str:
    """A short, stable description of a failure, for the census."""
    msg = str(exc).splitlines()[0] if str(exc) else ""
    if isinstance(exc, AssertionError):
        return f"mismatch: {msg.split(':')[0]}"
    return f"{type(exc).__name__}: {msg[:90]}"


def census(examples: int, seed: int) -> collections.Counter:
    rng = random.Random(seed)
    found: collections.Counter = collections.Counter()
    first: dict[str, str] = {}
    for _ in range(examples):
        case = draw_case(Draw(rng))
        try:
            run_case(case)
        except Exception as exc:  # pylint: disable=broad-except
            sig = signature(exc)
            found[sig] += 1
            first.setdefault(sig, case.describe())
    for sig, count in found.most_common():
        print(f"{count:5d}  {sig}\n       e.g. {first[sig]}")
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--examples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    found = census(args.examples, args.seed)
    print(f"{sum(found.values())} of {args.examples} cases failed, {len(found)} distinct failures")


if __name__ == "__main__":
    main()
