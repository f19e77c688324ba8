"""Channel behaviours TE already had must still hold on CPU."""

import torch
import transformer_engine.pytorch.ops as te_ops


def test_internal_residual(size=16):
    residual = te_ops.MakeExtraOutput()
    body = te_ops.Bias(size=size, device="cpu")
    add = te_ops.AddExtraInput()
    residual.set_extra_output_channel(0, "residual")
    add.set_extra_input_channel(0, "residual")
    model = te_ops.Sequential(residual, body, add)
    x = torch.rand(size, requires_grad=True)
    y, res = model(x)
    torch.testing.assert_close(y, 2 * x + body.bias)
    torch.testing.assert_close(res, x)
    dy, dres = torch.rand(size), torch.rand(size)
    torch.autograd.backward((y, res), (dy, dres))
    torch.testing.assert_close(x.grad, 2 * dy + dres)
    torch.testing.assert_close(body.bias.grad, dy)


def test_fanout(size=16):
    producer = te_ops.MakeExtraOutput()
    consumers = [te_ops.AddExtraInput() for _ in range(3)]
    producer.set_extra_output_channel(0, "r")
    for c in consumers:
        c.set_extra_input_channel(0, "r")
    x = torch.rand(size, requires_grad=True)
    y, r = te_ops.Sequential(producer, *consumers)(x)
    torch.testing.assert_close(y, 4 * x)
    dy, dr = torch.rand(size), torch.rand(size)
    torch.autograd.backward((y, r), (dy, dr))
    torch.testing.assert_close(x.grad, 4 * dy + dr)


def test_hidden(size=16):
    producer = te_ops.MakeExtraOutput()
    consumer = te_ops.AddExtraInput()
    producer.set_extra_output_channel(0, "r", output_to_caller=False)
    consumer.set_extra_input_channel(0, "r")
    x = torch.rand(size, requires_grad=True)
    y = te_ops.Sequential(producer, te_ops.ConstantScale(3.0), consumer)(x)
    assert isinstance(y, torch.Tensor)
    torch.testing.assert_close(y, 4 * x)
    y.backward(torch.ones(size))
    torch.testing.assert_close(x.grad, torch.full((size,), 4.0))


def test_mixed_public_and_internal(size=16):
    producer = te_ops.MakeExtraOutput()
    internal = te_ops.AddExtraInput()
    external = te_ops.AddExtraInput()
    producer.set_extra_output_channel(0, "r")
    internal.set_extra_input_channel(0, "r")
    x = torch.rand(size, requires_grad=True)
    e = torch.rand(size, requires_grad=True)
    y, r = te_ops.Sequential(producer, internal, external)(x, e)
    torch.testing.assert_close(y, 2 * x + e)
    torch.testing.assert_close(r, x)
    dy = torch.rand(size)
    y.backward(dy)
    torch.testing.assert_close(x.grad, 2 * dy)
    torch.testing.assert_close(e.grad, dy)
