"""The series' promises, checked on the installed TE with CPU tensors.

F1: fresh channel outputs reach consumers flagged as requiring grad, and the producer's own
    tensors keep their flags.
F2: extra outputs / extra input grads may be any iterables.
F3: standalone calls do not lock channel bindings; kept fusers do.
F4: fused producers/consumers, multi-slot ops (CPU parts).
Aliasing: in-place consumers of a channel never write into tensors they do not own.
"""

from __future__ import annotations

import contextlib

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


def test_f1_flag_does_not_leak_into_producer_buffer(size=8):
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
    p.set_extra_output_channel(0, "t", output_to_caller=False)
    c.set_extra_input_channel(0, "t")
    te_ops.Sequential(p, c)(torch.rand(size)).sum().backward()
    assert not p.table.requires_grad


# --------------------------------------------------------------------------- F2


@pytest.mark.parametrize("outer", ["list", "generator"])
@pytest.mark.parametrize("inner", ["tuple", "generator"])
def test_f2_iterable_extra_outputs_and_grads(outer, inner, size=8):
    def wrap(per_op):
        inners = [(t for t in ys) if inner == "generator" else tuple(ys) for ys in per_op]
        return (i for i in inners) if outer == "generator" else inners

    class Producer(te_ops.MakeExtraOutput):
        def fuser_forward(self, ctxs, x, **kw):
            return x, wrap([(x,)])

    class Consumer(te_ops.AddExtraInput):
        def fuser_backward(self, ctxs, dy, **kw):
            return dy, [()], wrap([(dy,)])

    p, c1, c2 = Producer(), Consumer(), Consumer()
    p.set_extra_output_channel(0, "r")
    c1.set_extra_input_channel(0, "r")
    c2.set_extra_input_channel(0, "r")
    x = torch.rand(size, requires_grad=True)
    y, r = te_ops.Sequential(p, te_ops.ConstantScale(2.0), c1, c2)(x)
    torch.testing.assert_close(y, 4 * x)
    torch.testing.assert_close(r, x)
    torch.autograd.backward((y, r), (torch.ones(size), torch.ones(size)))
    torch.testing.assert_close(x.grad, torch.full((size,), 5.0))


def test_f2_wrong_count_names_the_op():
    class Bad(te_ops.MakeExtraOutput):
        def fuser_forward(self, ctxs, x, **kw):
            return x, iter([iter((x, x))])

    with pytest.raises(RuntimeError, match=r"Bad.*basic op 1 \(Bad\)"):
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
    with pytest.raises(ValueError, match="has no producer"):
        c(x, x)
    c.set_extra_input_channel(0, None)  # still editable
    torch.testing.assert_close(c(x, x), 2 * x)


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


def test_alias_exclusive_channel_is_not_copied(size=8):
    seen = {}

    class Fresh(te_ops.MakeExtraOutput):
        def extra_output_is_exclusive(self, index):
            return True

        def fuser_forward(self, ctxs, x, **kw):
            out = 2 * x
            seen["made"] = out.data_ptr()
            return x, [(out,)]

        def fuser_backward(self, ctxs, dy, *, basic_op_grad_extra_outputs):
            return dy + 2 * basic_op_grad_extra_outputs[0][0], [()], [()]

    class Add(te_ops.AddExtraInput):
        def fuser_forward(self, ctxs, x, *, basic_op_extra_inputs, **kw):
            seen["used"] = basic_op_extra_inputs[0][0].data_ptr()
            return super().fuser_forward(ctxs, x, basic_op_extra_inputs=basic_op_extra_inputs, **kw)

    p, c = Fresh(), Add(in_place=True)
    p.set_extra_output_channel(0, "r", output_to_caller=False)
    c.set_extra_input_channel(0, "r")
    x = torch.rand(size, requires_grad=True)
    y = te_ops.Sequential(p, c)(x)
    torch.testing.assert_close(y, 3 * x)
    assert seen["used"] == seen["made"]


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
