"""What a correct aggregator should conclude from sensor traffic: an independent tally.

Tests of the engine, the demo and the reports need the right answers for a simulated
day without trusting the engine to compute them. :class:`Tally` applies the counting
rules of docs/protocol.md (Counting; What is rejected) to raw messages, written
separately from ``kent_ops.core.counting`` so the two can check each other:

- a message for a sensor the permit does not list, bad JSON, a field of the wrong type,
  a negative count or a payload over 64 KiB is rejected and changes nothing;
- a message seen before, in its fields (of any run of the device), changes nothing;
- a ``seq`` further ahead than the device could have sent (at least 1,000, and more
  than 10 a second of the time between the two messages' ``ts``) is rejected;
- a ``seq`` back at 0 or 1, or at a number the current run used for another message,
  or below where the run was first seen, is a new run of the device: for a gate only
  with totals that fell (none rose, above 1), else it is an older message;
- totals that fall while ``seq`` rises are a restart that kept its ``seq``; every
  restart keeps the totals before it and adds the new ones (stitched);
- a roster names who is on duty at its station: whoever went on there and is not in
  it is off;
- attendance = sum over gates of (in_total - out_total); entries = sum of in_total.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from kent_ops.core.permit import Permit
from kent_ops.core.sensor_kinds import GATE, LOT, SENSOR_KINDS, STATION
from kent_ops.core.wire import (
    MAX_PAYLOAD_BYTES,
    ROLES,
    TopicRef,
    Topics,
    decode_sensor_availability,
)

__all__ = ["GateTally", "Tally", "expected_totals"]

_LISTED_AS = {m.record: kind.name for kind in SENSOR_KINDS for m in kind.messages}
"""A sensor topic's kind -> the kind of sensor the permit must list its id as."""


class _Message(Protocol):
    topic: str
    payload: bytes


@dataclass(slots=True)
class Runs:
    """One device's messages as its ``seq`` tells them: every message seen, the current
    run's numbers, its last ``seq`` and when it was sent."""

    seen: set[tuple[Any, ...]] = field(default_factory=set)
    run: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    last: int | None = None
    last_ts: datetime | None = None

    def judge(self, seq: int, key: tuple[Any, ...], ts: datetime) -> str:
        """``repeat``, ``implausible``, ``ahead`` or ``back`` (then :meth:`new_run` says)."""
        if self.last is None:
            return "ahead"
        if key in self.seen:
            return "repeat"
        if seq > self.last:
            jump = seq - self.last
            since = (ts - (self.last_ts or ts)).total_seconds()
            return "implausible" if jump >= 1000 and jump > 10 * since else "ahead"
        return "back"

    def new_run(self, seq: int, key: tuple[Any, ...]) -> bool:
        """An older ``seq`` is a new run if the run used it for another message, or it is
        below where the run was first seen."""
        used = self.run.get(seq)
        return (used is not None and used != key) or (bool(self.run) and seq < min(self.run))

    def take(self, seq: int, key: tuple[Any, ...], ts: datetime, *, restart: bool) -> None:
        if restart:
            self.run = {}
        self.seen.add(key)
        self.run[seq] = key
        self.last = seq
        self.last_ts = ts


