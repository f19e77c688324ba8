"""pytest plugin: import TE's tests/pytorch/test_fusible_ops.py on a machine without a GPU.

The module asks for FP8 support and CUDA RNG state at import time. Answer "unavailable"
and use the CPU RNG instead, so that CPU-only classes such as TestExtraTensorChannels run.
CUDA-only tests in that file still skip (or fail to find a device) as they would anyway.

Use: python -m pytest -p te_series.cpu_shim fork/tests/pytorch/test_fusible_ops.py -k Channels
"""

from __future__ import annotations

import torch

if not torch.cuda.is_available():
    import transformer_engine.pytorch as te

    def _unavailable(return_reason: bool = False):
        return (False, "no CUDA device") if return_reason else False

    for _name in (
        "is_fp8_available",
        "is_mxfp8_available",
        "is_nvfp4_available",
        "is_fp8_block_scaling_available",
        "is_bf16_available",
    ):
        if hasattr(te, _name):
            setattr(te, _name, _unavailable)
    torch.cuda.get_rng_state = lambda *a, **k: torch.get_rng_state()
    torch.cuda.set_rng_state = lambda *a, **k: None
    torch.cuda.manual_seed = lambda *a, **k: None
