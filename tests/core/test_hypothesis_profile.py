"""The property tests repeat: hypothesis is derandomized unless a developer asks otherwise."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

CHOSEN_PROFILE = pytest.mark.skipif(
    os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci",
    reason="a developer chose another profile (HYPOTHESIS_PROFILE); CI never does",
)


@CHOSEN_PROFILE
def test_the_default_profile_is_derandomized() -> None:
    assert settings().derandomize is True
    assert settings().database is None


@CHOSEN_PROFILE
def test_a_property_test_draws_the_same_examples_on_every_run() -> None:
    """Two runs of one test in one process draw the same examples, as two CI runs do."""
    runs: list[list[int]] = []

    def run() -> None:
        drawn: list[int] = []

        @settings(max_examples=25)
        @given(st.integers(0, 10**9))
        def draw(n: int) -> None:
            drawn.append(n)

        draw()
        runs.append(drawn)

    run()
    run()
    assert runs[0] == runs[1]
    assert len(set(runs[0])) > 5
