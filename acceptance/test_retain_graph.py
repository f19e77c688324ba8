"""PR (e): backward through a retained graph (retain_graph=True), on the installed TE.

- Each backward pass through a retained graph adds the grads that plain PyTorch adds: basic
  ops, an op that frees its saved tensors with clear_tensor_data (as TE's linear, activation
  and norm ops do), channels, an in-place channel consumer, an in-place producer that adds
  into the caller's grad of its extra output, backward and joint fusions. Every pass gets the
  same grad tensors, as a tool that replays the backward pass gives them.
- Normal training is unchanged: without a retained graph, ops still free their saved tensors
  in backward, and a second backward gets PyTorch's own error.
- Where a replay cannot be trusted, the next backward raises an error naming the op and why:
  an op that saved a quantized (FP8) tensor, an op that does not opt in
  (`_supports_backward_replay`), or a PyTorch that cannot tell backward that the graph is
  kept. Never wrong grads.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
import transformer_engine.pytorch.ops as te_ops
from transformer_engine.pytorch import utils as te_utils
from transformer_engine.pytorch.utils import clear_tensor_data

from differential import registered


@pytest.fixture(autouse=True)
def _cpu_clear_tensor_data(monkeypatch):
    """clear_tensor_data swaps in an empty CUDA tensor; use an empty CPU tensor here."""
    monkeypatch.setattr(te_utils, "_empty_tensor", torch.Tensor)


class MulWeight(te_ops.BasicOperation):
    """y = x * w; frees its saved input with clear_tensor_data, as TE's ops do. It keeps the
    replay contract (reads only what it saved, writes nothing it keeps), so it opts in."""

    _supports_backward_replay = True

    def __init__(self, size: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size) + 0.5)

    def op_forward(self, ctx, x, **unused):
        ctx.save_for_backward(x, self.weight)
        return x * self.weight

    def op_backward(self, ctx, dy):
        x, w = ctx.saved_tensors
        dx, dw = dy * w, (dy * x).reshape(-1, w.numel()).sum(0)
        clear_tensor_data(x)
        return dx, (dw,)


class SaveFloat8(te_ops.BasicOperation):
    """y = 3 x; saves its input as a real Float8Tensor (CPU), dequantized in backward."""

    def op_forward(self, ctx, x, **unused):
        import transformer_engine_torch as tex
        from transformer_engine.pytorch import Float8Tensor

        saved = Float8Tensor(
            shape=x.shape,
            dtype=x.dtype,
            data=torch.full(x.shape, 0x38, dtype=torch.uint8),  # 1.0 in E4M3
            fp8_scale_inv=torch.ones((1,)),
            fp8_dtype=tex.DType.kFloat8E4M3,
            device=x.device,
        )
        ctx.save_for_backward(saved)
        return 3 * x

    def op_backward(self, ctx, dy):
        (saved,) = ctx.saved_tensors
        assert saved.shape == dy.shape
        return 3 * dy, ()


def residual_block(size, *, in_place=False):
    mk, bias, add = (
        te_ops.MakeExtraOutput(),
        te_ops.Bias(size, device="cpu"),
        te_ops.AddExtraInput(in_place=in_place),
    )
    mk.set_extra_output_channel(0, "r", output_to_caller=False)
    add.set_extra_input_channel(0, "r")
    return (mk, bias, add), bias


class FusedResidual(te_ops.FusedOperation):
    """MakeExtraOutput, Bias, AddExtraInput as one op: 2 x + b (opted in, as MulWeight)."""

    _supports_backward_replay = True

    def fuser_forward(self, ctxs, x, *, basic_op_extra_inputs, **unused):
        return 2 * x + self.basic_ops[1].bias, [(None,), (), ()]

    def fuser_backward(self, ctxs, dy, **unused):
        return 2 * dy, [(), (dy,), ()], [(), (), (dy,)]


def build(case, size):
    """(model, reference(x, *params), params, fusion context)"""
    if case == "bias":
        b = te_ops.Bias(size, device="cpu")
        return te_ops.Sequential(b), lambda x, p: x + p, [b.bias], contextlib.nullcontext()
    if case == "scale_bias":
        b = te_ops.Bias(size, device="cpu")
        model = te_ops.Sequential(te_ops.ConstantScale(-1.5), b)
        return model, lambda x, p: -1.5 * x + p, [b.bias], contextlib.nullcontext()
    if case == "clears_saved":
        m, b = MulWeight(size), te_ops.Bias(size, device="cpu")
        model = te_ops.Sequential(te_ops.ConstantScale(2.0), m, b)
        return model, lambda x, w, p: 2 * x * w + p, [m.weight, b.bias], contextlib.nullcontext()
    if case == "in_place_producer":
        mk, b = te_ops.MakeExtraOutput(in_place=True), te_ops.Bias(size, device="cpu")
        model = te_ops.Sequential(mk, b)
        return model, lambda x, p: (x + p, x), [b.bias], contextlib.nullcontext()
    ops, bias = residual_block(size, in_place=case == "in_place_consumer")
    model = te_ops.Sequential(*ops)
    fusion = contextlib.nullcontext()
    if case in ("backward", "forward_backward"):
        fused = FusedResidual(ops)

        def fuse(current, **unused):
            if len(current) == 3 and all(a is b for a, b in zip(current, ops)):
                return [fused]
            return current

        fusion = registered(case, fuse)
    return model, lambda x, p: 2 * x + p, [bias.bias], fusion


CASES = [
    "bias",
    "scale_bias",
    "clears_saved",
    "channel",
    "in_place_consumer",
    "in_place_producer",
    "backward",
    "forward_backward",
]


@pytest.mark.parametrize("case", CASES)
def test_backward_passes_through_retained_graph_match_pytorch(case, size=8):
    model, reference, params, fusion = build(case, size)
    refs = [p.detach().clone().requires_grad_(True) for p in params]
    x = torch.rand(3, size, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    with fusion:
        ys = model(x)
    if case in ("backward", "forward_backward"):
        fuser = model._module_groups[0]
        assert isinstance(fuser._backward_ops[0][0], FusedResidual)
    ys_ref = reference(x_ref, *refs)
    ys, ys_ref = (y if isinstance(y, tuple) else (y,) for y in (ys, ys_ref))
    torch.testing.assert_close(ys, ys_ref)
    dys = [torch.randn_like(y) for y in ys]
    dys_ref = [dy.clone() for dy in dys]
    for retain in (True, True, False):
        torch.autograd.backward(ys, dys, retain_graph=retain)
        torch.autograd.backward(ys_ref, dys_ref, retain_graph=retain)
        torch.testing.assert_close(x.grad, x_ref.grad)
        for p, r in zip(params, refs):
            torch.testing.assert_close(p.grad, r.grad)


def test_autograd_grad_with_retained_graph(size=8):
    """torch.autograd.grad twice (e.g. a gradient penalty, then the loss)."""
    m = MulWeight(size)
    model = te_ops.Sequential(te_ops.ConstantScale(2.0), m)
    w = m.weight
    x = torch.rand(3, size, requires_grad=True)
    loss = model(x).square().sum()
    (gx1,) = torch.autograd.grad(loss, x, retain_graph=True)
    (gx2,) = torch.autograd.grad(loss, x)
    torch.testing.assert_close(gx1, gx2)
    torch.testing.assert_close(gx1, 8 * x.detach() * w.detach() ** 2)


@pytest.mark.parametrize("retains", [(False,), (True,), (True, False), (True, True, False)])
def test_saved_tensors_freed_unless_retained(retains, size=8):
    """Ops free what they saved in backward, as before; the last backward pass through a
    retained graph frees it too."""
    model = te_ops.Sequential(te_ops.ConstantScale(2.0), MulWeight(size))
    x = torch.rand(3, size, requires_grad=True)
    y = model(x)
    saved_x = y.grad_fn.saved_tensors[0]
    for retain in retains:
        y.sum().backward(retain_graph=retain)
    if retains[-1]:
        torch.testing.assert_close(saved_x, 2 * x.detach())
    else:
        assert saved_x.numel() == 0


def test_second_backward_without_retain_gets_pytorchs_error(size=8):
    y = te_ops.Sequential(MulWeight(size))(torch.rand(3, size, requires_grad=True))
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


class SavedBox:
    """A saved tensor object that is not a tensor (as TE's grouped storages)."""

    def __init__(self, data):
        self.data = data

    def prepare_for_saving(self):
        return [self.data], self

    def restore_from_saved(self, tensors):
        self.data = tensors[0]
        return tensors[1:]


class SaveBox(te_ops.BasicOperation):
    """y = 3 * x, saving x in a SavedBox and freeing its data in backward."""

    def op_forward(self, ctx, x, **unused):
        ctx.save_for_backward(SavedBox(x.detach().clone()))
        return 3 * x

    def op_backward(self, ctx, dy):
        (box,) = ctx.saved_tensors
        box.data.data = torch.empty(0)
        return 3 * dy, ()


@pytest.mark.parametrize("saving_op", [SaveFloat8, SaveBox])
def test_unkept_saved_tensors_name_the_op(saving_op, size=16):
    """A quantized saved tensor, or a saved tensor object the fuser cannot mark, gives an
    error naming the op, not grads from changed or freed data."""
    model = te_ops.Sequential(te_ops.Bias(size, device="cpu"), saving_op())
    x = torch.rand(2, size, requires_grad=True)
    loss = model(x).sum()
    loss.backward(retain_graph=True)
    torch.testing.assert_close(x.grad, torch.full_like(x, 3.0))
    saved = "quantized tensors" if saving_op is SaveFloat8 else "tensor objects"
    with pytest.raises(RuntimeError, match=rf"op 1 \({saving_op.__name__}\) saved {saved}"):
        loss.backward()
    torch.testing.assert_close(x.grad, torch.full_like(x, 3.0))  # no partial grads added


def test_old_pytorch_raises_instead_of_wrong_grads(monkeypatch, size=8):
    from transformer_engine.pytorch.ops import fuser

    # As without the binding
    monkeypatch.setattr(fuser, "_backward_keeps_graph", fuser._cannot_tell)
    model = te_ops.Sequential(te_ops.ConstantScale(2.0), MulWeight(size))
    loss = model(torch.rand(3, size, requires_grad=True)).sum()
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="cannot tell that it keeps the graph"):
        loss.backward()
