"""GroupedLinear with a DistributedWeight (finalize_group_grads reduce-scatters into main_grad,
which autograd does not see) and accumulate_into_main_grad=False: does _backward_replay_error
name a reason, as it does for accumulate_into_main_grad=True?"""
import torch, _common as c
from transformer_engine.pytorch.ops.op import OperationContext
for accumulate in (True, False):
    op = c.te_ops.GroupedLinear(2, 16, 16, bias=False, device="meta",
                                accumulate_into_main_grad=accumulate)
    for i in range(2):
        getattr(op, f"weight{i}").is_distributed_weight = True  # as a GTP implementer sets
    ctx = OperationContext(); ctx.weight_requires_grad = True
    print(f"accumulate_into_main_grad={accumulate}: dist={op._is_distributed_weight()} "
          f"_backward_replay_error -> {op._backward_replay_error(ctx)!r}")
