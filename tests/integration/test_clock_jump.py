"""The aggregator's host clock moved under it, with ``--clock wall`` and a real Mosquitto.

The service takes its wall clock as a callable; here it is the real clock plus an offset
the test moves, as a person or a bad NTP server would move the host's. The service keeps
a steady clock of its own, so:

- set back 10 minutes, a pending alert still matures after ``pending_s`` and a silent
  gate is still marked offline: no rule freezes;
- set forward an hour and then corrected, the engine's time (the status's ``ts``) is
  where the real time is, not an hour ahead;
- each jump is recorded in the evidence log and raised as a ``clock-jump`` alert, which
  ends when the host clock agrees again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from live_support import FAST, TOPICS, Publisher, Watcher, permit_text, wait_until
from security_support import system_events
from wire_support import gate_count

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import load_permit
from kent_ops.evidence.log import verify
from kent_ops.service.aggregator import Aggregator

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


class MovableWall:
    """The real wall clock plus an offset the test sets."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


@pytest.fixture
def wall() -> MovableWall:
    return MovableWall()


@pytest.fixture
def aggregator(tmp_path: Path, broker: MosquittoBroker, wall: MovableWall) -> Iterator[Aggregator]:
    path = tmp_path / "permit.toml"
    text = permit_text(gates=("north", "south"), window_now=True, pending_s=2, stale_after_s=3)
    path.write_text(text)
    agg = Aggregator(
        load_permit(path),
        tmp_path / "evidence.sqlite",
        parse_broker_url(broker.url),
        "wall",
        timing=FAST,
        now=wall,
    )
    agg.start()
    assert agg.connected.wait(15)
    yield agg
    agg.stop()
    assert agg.wait(30)
    assert agg.failure is None


def gate(publisher: Publisher, name: str, seq: int, entries: int) -> None:
    """A reading stamped with the real time, as a counter on NTP would send it."""
    publisher.send(TOPICS.gate_count(name), gate_count(seq, datetime.now(UTC), entries))


def status_time(status: dict[str, object]) -> datetime:
    return datetime.fromisoformat(str(status["ts"]))


def active(watcher: Watcher, rule: str) -> dict[str, object] | None:
    found = [a for a in watcher.alerts().values() if a["rule"] == rule]
    return next((a for a in found if a["state"] == "active"), None)


def test_a_clock_set_back_freezes_no_rule(
    aggregator: Aggregator, wall: MovableWall, watcher: Watcher, publisher: Publisher
) -> None:
    gate(publisher, "north", 1, 5000)  # above the permit's 4,000: pending for 2 s
    gate(publisher, "south", 1, 10)
    watcher.status(lambda s: s["attendance"]["current"] == 5010)
    wall.offset = timedelta(minutes=-10)
    status = watcher.status(
        lambda s: (
            active(watcher, "max-at-one-time") is not None and not s["sensors"]["north"]["online"]
        ),
        timeout=20,
    )
    assert abs((status_time(status) - datetime.now(UTC)).total_seconds()) < 60
    jump = json.loads(watcher.wait_for(TOPICS.alert("S-0001")))
    assert jump["rule"] == "clock-jump"
    assert jump["state"] == "active"
    assert round(jump["observed"]["jump_s"]) == -600
    evidence = aggregator.evidence_path
    jumps = [e for e in system_events(evidence) if e["event"] == "clock-jump"]
    assert len(jumps) == 1
    assert round(jumps[0]["jump_s"]) == -600
    assert verify(evidence).ok


def test_a_clock_set_forward_and_corrected_leaves_the_engine_on_time(
    aggregator: Aggregator, wall: MovableWall, watcher: Watcher, publisher: Publisher
) -> None:
    gate(publisher, "north", 1, 100)
    watcher.status(lambda s: s["attendance"]["current"] == 100)
    wall.offset = timedelta(hours=1)
    wait_until(
        lambda: TOPICS.alert("S-0001") in watcher.latest or ahead(watcher) > 1800,
        15,
        "the service to notice the jump (or follow it)",
    )
    wall.offset = timedelta(0)
    gate(publisher, "north", 2, 150)
    watcher.status(lambda s: s["attendance"]["current"] == 150)
    assert ahead(watcher) < 60, f"the engine is {ahead(watcher):.0f} s ahead"
    ended = json.loads(
        watcher.wait_for(TOPICS.alert("S-0001"), lambda b: json.loads(b)["ended_at"], timeout=15)
    )
    assert ended["rule"] == "clock-jump"
    assert ended["observed"]["agrees"] is True
    events = [e["event"] for e in system_events(aggregator.evidence_path)]
    assert events.count("clock-jump") == 1
    assert events.count("clock-agrees") == 1


def ahead(watcher: Watcher) -> float:
    """How far the last status's time is ahead of the real time, in seconds."""
    return (status_time(watcher.statuses[-1]) - datetime.now(UTC)).total_seconds()
