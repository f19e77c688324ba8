"""The series' promises, checked on the installed TE with CPU tensors.

F1: fresh channel outputs reach consumers flagged as requiring grad, and the producer's own
    tensors keep their flags.
F2: fuser_forward/fuser_backward keep upstream's Sequence contract: a generator or a wrong
    count is named (op class and method, both counts); parameter-grad entries may be any
    iterable, or None for none.
F3: standalone calls do not lock channel bindings; kept fusers do.
F4: fused producers/consumers, multi-slot ops (CPU parts).
Aliasing: in-place consumers of a channel never write into tensors they do not own.
"""

from __future__ import annotations

import contextlib
import re

import pytest
import torch
import transformer_engine.pytorch.ops as te_ops

from differential import registered

# --------------------------------------------------------------------------- helpers


class Router(te_ops.BasicOperation):
    """Extra output sigmoid(x @ w): a fresh tensor depending on a parameter."""

    num_extra_outputs = 1

    def __init__(self, size: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(size))

    def op_forward(self, *args, **kwargs):
        raise RuntimeError("uses fuser_forward")

    def op_backward(self, *args, **kwargs):
        raise RuntimeError("uses fuser_backward")

    def fuser_forward(self, basic_op_ctxs, input_, **unused):
        probs = torch.sigmoid(input_ @ self.weight)
        basic_op_ctxs[0].save_for_backward(input_, probs)
        return input_, [(probs,)]

    def fuser_backward(self, basic_op_ctxs, grad_output, *, basic_op_grad_extra_outputs):
        input_, probs = basic_op_ctxs[0].saved_tensors
        g = basic_op_grad_extra_outputs[0][0]
        if g is None:
            return grad_output, [(None,)], [()]
        pre = g * probs * (1 - probs)
        return (
            grad_output + pre.unsqueeze(-1) * self.weight,
            [((pre.unsqueeze(-1) * input_).sum(0),)],
            [()],
        )


class ScaleRows(te_ops.BasicOperation):
    """x * s[:, None]; like ScaledSwiGLU it computes ds only if s.requires_grad."""

    num_extra_inputs = 1

    def op_forward(self, *args, **kwargs):
        raise RuntimeError("uses fuser_forward")

    def op_backward(self, *args, **kwargs):
        raise RuntimeError("uses fuser_backward")

    def fuser_forward(self, basic_op_ctxs, input_, *, basic_op_extra_inputs, **unused):
        (s,) = basic_op_extra_inputs[0]
        ctx = basic_op_ctxs[0]
        ctx.s_requires_grad = s.requires_grad
        ctx.save_for_backward(input_, s)
        return input_ * s.unsqueeze(-1), [()]

    def fuser_backward(self, basic_op_ctxs, grad_output, **unused):
        ctx = basic_op_ctxs[0]
        input_, s = ctx.saved_tensors
        ds = (grad_output * input_).sum(-1) if ctx.s_requires_grad else None
        return grad_output * s.unsqueeze(-1), [()], [(ds,)]


# --------------------------------------------------------------------------- F1


@pytest.mark.parametrize("fused", [False, True])
def test_f1_fresh_channel_output_gets_gradient(fused, size=8):
    router, bias, scale = Router(size), te_ops.Bias(size, device="cpu"), ScaleRows()
    router.set_extra_output_channel(0, "probs", output_to_caller=False)
    scale.set_extra_input_channel(0, "probs")
    model = te_ops.Sequential(router, bias, scale)

    class FusedRouter(te_ops.FusedOperation):
        def __init__(self, r, b):
            super().__init__((r, b))

        def fuser_forward(self, ctxs, x, **kw):
            (r, b), out = self.basic_ops, None
            out = b.op_forward(
                ctxs[1],
                x,
                prev_op_grad_output_quantizer=kw["prev_op_grad_output_quantizer"],
                next_op_input_quantizer=kw["next_op_input_quantizer"],
            )
            probs = torch.sigmoid(x @ r.weight)
            ctxs[0].save_for_backward(x, probs)
            return out, [(probs,), ()]

    def fuse(ops, **unused):
        if len(ops) >= 2 and isinstance(ops[0], Router) and isinstance(ops[1], te_ops.Bias):
            return [FusedRouter(ops[0], ops[1]), *ops[2:]]
        return ops

    x = torch.randn(5, size, requires_grad=True)
    w = router.weight.detach().clone().requires_grad_(True)
    b = bias.bias.detach().clone().requires_grad_(True)
    y_ref = (x + b) * torch.sigmoid(x @ w).unsqueeze(-1)
    dy = torch.rand_like(y_ref)
    (dx_ref, dw_ref, db_ref) = torch.autograd.grad(y_ref, (x, w, b), dy)

    x_t = x.detach().clone().requires_grad_(True)
    with registered("forward", fuse) if fused else contextlib.nullcontext():
        y = model(x_t)
    y.backward(dy)
    torch.testing.assert_close(y, y_ref)
    torch.testing.assert_close(x_t.grad, dx_ref)
    torch.testing.assert_close(router.weight.grad, dw_ref)
    torch.testing.assert_close(bias.bias.grad, db_ref)


