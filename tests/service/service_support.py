"""The service's parts without a broker: a stand-in link, a settable clock, a worker.

Unit tests only: the link's own behaviour is tested against a fake paho client in
``test_link.py``, and the whole service against a real Mosquitto in tests/integration.
Here the worker runs with a real engine and a real evidence log; only the link (the
queue, acknowledgements, publishes) is a recording stand-in, so a test can drive the
worker's batches and timers one step at a time.
"""

from __future__ import annotations

import json
import queue
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from live_support import whole_topic

from kent_ops.core.engine import Clock
from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics
from kent_ops.evidence.log import EvidenceLog
from kent_ops.evidence.system import Started
from kent_ops.service.link import Item
from kent_ops.service.rhythm import Timing
from kent_ops.service.storage_outage import StorageOutage
from kent_ops.service.worker import Rebuilt, Worker, rebuild

T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
PERMIT_SHA = "ab" * 32


class HandClock:
    """A wall clock the test moves by hand."""

    def __init__(self, start: datetime = T0) -> None:
        self.t = start

    def __call__(self) -> datetime:
        return self.t

    def at(self, seconds: float) -> datetime:
        self.t = T0 + timedelta(seconds=seconds)
        return self.t


@dataclass
class FakeLink:
    """What the worker needs of :class:`kent_ops.service.link.Link`, recorded."""

    topics: Topics
    now: HandClock
    queue: queue.SimpleQueue[Item] = field(default_factory=queue.SimpleQueue)
    connected: threading.Event = field(default_factory=threading.Event)
    accepting: bool = True
    waiting: bool = False
    """Pretend a message waits in paho's queue: the engine's time may not pass."""
    published: list[tuple[str, bytes]] = field(default_factory=list)
    acked: list[tuple[int, int]] = field(default_factory=list)

    def claim_now(self, busy: bool) -> datetime | None:
        if busy or self.waiting or not self.queue.empty():
            return None
        return self.now()

    def ack(self, acks: list[tuple[int, int]]) -> None:
        self.acked.extend(acks)

    def publish(self, topic: str, payload: bytes) -> None:
        self.published.append((topic, payload))

    def go_offline(self, settle: float = 0.0) -> None:
        self.connected.clear()

    def wake(self) -> None:
        pass

    def last(self, topic_end: str) -> dict[str, Any]:
        """The last payload published to a topic ending so."""
        return json.loads(next(p for t, p in reversed(self.published) if t.endswith(topic_end)))


def open_worker(
    path: Path, permit: Permit, clock: Clock, now: HandClock, timing: Timing | None = None
) -> tuple[Worker, FakeLink]:
    """Open (or continue) the log, rebuild, and make the first commit, as start() does."""
    timing = timing or Timing()
    evidence = EvidenceLog.open(path, event_id=permit.event_id, permit_sha256=PERMIT_SHA)
    topics = Topics(permit.event_id)
    outage = StorageOutage(timing, path, now=now, probe=lambda: None)

    def rebuild_engine() -> Rebuilt:
        return rebuild(permit, path, clock, topics, outage)

    link = FakeLink(topics, now)
    worker = Worker(
        rebuild_engine(),
        evidence,
        link,  # type: ignore[arg-type]
        clock=clock,
        timing=timing,
        outage=outage,
        rebuild_engine=rebuild_engine,
        now=now,
        stopping=threading.Event(),
        stopped=threading.Event(),
    )
    worker.begin(Started(clock=clock))
    return worker, link


def message(topic: str, payload: bytes, at: datetime, mid: int = 0) -> Item:
    """A queued message as the link stamps it (generation 1); ``payload`` from wire_support."""
    return (whole_topic(topic), payload, at, 1, mid)