@dataclass(slots=True)
class GateTally:
    """One gate's totals, stitched across device restarts."""

    device_in: int = 0
    device_out: int = 0
    base_in: int = 0
    base_out: int = 0
    restarts: int = 0
    runs: Runs = field(default_factory=Runs)

    @property
    def last_seq(self) -> int | None:
        return self.runs.last

    @property
    def in_total(self) -> int:
        return self.base_in + self.device_in

    @property
    def out_total(self) -> int:
        return self.base_out + self.device_out

    def apply(self, seq: int, in_total: int, out_total: int, ts: datetime) -> str:
        """``counted``, ``restart``, ``duplicate`` or ``rejected``."""
        key = (seq, in_total, out_total, ts)
        verdict = self.runs.judge(seq, key, ts)
        if verdict == "repeat":
            return "duplicate"
        if verdict == "implausible":
            return "rejected"
        fell = in_total < self.device_in or out_total < self.device_out
        rose = in_total > self.device_in or out_total > self.device_out
        last = self.runs.last
        restart = fell and last is not None
        if verdict == "back":
            assert last is not None
            earlier = seq <= 1 and seq < last
            restart = fell and (earlier or (self.runs.new_run(seq, key) and not rose))
            if not restart:
                return "duplicate"
        if restart:
            self.base_in += self.device_in
            self.base_out += self.device_out
            self.restarts += 1
        self.runs.take(seq, key, ts, restart=restart)
        self.device_in = in_total
        self.device_out = out_total
        return "restart" if restart else "counted"


@dataclass
class Tally:
    """Feeds on raw messages and keeps the figures docs/protocol.md says they imply."""

    permit: Permit
    gates: dict[str, GateTally] = field(default_factory=dict)
    lots: dict[str, int] = field(default_factory=dict)
    on_duty: dict[str, str] = field(default_factory=dict)  # badge -> role
    online: dict[str, bool] = field(default_factory=dict)
    rejected: int = 0
    duplicates: int = 0
    station_of: dict[str, str] = field(default_factory=dict)  # badge -> where it went on
    _runs: dict[str, Runs] = field(default_factory=dict)
    """Per lot or station, the messages its ``seq`` told apart."""
    _topics: Topics = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._topics = Topics(self.permit.event_id)

    @property
    def attendance(self) -> int:
        return sum(g.in_total - g.out_total for g in self.gates.values())

    @property
    def entries(self) -> int:
        return sum(g.in_total for g in self.gates.values())

    @property
    def exits(self) -> int:
        return sum(g.out_total for g in self.gates.values())

    @property
    def restarts(self) -> int:
        return sum(g.restarts for g in self.gates.values())

    @property
    def cars(self) -> int:
        return sum(self.lots.values())

    def staff(self, role: str) -> int:
        """Staff of ``role`` on duty now."""
        return sum(1 for r in self.on_duty.values() if r == role)

    def feed(self, topic: str, payload: bytes) -> str:
        """Apply one message; returns what it did (``counted``, ``rejected``, …)."""
        if len(payload) > MAX_PAYLOAD_BYTES:
            return self._reject()
        ref = self._topics.parse(topic)
        if not isinstance(ref, TopicRef):
            return self._reject()
        kind, source = ref
        if kind == "availability":
            return self._availability(source, payload)
        listed_as = _LISTED_AS.get(kind)
        if listed_as is None or self.permit.sensors.get(source) != listed_as:
            return self._reject()
        fields = _fields(payload)
        if fields is None:
            return self._reject()
        return _READERS[kind](self, source, fields, payload)

    def _availability(self, source: str, payload: bytes) -> str:
        online = decode_sensor_availability(payload)  # as the aggregator takes it
        if source not in self.permit.sensors or online is None:
            return self._reject()
        self.online[source] = online
        return "counted"

    def _gate(self, source: str, fields: dict[str, Any], payload: bytes) -> str:
        if not (_count(fields, "in_total") and _count(fields, "out_total")):
            return self._reject()
        outcome = self.gates.setdefault(source, GateTally()).apply(
            fields["seq"],
            fields["in_total"],
            fields["out_total"],
            datetime.fromisoformat(fields["ts"]),
        )
        if outcome == "rejected":
            self.rejected += 1
        elif outcome == "duplicate":
            self.duplicates += 1
        return outcome

    def _lot(self, source: str, fields: dict[str, Any], payload: bytes) -> str:
        if not _count(fields, "occupied"):
            return self._reject()
        outcome = self._newer(source, fields, payload)
        if outcome == "counted":
            self.lots[source] = fields["occupied"]
        return outcome

    def _badge(self, source: str, fields: dict[str, Any], payload: bytes) -> str:
        badge, role, action = fields.get("badge"), fields.get("role"), fields.get("action")
        if not isinstance(badge, str) or not badge.strip() or role not in ROLES:
            return self._reject()
        if action not in ("on", "off"):
            return self._reject()
        outcome = self._newer(source, fields, payload)
        if outcome == "counted":
            self._scan(source, badge, role, action)
        return outcome

    def _scan(self, station: str, badge: str, role: str, action: str) -> None:
        if action == "on":
            self.on_duty[badge] = role
            self.station_of[badge] = station
        else:
            self.on_duty.pop(badge, None)
            self.station_of.pop(badge, None)

    def _roster(self, source: str, fields: dict[str, Any], payload: bytes) -> str:
        entries = fields.get("on_duty")
        if not isinstance(entries, list) or not all(
            isinstance(e, dict)
            and isinstance(e.get("badge"), str)
            and e["badge"].strip()
            and e.get("role") in ROLES
            for e in entries
        ):
            return self._reject()
        named = [e["badge"] for e in entries]
        if len(set(named)) != len(named):
            return self._reject()
        outcome = self._newer(source, fields, payload)
        if outcome == "counted":
            for badge in [b for b, s in self.station_of.items() if s == source]:
                if badge not in named:
                    self._scan(source, badge, "", "off")
            for e in entries:
                self._scan(source, e["badge"], e["role"], "on")
        return outcome

    def _newer(self, source: str, fields: dict[str, Any], payload: bytes) -> str:
        """A lot's or a station's message by its seq: ``counted`` (newer, or a restart),
        ``duplicate`` or ``rejected`` (an implausible jump)."""
        runs = self._runs.setdefault(source, Runs())
        seq, key = fields["seq"], (_canonical(payload),)
        ts = datetime.fromisoformat(fields["ts"])
        verdict = runs.judge(seq, key, ts)
        if verdict == "implausible":
            return self._reject()
        restart = False
        if verdict == "back":
            last = runs.last
            restart = runs.new_run(seq, key) or (last is not None and seq <= 1 < last)
        if verdict == "repeat" or (verdict == "back" and not restart):
            self.duplicates += 1
            return "duplicate"
        runs.take(seq, key, ts, restart=restart)
        return "counted"

    def _reject(self) -> str:
        self.rejected += 1
        return "rejected"