@pytest.mark.parametrize("output_to_caller", [False, True])
def test_f1_flag_does_not_leak_into_producer_buffer(output_to_caller, size=8):
    """Neither the grad flag nor the autograd graph reaches a buffer exposed as an output."""
    class Exposer(te_ops.BasicOperation):
        num_extra_outputs = 1

        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(size))
            self.register_buffer("table", torch.rand(size))

        def op_forward(self, *a, **k):
            raise RuntimeError

        def op_backward(self, *a, **k):
            raise RuntimeError

        def fuser_forward(self, ctxs, x, **kw):
            return x * self.w, [(self.table,)]

        def fuser_backward(self, ctxs, dy, **kw):
            return dy * self.w, [(None,)], [()]

    p, c = Exposer(), te_ops.AddExtraInput()
    p.set_extra_output_channel(0, "t", output_to_caller=output_to_caller)
    c.set_extra_input_channel(0, "t")
    out = te_ops.Sequential(p, c)(torch.rand(size))
    y = out[0] if output_to_caller else out
    if output_to_caller:
        torch.testing.assert_close(out[1], p.table)
    y.sum().backward()
    assert not p.table.requires_grad
    assert p.table.grad_fn is None


# --------------------------------------------------------------------------- F2


def test_f2_sequences_and_iterable_op_backward_grads(size=8):
    """Lists and tuples route; a basic op's op_backward may return its grads as any iterable."""

    class Producer(te_ops.MakeExtraOutput):
        def fuser_forward(self, ctxs, x, **kw):
            return x, [[x]]

    class Consumer(te_ops.AddExtraInput):
        def fuser_backward(self, ctxs, dy, **kw):
            return dy, ((),), ((dy,),)

    class IterBias(te_ops.Bias):
        def op_backward(self, ctx, dy):
            dx, dparams = super().op_backward(ctx, dy)
            return dx, (d for d in dparams)

    p, b, c1, c2 = Producer(), IterBias(size, device="cpu"), Consumer(), Consumer()
    p.set_extra_output_channel(0, "r")
    c1.set_extra_input_channel(0, "r")
    c2.set_extra_input_channel(0, "r")
    x = torch.rand(size, requires_grad=True)
    y, r = te_ops.Sequential(p, b, c1, c2)(x)
    torch.testing.assert_close(y, 3 * x + b.bias)
    torch.testing.assert_close(r, x)
    dy, dr = torch.rand(size), torch.rand(size)
    torch.autograd.backward((y, r), (dy, dr))
    torch.testing.assert_close(x.grad, 3 * dy + dr)
    torch.testing.assert_close(b.bias.grad, dy)


