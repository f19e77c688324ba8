"""Instruction-count variant: N normal forward+backward steps of a small pipeline (run under
perf stat; compare steps=N and steps=0 to subtract import cost)."""
import sys, torch
import transformer_engine.pytorch as te
import transformer_engine.pytorch.ops as te_ops
m = te_ops.Sequential(*[op for _ in range(4) for op in (te_ops.Bias(16, device="cpu"), te_ops.ConstantScale(0.5), te_ops.Identity())])
x = torch.rand(4, 16, requires_grad=True)
m(x).sum().backward()
for _ in range(int(sys.argv[1])):
    m(x).sum().backward()
