"""Per-step cost of te.ops.Sequential forward+backward, channel- vs caller-routed.

Models: a 16-op chain without channels, one whose ops save tensors (`saving16`) and eight
fusers of two such ops in a row (`nodes8`) (their "caller-routed" twin is the same model); an
op with 512 parameters and a public extra output (`router512`, same twin); a residual block, a
three-way fan-out and a 16-op chain of channels, each trained with a plain forward and backward
per step; the residual block under two alternating configurations, activation recompute (a
no-grad forward before each grad forward) and a grad-requirement flip (the input requires grad
every other call), which make the fuser switch fusion configurations; and standalone calls of
two ops, each of which runs in a fuser of its own made for the call (its "caller-routed" twin
is the same; `standalone-public`: the same with an op that returns a public extra output). `public1`: a small block with one fresh public extra output; `inplace`: the
residual block with an in-place add (on a channel, or into the caller's extra input); the
`-nograd` variants run the forward only, with autograd off.

Run with the python of a venv that has TE installed. Prints one JSON object:
{model: {"channels": seconds_per_step, "caller": seconds_per_step}} (medians over
`--repeats` timed blocks of `--steps` steps, channel and caller blocks interleaved).

Small shapes, so Python overhead dominates. `te-series bench` runs this in a patched and
an unpatched venv, interleaved, and reports ratios.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import statistics
import subprocess
import tempfile
import time

import torch  # before transformer_engine
import transformer_engine.pytorch.ops as te_ops


def residual(device, size):
    """MakeExtraOutput, Bias, ConstantScale, AddExtraInput."""

    def ops():
        return (
            te_ops.MakeExtraOutput(),
            te_ops.Bias(size, device=device),
            te_ops.ConstantScale(0.5),
            te_ops.AddExtraInput(),
        )

    make, bias, scale, add = ops()
    make.set_extra_output_channel(0, "residual", output_to_caller=False)
    add.set_extra_input_channel(0, "residual")
    channels = te_ops.Sequential(make, bias, scale, add)

    make, bias, scale, add = ops()
    head, tail = te_ops.Sequential(make, bias, scale), te_ops.Sequential(add)

    def caller(x):
        h, r = head(x)
        return tail(h, r)

    return channels, caller


def fanout(device, size, n=3):
    """One producer, three ConstantScale+AddExtraInput consumers."""

    def ops():
        out = [te_ops.MakeExtraOutput()]
        for _ in range(n):
            out += [te_ops.ConstantScale(0.5), te_ops.AddExtraInput()]
        return out

    seq = ops()
    seq[0].set_extra_output_channel(0, "r", output_to_caller=False)
    for op in seq[2::2]:
        op.set_extra_input_channel(0, "r")
    channels = te_ops.Sequential(*seq)

    seq = ops()
    head = te_ops.Sequential(seq[0])
    tail = te_ops.Sequential(*seq[1:])

    def caller(x):
        h, r = head(x)
        return tail(h, *([r] * n))

    return channels, caller


def chain16(device, size, n=8):
    """Eight nested residuals: 8 producers then 8 consumers, 8 channels."""
    del device, size

    def ops():
        return [te_ops.MakeExtraOutput() for _ in range(n)], [
            te_ops.AddExtraInput() for _ in range(n)
        ]

    makes, adds = ops()
    for i, op in enumerate(makes):
        op.set_extra_output_channel(0, f"c{i}", output_to_caller=False)
    for i, op in enumerate(adds):
        op.set_extra_input_channel(0, f"c{n - 1 - i}")
    channels = te_ops.Sequential(*makes, *adds)

    makes, adds = ops()
    head, tail = te_ops.Sequential(*makes), te_ops.Sequential(*adds)

    def caller(x):
        h, *rs = head(x)
        return tail(h, *reversed(rs))

    return channels, caller


def _twin_chains(device, size, n, second):
    """Two equal Sequentials of n ConstantScale and ``second`` pairs (no channels)."""

    def ops():
        out = []
        for _ in range(n):
            out += [te_ops.ConstantScale(0.5), second(size, device=device)]
        return out

    channels = te_ops.Sequential(*ops())
    caller = te_ops.Sequential(*ops())
    for a, b in zip(channels.parameters(), caller.parameters()):
        with torch.no_grad():
            b.copy_(a)
    return channels, caller


def plain16(device, size, n=8):
    """No channels: eight ConstantScale and Bias pairs. What every te.ops user pays."""
    return _twin_chains(device, size, n, te_ops.Bias)


class MulWeight(te_ops.BasicOperation):
    """y = x * w. Saves its input and frees it in backward, as TE's compute ops do."""

    def __init__(self, size, device):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(size, device=device))

    def op_forward(self, ctx, input_, **unused):
        ctx.save_for_backward(input_)
        return input_ * self.weight

    def op_backward(self, ctx, grad_output):
        (input_,) = ctx.saved_tensors
        grad_weight = (grad_output * input_).sum(dim=0)
        if not hasattr(input_, "_do_not_clear"):  # as clear_tensor_data does
            input_.data = torch.empty(0, device=input_.device)
        return grad_output * self.weight, (grad_weight,)