@pytest.mark.parametrize(
    "cls,method,kind",
    [
        ("Producer", "fuser_forward", "extra outputs"),
        ("GenBias", "fuser_backward", "parameter grads"),
        ("Consumer", "fuser_backward", "extra input grads"),
    ],
)
def test_f2_generator_breaks_the_sequence_contract(cls, method, kind, size=8):
    """fuser_forward/fuser_backward return sequences; a generator is named, not routed."""

    def gen(per_op, what):
        return (ys for ys in per_op) if what == kind else per_op

    class Producer(te_ops.MakeExtraOutput):
        def fuser_forward(self, ctxs, x, **kw):
            return x, gen([(x,)], "extra outputs")

    class GenBias(te_ops.Bias):
        def fuser_backward(self, ctxs, dy, **kw):
            dx, dparams, dextra = super().fuser_backward(ctxs, dy, **kw)
            return dx, gen(dparams, "parameter grads"), dextra

    class Consumer(te_ops.AddExtraInput):
        def fuser_backward(self, ctxs, dy, **kw):
            return dy, [()], gen([(dy,)], "extra input grads")

    p, c = Producer(), Consumer()
    p.set_extra_output_channel(0, "r", output_to_caller=False)
    c.set_extra_input_channel(0, "r")
    model = te_ops.Sequential(p, GenBias(size, device="cpu"), c)
    error = rf"^{cls}\.{method} must return .*{kind.replace(' ', '.')}.*but got .*generator"
    with pytest.raises(RuntimeError, match=error):
        model(torch.rand(size, requires_grad=True)).sum().backward()


class ScaleGrads(te_ops.BasicOperation):
    """y = x * w; op_backward returns the weight grad as None, a generator or twice."""

    def __init__(self, size, grads):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size))
        self.grads = grads

    def op_forward(self, ctx, x, **unused):
        ctx.save_for_backward(x)
        return x * self.weight

    def op_backward(self, ctx, dy):
        (x,) = ctx.saved_tensors
        dw = (dy * x).sum(dim=0)
        grads = {"none": None, "generator": (d for d in (dw,)), "twice": (dw, dw)}
        return dy * self.weight, grads[self.grads]


@pytest.mark.parametrize("grads", ["none", "generator", "twice"])
def test_f2_op_backward_parameter_grads(grads, size=8):
    """op_backward may return None for no parameter grads (as before the series) or any
    iterable; a wrong count names the op and both counts."""
    op = ScaleGrads(size, grads)
    x, dy = torch.rand(3, size, requires_grad=True), torch.rand(3, size)
    y = te_ops.Sequential(op)(x)
    if grads == "twice":
        error = r"fuser_backward must return 1 parameter grads for basic op 0 \(ScaleGrads\), but got 2$"
        with pytest.raises(RuntimeError, match=error):
            y.backward(dy)
        return
    y.backward(dy)
    torch.testing.assert_close(x.grad, dy * op.weight)
    if grads == "none":
        assert op.weight.grad is None
    else:
        torch.testing.assert_close(op.weight.grad, (dy * x).sum(dim=0))


def test_f2_wrong_count_names_the_op():
    class Bad(te_ops.MakeExtraOutput):
        def fuser_forward(self, ctxs, x, **kw):
            return x, [(x, x)]

    error = r"^Bad\.fuser_forward must return a sequence of 1 extra outputs for basic op 1 "
    error += r"\(Bad\), but got 2$"
    with pytest.raises(RuntimeError, match=error):
        te_ops.Sequential(te_ops.Identity(), Bad())(torch.rand(4))


# --------------------------------------------------------------------------- F3


def test_f3_call_then_bind_then_compose(size=8):
    p, c = te_ops.MakeExtraOutput(), te_ops.AddExtraInput()
    x = torch.rand(size)
    p(x)
    c(x, x)
    p.set_extra_output_channel(0, "r", output_to_caller=False)
    c.set_extra_input_channel(0, "r")
    y = te_ops.Sequential(p, te_ops.ConstantScale(3.0), c)(x)
    torch.testing.assert_close(y, 4 * x)
    with pytest.raises(RuntimeError, match="already captured its channel routing"):
        p.set_extra_output_channel(0, None)


def test_f3_bound_op_standalone_call_semantics(size=8):
    x = torch.rand(size)
    p = te_ops.MakeExtraOutput()
    p.set_extra_output_channel(0, "r", output_to_caller=False)
    assert isinstance(p(x), torch.Tensor)  # hidden output not returned
    c = te_ops.AddExtraInput()
    c.set_extra_input_channel(0, "r")
    with pytest.raises(ValueError, match="has no producer in this fuser"):
        c(x, x)
    c.set_extra_input_channel(0, None)  # still editable
    torch.testing.assert_close(c(x, x), 2 * x)