_READERS: dict[str, Callable[[Tally, str, dict[str, Any], bytes], str]] = {
    GATE.record: Tally._gate,
    LOT.record: Tally._lot,
    STATION.record: Tally._badge,
    "roster": Tally._roster,
}
"""Each kind of sensor's messages (core/sensor_kinds/table.py), by the kind of their topic."""


def _fields(payload: bytes) -> dict[str, Any] | None:
    """The decoded object if it has a valid ``seq`` and ``ts``, else None."""
    try:
        fields = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(fields, dict):
        return None
    seq = fields.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        return None
    ts = fields.get("ts")
    if not isinstance(ts, str):
        return None
    try:
        parsed = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return fields if parsed.tzinfo is not None else None


def _count(fields: dict[str, Any], name: str) -> bool:
    value = fields.get(name)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _canonical(payload: bytes) -> bytes:
    """The fields of a payload in one spelling, so a redelivery compares equal."""
    return json.dumps(json.loads(payload), sort_keys=True).encode()


def expected_totals(messages: Iterable[_Message], permit: Permit) -> dict[str, int]:
    """The attendance, entries and exits a correct aggregator ends with.

    Computed from the last accepted totals per gate, with restarts stitched, after
    feeding every message in order. Works on :class:`~sensors.scenario.SimMessage` and
    on anything else with ``topic`` and ``payload``.
    """
    tally = Tally(permit)
    for m in messages:
        tally.feed(m.topic, m.payload)
    return {"attendance": tally.attendance, "entries": tally.entries, "exits": tally.exits}
