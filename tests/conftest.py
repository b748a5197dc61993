"""Fixtures shared by every tier: the example permit and a real Mosquitto broker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from live_support import Publisher, Watcher

from kent_ops.broker.mosquitto import MosquittoBroker, mosquitto_binary
from kent_ops.core.permit import Permit, load_permit

ROOT = Path(__file__).resolve().parent.parent
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