def test_f3_sequential_locks_at_first_forward(size=8):
    """Docs and errors say when a Sequential captures bindings: its first forward."""
    p, c = te_ops.MakeExtraOutput(), te_ops.AddExtraInput()
    p.set_extra_output_channel(0, "r")
    c.set_extra_input_channel(0, "r")
    model = te_ops.Sequential(p, c)
    p.set_extra_output_channel(0, "r", output_to_caller=False)  # not locked yet
    x = torch.rand(size)
    torch.testing.assert_close(model(x), 2 * x)
    with pytest.raises(RuntimeError, match="already captured its channel routing"):
        p.set_extra_output_channel(0, "r")


def test_f3_split_sequential_error_names_the_boundary(size=8):
    p, c = te_ops.MakeExtraOutput(), te_ops.AddExtraInput()
    p.set_extra_output_channel(0, "r", output_to_caller=False)
    c.set_extra_input_channel(0, "r")
    model = te_ops.Sequential(p, torch.nn.Identity(), c)
    error = (
        "Extra tensor channel 'r' consumed by op 0 (AddExtraInput) has no producer in this "
        "fuser (produced channels: [])"
    )
    with pytest.raises(ValueError, match=re.escape(error)):
        model(torch.rand(size))


# --------------------------------------------------------------------------- F4 (CPU parts)


@pytest.mark.parametrize("kind", ["backward", "forward_backward"])
def test_f4_fused_residual_with_outside_consumer(kind, size=8):
    class Fused(te_ops.FusedOperation):
        def __init__(self, ops):
            super().__init__(ops)
            self.backward_calls = 0

        def fuser_forward(self, ctxs, x, *, basic_op_extra_inputs, **kw):
            assert basic_op_extra_inputs[2][0] is None
            return 2 * x + self.basic_ops[1].bias, [(x,), (), ()]

        def fuser_backward(self, ctxs, dy, *, basic_op_grad_extra_outputs):
            self.backward_calls += 1
            return 2 * dy + basic_op_grad_extra_outputs[0][0], [(), (dy,), ()], [(), (), (dy,)]

    made = []

    def fuse(ops, **unused):
        if (
            len(ops) >= 3
            and isinstance(ops[0], te_ops.MakeExtraOutput)
            and isinstance(ops[1], te_ops.Bias)
            and isinstance(ops[2], te_ops.AddExtraInput)
        ):
            made.append(made[0] if made else Fused(tuple(ops[:3])))
            return [made[0], *ops[3:]]
        return ops

    m, b, a1, a2 = (
        te_ops.MakeExtraOutput(),
        te_ops.Bias(size, device="cpu"),
        te_ops.AddExtraInput(),
        te_ops.AddExtraInput(),
    )
    m.set_extra_output_channel(0, "r")
    a1.set_extra_input_channel(0, "r")
    a2.set_extra_input_channel(0, "r")
    model = te_ops.Sequential(m, b, a1, a2)
    x = torch.rand(size, requires_grad=True)
    with registered(kind, fuse):
        y, r = model(x)
    fuser = model._module_groups[0]
    assert isinstance(fuser._backward_ops[0][0], Fused)
    assert isinstance(fuser._forward_ops[0][0], Fused) == (kind == "forward_backward")
    dy, dr = torch.rand(size), torch.rand(size)
    torch.autograd.backward((y, r), (dy, dr))
    assert made[0].backward_calls == 1
    torch.testing.assert_close(y, 3 * x + b.bias)
    torch.testing.assert_close(x.grad, 3 * dy + dr)
    torch.testing.assert_close(b.bias.grad, dy)


# --------------------------------------------------------------------------- aliasing


def test_alias_in_place_consumer_keeps_caller_input(size=8):
    mk, add = te_ops.MakeExtraOutput(), te_ops.AddExtraInput(in_place=True)
    mk.set_extra_output_channel(0, "r", output_to_caller=False)
    add.set_extra_input_channel(0, "r")
    x = torch.ones(size)
    y = te_ops.Sequential(mk, te_ops.ConstantScale(2.0), add)(x)
    torch.testing.assert_close(x, torch.ones(size))
    torch.testing.assert_close(y, torch.full((size,), 3.0))


