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


def _allowed_s(item: pytest.Item) -> float:
    """The test's own timeout (what its author allows it), or 0 when it has none."""
    mark = item.get_closest_marker("timeout")
    return float(mark.args[0]) if mark is not None and mark.args else 0.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with a slow test run first, the longest-allowed first, each kept whole.

    xdist hands tests out in this order: started early, a minute-long outage test runs
    beside the short ones instead of alone at the end while the other worker idles.
    A module stays in one piece, so its module-scoped fixtures (a browser, a served
    field) are still set up once per worker.
    """
    rank: dict[str, tuple[bool, float]] = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        slow, allowed = rank.get(module, (False, 0.0))
        if item.get_closest_marker("slow") is not None:
            slow, allowed = True, max(allowed, _allowed_s(item))
        rank[module] = (slow, allowed)
    items.sort(key=lambda item: _order(rank[item.nodeid.split("::")[0]]))


def _order(rank: tuple[bool, float]) -> tuple[bool, float]:
    slow, allowed = rank
    return (not slow, -allowed)