def saving16(device, size, n=8):
    """Ops that save tensors: eight ConstantScale and MulWeight pairs (no channels)."""
    return _twin_chains(device, size, n, MulWeight)


class Router(te_ops.BasicOperation):
    """Passes its input through, with fresh per-row scores as a public extra output.

    It holds 512 parameters, as a 128-expert GroupedLinear holds its weights and biases:
    what the fuser does per public extra output must not grow with them.
    """

    num_extra_outputs = 1

    def __init__(self, size, device, n=512):
        super().__init__()
        self.experts = torch.nn.ParameterList(
            torch.nn.Parameter(torch.rand(size, device=device)) for _ in range(n)
        )

    def op_forward(self, *args, **kwargs):
        raise RuntimeError("Router uses fuser_forward")

    def op_backward(self, *args, **kwargs):
        raise RuntimeError("Router uses fuser_backward")

    def fuser_forward(self, basic_op_ctxs, input_, **unused):
        return input_, [(input_.detach().mean(dim=-1),)]

    def fuser_backward(self, basic_op_ctxs, grad_output, **unused):
        return grad_output, [(None,) * len(self.experts)], [()]


def router512(device, size):
    """A Router with 512 parameters and a public extra output, then a ConstantScale."""

    def make():
        model = te_ops.Sequential(Router(size, device), te_ops.ConstantScale(0.5))
        return lambda x: model(x)[0]

    return make(), make()


def public1(device, size):
    """Bias, MakeExtraOutput, ConstantScale: the Bias output is also a public extra output
    (discarded), so the fuser returns one fresh public extra output per step."""

    biases = [te_ops.Bias(size, device=device) for _ in range(2)]
    with torch.no_grad():
        biases[1].bias.copy_(biases[0].bias)
    models = [
        te_ops.Sequential(bias, te_ops.MakeExtraOutput(), te_ops.ConstantScale(0.5))
        for bias in biases
    ]
    return tuple((lambda x, model=model: model(x)[0]) for model in models)


def inplace(device, size):
    """The residual block with an in-place add, after a ConstantScale(1) (so the residual is
    not the caller's input, which the add would write on trees without the in-place fix): on
    a channel, which adds out of place, or into the caller's extra input, which it writes."""

    def ops():
        return (
            te_ops.ConstantScale(1.0),
            te_ops.MakeExtraOutput(),
            te_ops.Bias(size, device=device),
            te_ops.ConstantScale(0.5),
            te_ops.AddExtraInput(in_place=True),
        )

    first, make, bias, scale, add = ops()
    make.set_extra_output_channel(0, "residual", output_to_caller=False)
    add.set_extra_input_channel(0, "residual")
    channels = te_ops.Sequential(first, make, bias, scale, add)

    first, make, bias, scale, add = ops()
    head, tail = te_ops.Sequential(first, make, bias, scale), te_ops.Sequential(add)

    def caller(x):
        h, r = head(x)
        return tail(h, r)

    return channels, caller


def nodes8(device, size, n=8):
    """Eight fusers in a row, each a ConstantScale and MulWeight pair: eight autograd nodes
    whose ops save tensors, so each backward asks eight times whether the graph is kept."""

    def make():
        return torch.nn.Sequential(
            *(
                te_ops.Sequential(te_ops.ConstantScale(0.5), MulWeight(size, device))
                for _ in range(n)
            )
        )

    channels, caller = make(), make()
    for a, b in zip(channels.parameters(), caller.parameters()):
        with torch.no_grad():
            b.copy_(a)
    return channels, caller


def standalone(device, size):
    """Standalone calls, op(x), of a ConstantScale and a Bias: a transient fuser per call."""

    def make():
        scale, bias = te_ops.ConstantScale(0.5), te_ops.Bias(size, device=device)
        return lambda x: bias(scale(x))

    return make(), make()


def standalone_public(device, size):
    """Standalone calls, op(x), of an op with a public extra output and a Bias."""

    def make():
        make_extra, bias = te_ops.MakeExtraOutput(), te_ops.Bias(size, device=device)

        def fn(x):
            y, extra = make_extra(x)
            return bias(y) + extra

        return fn

    return make(), make()


def train_step(fn, x, dy):
    """Forward and backward."""
    fn(x).backward(dy)


def recompute_step(fn, x, dy):
    """Full activation recompute: a no-grad forward, then a grad forward and backward."""
    with torch.no_grad():
        fn(x)
    fn(x).backward(dy)


def no_grad_step(fn, x, dy):  # pylint: disable=unused-argument
    """Forward with autograd off (inference, or the first forward of activation recompute)."""
    with torch.no_grad():
        fn(x)