def test_alias_fanout_in_place_and_plain(size=8):
    mk, ip, pl = (
        te_ops.MakeExtraOutput(),
        te_ops.AddExtraInput(in_place=True),
        te_ops.AddExtraInput(),
    )
    mk.set_extra_output_channel(0, "r")
    ip.set_extra_input_channel(0, "r")
    pl.set_extra_input_channel(0, "r")
    x = torch.rand(size, requires_grad=True)
    y, r = te_ops.Sequential(mk, ip, pl)(x)
    torch.testing.assert_close(y, 3 * x)
    torch.testing.assert_close(r, x)
    y.backward(torch.ones(size))
    torch.testing.assert_close(x.grad, torch.full((size,), 3.0))


def test_alias_unfused_in_place_consumers_add_out_of_place(size=8):
    """An unfused in-place consumer of a channel reads the producer's tensor, writes nothing."""
    seen = []

    class Add(te_ops.AddExtraInput):
        def fuser_forward(self, ctxs, x, *, basic_op_extra_inputs, **kw):
            out, extra = super().fuser_forward(
                ctxs, x, basic_op_extra_inputs=basic_op_extra_inputs, **kw
            )
            seen.append((basic_op_extra_inputs[0][0].data_ptr(), out.data_ptr()))
            return out, extra

    p, c1, c2 = te_ops.MakeExtraOutput(), Add(in_place=True), Add(in_place=True)
    p.set_extra_output_channel(0, "r", output_to_caller=False)
    c1.set_extra_input_channel(0, "r")
    c2.set_extra_input_channel(0, "r")
    x = torch.rand(size, requires_grad=True)
    x_before = x.detach().clone()
    y = te_ops.Sequential(p, te_ops.ConstantScale(2.0), c1, c2)(x)
    torch.testing.assert_close(x.detach(), x_before, rtol=0, atol=0)
    torch.testing.assert_close(y, 4 * x_before)
    assert [read for read, _ in seen] == [x.data_ptr()] * 2  # no copies
    assert x.data_ptr() not in [written for _, written in seen]


def test_alias_in_place_producer_keeps_caller_grad(size=8):
    """MakeExtraOutput(in_place=True) on a channel does not add into the caller's dy."""
    mk, add = te_ops.MakeExtraOutput(in_place=True), te_ops.AddExtraInput()
    mk.set_extra_output_channel(0, "r", output_to_caller=False)
    add.set_extra_input_channel(0, "r")
    x = torch.rand(size, requires_grad=True)
    y = te_ops.Sequential(mk, te_ops.Bias(size, device="cpu"), add)(x)
    dy = torch.ones(size)
    y.backward(dy)
    torch.testing.assert_close(dy, torch.ones(size))
    torch.testing.assert_close(x.grad, torch.full((size,), 2.0))


# --------------------------------------------------------------------------- review of v1


def test_public_extra_output_that_is_the_main_output(size=8):
    """A public extra output that is also the main output is an alias of it; both get grads."""
    model = te_ops.Sequential(te_ops.ConstantScale(2.0), te_ops.MakeExtraOutput())
    x = torch.ones(size, requires_grad=True)
    y, e = model(x)
    assert e.data_ptr() == y.data_ptr()
    (y.sum() + 10 * e.sum()).backward()
    torch.testing.assert_close(x.grad, torch.full((size,), 22.0))


