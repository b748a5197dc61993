"""What every device kind does, checked once for all of them (one row per kind).

A new kind in :data:`kent_ops.core.sensor_kinds.SENSOR_KINDS` gets a row in
:data:`DEVICES` and passes these, or the first test says it has no row: it announces
itself online (retained, its last will the same topic), publishes its readings on the
topic :class:`Topics` gives its kind as its kind's wire Struct, says offline when
closed, and its command answers ``--help``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest

from kent_ops.core.sensor_kinds import GATE, LOT, SENSOR_KINDS, STATION, SensorKind
from kent_ops.core.wire import Topics
from sensors.badge_reader import BadgeReader
from sensors.device import MemoryLink, Sent
from sensors.gate_counter import GateCounter
from sensors.lot_sensor import LotSensor

EVENT = "kent-summer-fest-2027"
TOPICS = Topics(EVENT)


@dataclass(frozen=True)
class Device:
    """One device kind: how to make one, make it read once, and its command's module."""

    kind: SensorKind
    sensor: str
    make: Callable[[], Any]
    read: Callable[[Any], object]
    module: str


DEVICES = [
    Device(GATE, "north", lambda: GateCounter(EVENT, "north"),
           lambda d: d.count(entered=2, exited=1), "sensors.gate_counter"),
    Device(LOT, "lot-a", lambda: LotSensor(EVENT, "lot-a"),
           lambda d: d.arrive(), "sensors.lot_sensor"),
    Device(STATION, "first-aid", lambda: BadgeReader(EVENT, "first-aid"),
           lambda d: d.scan("RN-0042", "nurse", "on"), "sensors.badge_reader"),
]  # fmt: skip


@pytest.fixture(params=DEVICES, ids=lambda d: d.kind.name)
def device(request: pytest.FixtureRequest) -> Device:
    return request.param


def _attached(spec: Device) -> tuple[Any, MemoryLink]:
    made = spec.make()
    link = MemoryLink(will_topic=made.availability_topic)
    made.attach(link)
    return made, link


def test_every_kind_has_a_device_here() -> None:
    assert {d.kind.name for d in DEVICES} == {k.name for k in SENSOR_KINDS}


def test_it_announces_itself_online_retained_on_its_will_topic(device: Device) -> None:
    made, link = _attached(device)
    assert made.availability_topic == TOPICS.availability(device.sensor)
    assert link.will_topic == made.availability_topic
    assert link.drain()[0] == Sent(TOPICS.availability(device.sensor), b"online", True)


def test_its_readings_are_its_kinds_struct_on_its_kinds_topic(device: Device) -> None:
    made, link = _attached(device)
    link.drain()
    device.read(made)
    device.read(made)
    sent = link.drain()
    assert sent, "reading once sent nothing"
    assert {(s.topic, s.retain) for s in sent} == {
        (TOPICS.reading(device.kind, device.sensor), False)
    }
    records = [msgspec.json.decode(s.payload, type=device.kind.payload) for s in sent]
    assert all(device.kind.check(r) is None for r in records), records
    seqs = [r.seq for r in records]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)
    # The Struct round-trips: what the device wrote is what the wire contract reads.
    again = msgspec.json.decode(msgspec.json.encode(records[-1]), type=device.kind.payload)
    assert again == records[-1]


def test_it_says_offline_retained_when_closed(device: Device) -> None:
    made, link = _attached(device)
    made.close()
    assert link.drain()[-1] == Sent(TOPICS.availability(device.sensor), b"offline", True)


def test_its_command_answers_help(device: Device) -> None:
    done = subprocess.run(
        [sys.executable, "-m", device.module, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "--broker" in done.stdout or "usage" in done.stdout.lower()
