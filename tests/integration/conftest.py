"""Fixtures of the integration tests that run ``kent-ops run`` as a real process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from runs_support import Runs

from kent_ops.broker.mosquitto import MosquittoBroker


@pytest.fixture
def runs(tmp_path: Path, broker: MosquittoBroker) -> Iterator[Runs]:
    """``kent-ops run`` on a two-gate permit and a log in ``tmp_path``; killed if left running."""
    r = Runs(tmp_path, broker)
    yield r
    r.stop_all()