def test_quantized_channel_tensor_survives_clear(size=4):
    """An FP8 tensor on a channel is not emptied when another op clears its copy."""
    import transformer_engine_torch as tex
    from transformer_engine.pytorch import Float8Tensor
    from transformer_engine.pytorch.utils import clear_tensor_data

    class ToFloat8(te_ops.BasicOperation):
        def op_forward(self, ctx, x, **kw):
            return Float8Tensor(
                shape=x.shape,
                dtype=torch.float32,
                data=torch.full(x.shape, 0x38, dtype=torch.uint8),  # 1.0 in E4M3
                fp8_scale_inv=torch.ones((1,)),
                fp8_dtype=tex.DType.kFloat8E4M3,
                device=x.device,
            )

        def op_backward(self, ctx, dy):
            return dy, ()

    class SaveChannel(te_ops.BasicOperation):
        num_extra_inputs = 1
        seen = []

        def op_forward(self, *a, **k):
            raise RuntimeError

        def op_backward(self, *a, **k):
            raise RuntimeError

        def fuser_forward(self, ctxs, x, *, basic_op_extra_inputs, **kw):
            ctxs[0].save_for_backward(basic_op_extra_inputs[0][0])
            return x, [()]

        def fuser_backward(self, ctxs, dy, **kw):
            (e,) = ctxs[0].saved_tensors
            self.seen.append(e.dequantize())
            return dy, [()], [(None,)]

    class SaveAndClear(te_ops.BasicOperation):
        def op_forward(self, ctx, x, **kw):
            ctx.save_for_backward(x)
            return x.dequantize()

        def op_backward(self, ctx, dy):
            (x,) = ctx.saved_tensors
            clear_tensor_data(x)
            return dy, ()

    p, c = te_ops.MakeExtraOutput(), SaveChannel()
    p.set_extra_output_channel(0, "q", output_to_caller=False)
    c.set_extra_input_channel(0, "q")
    x = torch.rand(size, requires_grad=True)
    te_ops.Sequential(ToFloat8(), p, c, SaveAndClear())(x).sum().backward()
    (e,) = SaveChannel.seen
    torch.testing.assert_close(e, torch.ones(size))


def test_fused_backward_with_too_few_entries_is_named(size=8):
    class Short(te_ops.FusedOperation):
        def __init__(self, ops):
            super().__init__(ops)

        def fuser_backward(self, ctxs, dy, **kw):
            return 2 * dy, [(), (dy,)], [()]

    def fuse(ops, **unused):
        if len(ops) == 2 and isinstance(ops[0], te_ops.ConstantScale):
            return [Short(tuple(ops))]
        return ops

    model = te_ops.Sequential(te_ops.ConstantScale(2.0), te_ops.Bias(size, device="cpu"))
    x = torch.rand(size, requires_grad=True)
    with registered("backward", fuse):
        y = model(x)
    error = r"^Short\.fuser_backward must return .* for each of its 2 basic ops, but got 2 and 1$"
    with pytest.raises(RuntimeError, match=error):
        y.sum().backward()


@pytest.mark.parametrize("fused", [False, True])
def test_channel_routing_over_alternating_configurations(fused, size=8):
    """Over alternating configurations, each forward and backward routes the channel as its
    configuration needs.

    #3410's cache holds one configuration per key (recipe type, backward boundary, backward
    override), and the routing is kept with it; grad mode and the requires_grad flags of the
    input and of a parameter move the boundary (recipe changes are CUDA-only).
    """

    class Fused(te_ops.FusedOperation):
        def __init__(self, ops):
            super().__init__(ops)

        def fuser_forward(self, ctxs, x, **kw):
            return 2 * x + self.basic_ops[1].bias, [(x,), (), ()]

        def fuser_backward(self, ctxs, dy, *, basic_op_grad_extra_outputs):
            (dr,) = basic_op_grad_extra_outputs[0]
            return 2 * dy + dr, [(), (dy,), ()], [(), (), (dy,)]

    def fuse(ops, **unused):
        return [Fused(tuple(ops))] if len(ops) == 3 else ops

    p, b, c = te_ops.MakeExtraOutput(), te_ops.Bias(size, device="cpu"), te_ops.AddExtraInput()
    p.set_extra_output_channel(0, "r")
    c.set_extra_input_channel(0, "r")
    model = te_ops.Sequential(p, b, c)
    # (grad enabled, input requires grad, bias requires grad, backward boundary)
    configs = [
        (True, True, True, 0),
        (False, True, True, 3),
        (True, False, True, 1),
        (True, False, False, 3),
        (True, True, False, 0),
    ]
    with registered("forward_backward", fuse) if fused else contextlib.nullcontext():
        for step in range(20):
            grad, x_grad, b_grad, boundary = configs[step % len(configs)]
            b.bias.requires_grad_(b_grad)
            b.bias.grad = None
            x = torch.rand(size, requires_grad=x_grad)
            with torch.set_grad_enabled(grad):
                y, r = model(x)
            torch.testing.assert_close(y, 2 * x + b.bias)
            if y.requires_grad:
                dy, dr = torch.rand(size), torch.rand(size)
                torch.autograd.backward((y, r), (dy, dr))
                if x_grad:
                    torch.testing.assert_close(x.grad, 2 * dy + dr)
                if b_grad:
                    torch.testing.assert_close(b.bias.grad, dy)
            fuser = model._module_groups[0]
            assert fuser.first_op_requiring_backward == boundary
            assert isinstance(fuser._forward_ops[0][0], Fused) == fused


