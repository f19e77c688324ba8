"""The PyTorch autograd behaviours that the series leans on, in plain PyTorch (no TE).

A new torch release is where the series would break first (issue 29): each test pins one
behaviour that a patch relies on, so that a torch whose autograd moves fails here, naming
it, before the channel tests fail for a reason that is harder to read. All of them hold on
torch 2.14.1 and 2.15.0 alike (`results/torch-2.15.md`).

- 0001: an alias made inside an autograd function's forward (grad mode off) with
  `detach().requires_grad_(True)` requires grad and leaves the tensor it aliases alone;
  the function's outputs get their grad flag from the inputs, whatever forward set on them.
- 0009: `torch._C._autograd._get_current_graph_task_keep_graph` says in backward whether
  the graph is retained; saved tensors come back as the same objects (an attribute set on
  one, `_do_not_clear`, is there on the next backward pass); a freed graph raises
  PyTorch's error; saved-tensor hooks unpack once per backward pass.
"""

from __future__ import annotations

import pytest
import torch


class _Identity(torch.autograd.Function):
    """Returns its input as is, and a fresh tensor whose flag forward sets (as the fuser)."""

    @staticmethod
    def forward(ctx, x, flag):
        fresh = x * 2
        fresh.requires_grad_(flag)
        return x, fresh

    @staticmethod
    def backward(ctx, dx, dfresh):
        return dx + 2 * dfresh, None


def test_an_alias_made_with_grad_mode_off_requires_grad_and_its_source_does_not():
    buffer = torch.rand(4)
    with torch.no_grad():
        alias = buffer.detach().requires_grad_(True)
    assert alias.requires_grad and alias.is_leaf
    assert not buffer.requires_grad
    assert alias.data_ptr() == buffer.data_ptr()


@pytest.mark.parametrize("input_requires_grad", [False, True])
@pytest.mark.parametrize("flag", [False, True])
def test_function_outputs_take_their_grad_flag_from_the_inputs(input_requires_grad, flag):
    x = torch.rand(4, requires_grad=input_requires_grad)
    y, fresh = _Identity.apply(x, flag)
    assert y is not x  # an input returned as is comes back as a new view of it
    assert y.requires_grad == input_requires_grad
    assert fresh.requires_grad == input_requires_grad  # not `flag`
    assert (fresh.grad_fn is not None) == input_requires_grad


def test_a_non_differentiable_output_does_not_require_grad():
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            index = torch.zeros(4)
            ctx.mark_non_differentiable(index)
            return out, index

        @staticmethod
        def backward(ctx, dout, dindex):
            return 2 * dout

    out, index = Twice.apply(torch.rand(4, requires_grad=True))
    assert out.requires_grad and not index.requires_grad


class _Saves(torch.autograd.Function):
    """Saves its input; records in backward what the keep-graph binding says."""

    seen: list = []

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 3

    @staticmethod
    def backward(ctx, dy):
        (saved,) = ctx.saved_tensors
        _Saves.seen.append(
            (
                torch._C._autograd._get_current_graph_task_keep_graph(),
                getattr(saved, "_do_not_clear", None),
            )
        )
        saved._do_not_clear = "kept"
        return dy * 3


def test_backward_can_tell_whether_the_graph_is_kept_and_saved_tensors_keep_attributes():
    assert hasattr(torch._C._autograd, "_get_current_graph_task_keep_graph")
    _Saves.seen = []
    x = torch.rand(4, requires_grad=True)
    y = _Saves.apply(x * 1)  # a saved tensor that is not a leaf
    y.sum().backward(retain_graph=True)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert _Saves.seen == [(True, None), (True, "kept"), (False, "kept")]
    assert torch.equal(x.grad, torch.full((4,), 9.0))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_outside_backward_the_keep_graph_binding_says_true():
    # fuser.py's comment: "Outside a running backward pass the binding returns True"
    assert torch._C._autograd._get_current_graph_task_keep_graph() is True


def test_saved_tensor_hooks_unpack_once_per_backward_pass():
    calls = []

    def pack(t):
        calls.append("pack")
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    x = torch.rand(4, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = _Saves.apply(x * 1)
    _Saves.seen = []
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert calls == ["pack", "unpack", "unpack"]
