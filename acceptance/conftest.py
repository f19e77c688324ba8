"""Acceptance suite: CPU tests of the installed Transformer Engine against the series' promises.

`torch` must be imported before `transformer_engine` (libnccl preload).
"""

import os

import torch  # noqa: F401  (import order matters)
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=400,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("TE_SERIES_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1234)
    yield
