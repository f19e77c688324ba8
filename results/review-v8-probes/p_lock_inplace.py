import os, sys; sys.path.insert(0, os.environ.get("SHIM_DIR", "."))  # holds cpu_shim.py
import cpu_shim  # noqa
import torch, transformer_engine.pytorch.ops as te_ops
for rebind in (False, True):
    op = te_ops.MakeExtraOutput(in_place=True)
    op.set_extra_output_channel(0, "r")          # public, bound to a channel
    x = torch.rand(4, requires_grad=True)
    y, r = op(x)                                  # standalone call: bindings stay unlocked
    if rebind:
        op.set_extra_output_channel(0, None)      # allowed now, before backward
    dy, dr = torch.ones(4), torch.full((4,), 2.0)
    torch.autograd.backward((y, r), (dy, dr))
    print(f"rebind={rebind}: caller's dr after backward = {dr.tolist()}")