def test_channel_routing_with_activation_recompute(size=8):
    """No-grad and grad forward passes alternate; the router still gets its gradient."""
    router, bias, scale = Router(size), te_ops.Bias(size, device="cpu"), ScaleRows()
    router.set_extra_output_channel(0, "probs", output_to_caller=False)
    scale.set_extra_input_channel(0, "probs")
    model = te_ops.Sequential(router, bias, scale)
    x, dy = torch.randn(5, size), torch.rand(5, size)
    w = router.weight.detach().clone().requires_grad_(True)
    b = bias.bias.detach().clone().requires_grad_(True)
    y_ref = (x + b) * torch.sigmoid(x @ w).unsqueeze(-1)
    dw_ref, db_ref = torch.autograd.grad(y_ref, (w, b), dy)
    for _ in range(3):
        with torch.no_grad():
            torch.testing.assert_close(model(x), y_ref.detach())
        router.weight.grad = bias.bias.grad = None
        model(x).backward(dy)
        torch.testing.assert_close(router.weight.grad, dw_ref)
        torch.testing.assert_close(bias.bias.grad, db_ref)


class ClearingScale(te_ops.BasicOperation):
    """y = x * w; frees its saved tensors in backward unless marked _do_not_clear."""

    def __init__(self, size):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size))

    def op_forward(self, ctx, x, **unused):
        ctx.save_for_backward(x, self.weight)
        return x * self.weight

    def op_backward(self, ctx, dy):
        x, w = ctx.saved_tensors
        dx, dw = dy * w, (dy * x).reshape(-1, w.numel()).sum(dim=0)
        for t in (x, w):
            if not hasattr(t, "_do_not_clear"):
                t.data = torch.empty(0)
        return dx, (dw,)


def test_backward_stops_at_its_own_forwards_boundary(size=8):
    """A forward under another configuration (another backward boundary) in flight does not
    change what an earlier forward's backward runs."""
    a, b = ClearingScale(size), ClearingScale(size)
    model = te_ops.Sequential(a, b)
    x1, x2 = torch.rand(4, size, requires_grad=True), torch.rand(4, size)
    y1 = model(x1)  # boundary 0
    a.weight.requires_grad_(False)
    y2 = model(x2)  # boundary 1
    a.weight.requires_grad_(True)
    dy1, dy2 = torch.rand(4, size), torch.rand(4, size)
    y1.backward(dy1)
    torch.testing.assert_close(x1.grad, dy1 * a.weight * b.weight)
    torch.testing.assert_close(a.weight.grad, (dy1 * x1 * b.weight).sum(dim=0))
    a.weight.grad = b.weight.grad = None
    y2.backward(dy2)
    assert a.weight.grad is None
    torch.testing.assert_close(b.weight.grad, (dy2 * x2 * a.weight).sum(dim=0))


def test_parameters_survive_swapped_conversion(size=8):
    """After m.double(); m.float() with swap_module_params_on_conversion (new Parameter
    __dict__), an op that frees its unmarked saved tensors leaves the parameters intact."""
    op = ClearingScale(size)
    model = te_ops.Sequential(op)
    x = torch.rand(4, size, requires_grad=True)
    model(x).sum().backward()
    swap = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        model.double()
        model.float()
    finally:
        torch.__future__.set_swap_module_params_on_conversion(swap)
    w = op.weight.detach().clone()
    model(x).sum().backward()
    torch.testing.assert_close(op.weight.detach(), w, rtol=0, atol=0)