def grad_flip_step(fn, x, dy):
    """Two steps, the input requiring grad in one and not in the other.

    The first op that needs backward changes between the two calls, so the fuser switches
    fusion configurations each call.
    """
    fn(x).backward(dy)
    fn(x.detach()).backward(dy)


# name: (model, step). The alternating-configuration models run the residual block.
MODELS = {
    "plain16": (plain16, train_step),
    "residual": (residual, train_step),
    "fanout3": (fanout, train_step),
    "chain16": (chain16, train_step),
    "recompute": (residual, recompute_step),
    "gradflip": (residual, grad_flip_step),
    "standalone": (standalone, train_step),
    "standalone-public": (standalone_public, train_step),
    "saving16": (saving16, train_step),
    "router512": (router512, train_step),
    "nodes8": (nodes8, train_step),
    "public1": (public1, train_step),
    "public1-nograd": (public1, no_grad_step),
    "residual-nograd": (residual, no_grad_step),
    "inplace": (inplace, train_step),
    "inplace-nograd": (inplace, no_grad_step),
}


def selected(args) -> dict:
    """The models that --models names (all by default)."""
    if not args.models:
        return MODELS
    names = args.models.split(",")
    unknown = sorted(set(names) - set(MODELS))
    if unknown:
        raise SystemExit(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    return {name: MODELS[name] for name in names}


def timed(fn, step, x, dy, steps, sync, clock):
    start = clock()
    for _ in range(steps):
        step(fn, x, dy)
    sync()
    return (clock() - start) / steps


CALLGRIND_CLIENT = r"""
#include <valgrind/callgrind.h>
void te_series_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void te_series_zero(void) { CALLGRIND_ZERO_STATS; }
void te_series_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
"""


def callgrind_client() -> ctypes.CDLL:
    """Callgrind's client requests (start instrumentation, zero, dump), from C."""
    tmp = tempfile.mkdtemp(prefix="te-series-cg-")
    src, lib = os.path.join(tmp, "cg.c"), os.path.join(tmp, "cg.so")
    with open(src, "w", encoding="utf-8") as f:
        f.write(CALLGRIND_CLIENT)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", lib, src], check=True)
    return ctypes.CDLL(lib)


def count_instructions(args, device) -> None:
    """Run under callgrind: one dump of `steps` steps per model and routing.

    Instruction counts do not depend on what else the machine is doing, so one run per
    build gives stable ratios where timings are too noisy. The driver reads the dumps.
    """
    torch.set_num_threads(1)
    cg = callgrind_client()
    runs = []
    for name, (make, step) in selected(args).items():
        channels, caller = make(device, args.size)
        x = torch.rand((8, args.size), device=device, requires_grad=True)
        dy = torch.rand((8, args.size), device=device)
        torch.testing.assert_close(channels(x), caller(x))
        for routing, fn in (("channels", channels), ("caller", caller)):
            for _ in range(5):  # warm-up
                step(fn, x, dy)
            runs.append((f"{name}:{routing}", fn, step, x, dy))
    cg.te_series_start()
    for label, fn, step, x, dy in runs:
        # As timeit does: no cyclic GC in the measured steps, whose collections would
        # depend on everything the process allocated before
        gc.collect()
        gc.disable()
        cg.te_series_zero()
        for _ in range(args.steps):
            step(fn, x, dy)
        cg.te_series_dump(label.encode())
        gc.enable()
    print(json.dumps({"steps": args.steps, "labels": [run[0] for run in runs]}))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--models", default="", help="comma-separated model names (default: all)")
    p.add_argument(
        "--instructions",
        action="store_true",
        help="under `valgrind --tool=callgrind --instr-atstart=no`: dump instruction counts",
    )
    args = p.parse_args()
    if args.instructions:
        count_instructions(args, torch.device("cpu"))
        return
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    # On CPU tensors the step is Python and small-tensor work on this thread: run it on one
    # thread (no idle intra-op workers spinning) and count this thread's CPU time, which
    # other processes on the machine disturb far less than wall time. CUDA steps need wall
    # time.
    if device.type == "cpu":
        torch.set_num_threads(1)
    clock = time.perf_counter if device.type == "cuda" else time.thread_time
    torch.manual_seed(0)
    out = {}
    for name, (make, step) in selected(args).items():
        channels, caller = make(device, args.size)
        x = torch.rand((8, args.size), device=device, requires_grad=True)
        dy = torch.rand((8, args.size), device=device)
        # Same results before timing
        torch.testing.assert_close(channels(x), caller(x))
        for fn in (channels, caller):
            timed(fn, step, x, dy, max(args.steps // 4, 5), sync, clock)  # warm-up
        times = {"channels": [], "caller": []}
        for _ in range(args.repeats):
            times["channels"].append(timed(channels, step, x, dy, args.steps, sync, clock))
            times["caller"].append(timed(caller, step, x, dy, args.steps, sync, clock))
        out[name] = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
