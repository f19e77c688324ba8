"""Python bytecodes executed per training step of bench/channels_bench.py's models.

Counts `sys.settrace` opcode events over 5 steps after 3 warm-up steps (CPU, 8 x 64 fp32,
channel-routed), which, unlike instruction counts, do not move with string hashing or code
layout. The backward runs on the calling thread on CPU, so it is counted too. Run with the
tree to measure first on PYTHONPATH. Prints JSON: {model: bytecodes per step}.
"""

import json
import os
import sys

import torch  # before transformer_engine

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import channels_bench as cb  # pylint: disable=wrong-import-position


def count(name, steps=5):
    make, step = cb.MODELS[name]
    channels, _ = make("cpu", 64)
    x = torch.rand(8, 64, requires_grad=True)
    dy = torch.rand(8, 64)
    for _ in range(3):
        step(channels, x, dy)
    n = 0

    def tracer(frame, event, arg):
        nonlocal n
        frame.f_trace_opcodes = True
        if event == "opcode":
            n += 1
        return tracer

    sys.settrace(tracer)
    for _ in range(steps):
        step(channels, x, dy)
    sys.settrace(None)
    return n / steps


print(json.dumps({m: count(m) for m in cb.MODELS}))
