"""Fixtures shared by every tier: the example permit and a real Mosquitto broker.

Hypothesis runs derandomized by default (profile ``ci``): each property test draws the
same examples on every run, so a red run can be repeated and a green one means the same
thing twice. ``HYPOTHESIS_PROFILE=dev`` draws fresh examples each run (and remembers
failing ones) to dig for new counterexamples; each test's own ``max_examples`` holds in
both, so the suite's time does not change.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from live_support import Publisher, Watcher

from kent_ops.broker.mosquitto import MosquittoBroker, mosquitto_binary
from kent_ops.core.permit import Permit, load_permit

ROOT = Path(__file__).resolve().parent.parent

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
EXAMPLE_PERMIT = ROOT / "examples" / "permit.toml"


@pytest.fixture
def example_permit_path() -> Path:
    return EXAMPLE_PERMIT


@pytest.fixture
def example_permit() -> Permit:
    return load_permit(EXAMPLE_PERMIT)


@pytest.fixture
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MosquittoBroker]:
    """A private Mosquitto on a free loopback port, with no-drop queue limits; stopped after."""
    if mosquitto_binary() is None:
        pytest.fail("integration tests need a mosquitto binary (scripts/test installs it)")
    b = MosquittoBroker(tmp_path_factory.mktemp("mosquitto"))
    b.start()
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture
def watcher(broker: MosquittoBroker) -> Iterator[Watcher]:
    """A real subscriber to everything under the example event's prefix."""
    w = Watcher(broker)
    yield w
    w.close()


@pytest.fixture
def publisher(broker: MosquittoBroker) -> Iterator[Publisher]:
    """A real QoS 1 publisher that waits for each PUBACK."""
    p = Publisher(broker)
    yield p
    p.close()
