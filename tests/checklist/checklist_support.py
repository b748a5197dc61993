"""Shared pieces of the checklist tests: a permit copy, real MQTT clients, a real aggregator.

Everything is real: the permit file is written to ``tmp_path`` and loaded, the broker
is the ``broker`` fixture's Mosquitto, the clients are paho's, and the aggregator is
:class:`kent_ops.service.aggregator.Aggregator` running in its own threads.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Literal

from live_support import FAST, T0, TOPICS, Watcher, ts
from live_support import write_permit as write_any_permit
from wire_support import inspection

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core import wire
from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit
from kent_ops.service.aggregator import Aggregator

WINDOW_END = datetime(2027, 7, 5, 3, 30, tzinfo=UTC)  # 23:30 in Kent

write_permit = partial(write_any_permit, security_guards=0)
"""The example permit with quick alerting, no security roster, and chosen facilities."""


def engine_status(
    permit: Permit, marks: list[tuple[str, str, str, str, float]]
) -> tuple[wire.Status, list[wire.Alert]]:
    """A real engine's status and alerts after ``(who, item, result, note, seconds)`` marks."""
    engine = Engine(permit, clock="sensor")
    for who, item, result, note, seconds in marks:
        mark = inspection(ts(seconds), item, result, note)
        at = T0 + timedelta(seconds=seconds)
        r = engine.feed(TOPICS.inspector(who, "inspection"), mark, at)
        assert r.accepted, r.reason
    engine.collect_changes()
    return engine.status(), list(engine.alerts.values())


@contextmanager
def running_aggregator(
    permit: Permit,
    evidence: Path,
    broker: MosquittoBroker,
    watcher: Watcher,
    clock: Literal["wall", "sensor"] = "sensor",
) -> Iterator[Aggregator]:
    """A real aggregator, serving once it says it is online; stopped cleanly after."""
    watcher.forget(TOPICS.aggregator_availability)
    agg = Aggregator(permit, evidence, parse_broker_url(broker.url), clock=clock, timing=FAST)
    agg.start()
    try:
        watcher.wait_for(TOPICS.aggregator_availability, lambda b: b == b"online")
        yield agg
    finally:
        agg.stop()
        assert agg.wait(20), "the aggregator did not stop"
    assert agg.failure is None
