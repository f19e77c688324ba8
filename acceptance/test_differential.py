"""Randomized differential test: random channel routings through TE vs plain PyTorch.

CI runs a fixed, derandomized example budget (profile "ci"); `te-series test --long` runs
the "long" profile. See differential.py for the ops, bindings and fusions drawn.
"""

import random

import pytest
from hypothesis import given, note, strategies as st

from differential import Draw, draw_case, run_case


class HypothesisDraw(Draw):
    """Draw from hypothesis, so that failing cases shrink."""

    def __init__(self, data) -> None:  # pylint: disable=super-init-not-called
        self.data = data

    def int(self, lo, hi):
        return self.data.draw(st.integers(lo, hi))

    def bool(self):
        return self.data.draw(st.booleans())


@given(st.data())
def test_channels_match_plain_pytorch(data):
    case = draw_case(HypothesisDraw(data))
    note(case.describe())
    run_case(case)


def test_broken_reference_is_caught():
    """The comparison can fail: a reference with a wrong AddExtraInput is always caught."""
    rng = random.Random(123)
    checked = 0
    while checked < 50:
        case = draw_case(Draw(rng), kinds=("make", "add", "scale", "bias", "fresh"))
        if "add" not in case.kinds:
            continue
        with pytest.raises(AssertionError):
            run_case(case, broken_reference=True)
        run_case(case)  # and the correct reference agrees
        checked += 1
