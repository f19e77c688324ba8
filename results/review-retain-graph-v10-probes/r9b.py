from prelude import *
m = te_ops.Sequential(te_ops.Linear(8, 8, bias=False, device="cpu"), te_ops.ConstantScale(0.5))
fuser = m._make_module_groups(m._modules.values())[0] if hasattr(m, "_make_module_groups") else None
x = torch.rand(2, 8, requires_grad=True)
fuser.maybe_fuse_ops(True, None, x, [[] for _ in fuser._basic_ops])
print([type(o).__name__ for o in fuser._basic_ops], [(type(op).__name__, op._supports_backward_replay) for op, _ in fuser._backward_ops])
