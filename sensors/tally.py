"""What a correct aggregator should conclude from sensor traffic: an independent tally.

Tests of the engine, the demo and the reports need the right answers for a simulated
day without trusting the engine to compute them. :class:`Tally` applies the counting
rules of docs/protocol.md (Counting; What is rejected) to raw messages, written
separately from ``kent_ops.core.counting`` so the two can check each other:

- a message for a sensor the permit does not list, bad JSON, a field of the wrong type,
  a negative count or a payload over 64 KiB is rejected and changes nothing;
- a repeated or older ``seq`` changes nothing;
- a ``seq`` back at 0 or 1 with lower totals is a restart: the totals before it are
  kept and the new ones added (stitched), unless it repeats, byte for byte in its
  fields, a message that started the current run (a redelivery, not a restart);
- a gate message stamped before the counter's latest restart belongs to the earlier
  run: a redelivery, already counted;
- totals that fall without a restart are rejected;
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

_LISTED_AS = {kind.record: kind.name for kind in SENSOR_KINDS}
"""A sensor topic's kind -> the kind of sensor the permit must list its id as."""


class _Message(Protocol):
    topic: str
    payload: bytes


@dataclass(slots=True)
class GateTally:
    """One gate's totals, stitched across device restarts."""

    last_seq: int | None = None
    device_in: int = 0
    device_out: int = 0
    base_in: int = 0
    base_out: int = 0
    restarts: int = 0
    run_started: datetime | None = None
    first: set[tuple[Any, ...]] = field(default_factory=set)
    """The fields of the messages with seq 0 or 1 that started the current run."""

    @property
    def in_total(self) -> int:
        return self.base_in + self.device_in

    @property
    def out_total(self) -> int:
        return self.base_out + self.device_out

    def apply(self, seq: int, in_total: int, out_total: int, ts: datetime | None = None) -> str:
        """``counted``, ``restart``, ``duplicate`` or ``rejected``."""
        if ts is not None and self.run_started is not None and ts < self.run_started:
            return "duplicate"
        lower = in_total < self.device_in or out_total < self.device_out
        if self.last_seq is not None:
            if seq <= 1 and seq < self.last_seq and lower:
                if (seq, in_total, out_total, ts) in self.first:
                    return "duplicate"
                self.base_in += self.device_in
                self.base_out += self.device_out
                self.restarts += 1
                self.first = set()
                self.run_started = ts
                self._take(seq, in_total, out_total, ts)
                return "restart"
            if seq <= self.last_seq:
                return "duplicate"
            if lower:
                return "rejected"
        self._take(seq, in_total, out_total, ts)
        return "counted"

    def _take(self, seq: int, in_total: int, out_total: int, ts: datetime | None) -> None:
        if seq <= 1:
            self.first.add((seq, in_total, out_total, ts))
        self.last_seq = seq
        self.device_in = in_total
        self.device_out = out_total


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
    _lot_seq: dict[str, int] = field(default_factory=dict)
    _station_seq: dict[str, int] = field(default_factory=dict)
    _first: dict[str, set[bytes]] = field(default_factory=dict)
    """Per lot or station, the payloads with seq 0 or 1 that started its current run."""
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
        seq = fields["seq"]
        if not self._newer(source, self._lot_seq.get(source), seq, payload):
            self.duplicates += 1
            return "duplicate"
        self._lot_seq[source] = seq
        self.lots[source] = fields["occupied"]
        return "counted"

    def _badge(self, source: str, fields: dict[str, Any], payload: bytes) -> str:
        badge, role, action = fields.get("badge"), fields.get("role"), fields.get("action")
        if not isinstance(badge, str) or not badge.strip() or role not in ROLES:
            return self._reject()
        if action not in ("on", "off"):
            return self._reject()
        seq = fields["seq"]
        if not self._newer(source, self._station_seq.get(source), seq, payload):
            self.duplicates += 1
            return "duplicate"
        self._station_seq[source] = seq
        if action == "on":
            self.on_duty[badge] = role
        else:
            self.on_duty.pop(badge, None)
        return "counted"

    def _newer(self, source: str, last: int | None, seq: int, payload: bytes) -> bool:
        """A lot or station message counts if its seq is newer, or the device restarted.

        A seq of 0 or 1 below the last one is a restart, unless it is a redelivery of a
        message that started the current run.
        """
        first = self._first.setdefault(source, set())
        key = _canonical(payload)
        if last is not None and seq <= last:
            if not (seq <= 1 < last) or key in first:
                return False
            first.clear()
        if seq <= 1:
            first.add(key)
        return True

    def _reject(self) -> str:
        self.rejected += 1
        return "rejected"


_READERS: dict[str, Callable[[Tally, str, dict[str, Any], bytes], str]] = {
    GATE.record: Tally._gate,
    LOT.record: Tally._lot,
    STATION.record: Tally._badge,
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
