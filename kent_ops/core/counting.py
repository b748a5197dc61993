"""The counting state: gates, lots, the staff roster, adjustments and sensor liveness.

Everything here is incremental (each message moves a few integers) because the engine
applies hundreds of thousands of messages a second on replay. Times are whole
microseconds (see :mod:`kent_ops.core.timeutil`). Nothing here knows about rules or alerts.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from kent_ops.core.permit import Permit
from kent_ops.core.sensor_kinds import (
    GATE,
    LOT,
    STATION,
    Badge,
    GateCount,
    LotOccupancy,
    Reading,
    kind_of,
)
from kent_ops.core.timeutil import SECOND, to_us

__all__ = [
    "CARS_EXCEED",
    "CLAMPED",
    "Counting",
    "GateCounter",
    "GateOutcome",
    "LotSensor",
    "SensorLiveness",
    "StaffRoster",
    "cars_exceed_persons",
]

RATE_WINDOW_US = 60 * SECOND
CLAMPED = "attendance clamped at 0"
"""The doubt a clamp puts on attendance (the counts less an adjustment went below 0)."""
CARS_EXCEED = "cars exceed persons counted"
"""The doubt the lots put on attendance when they hold more cars than the gates count
persons, staff on duty added (:func:`cars_exceed_persons`)."""


def cars_exceed_persons(cars: int, persons: int, staff: int) -> bool:
    """More cars parked than persons counted plus staff on duty: every parked car brought
    at least one person, so a gate counter is missing entries (docs/law.md)."""
    return cars > persons + staff


class GateOutcome(NamedTuple):
    """What one gate message did: counted, ignored as a duplicate, stitched, or rejected."""

    effect: str  # counted | duplicate | restart | rejected
    reason: str | None = None


@dataclass(slots=True)
class GateCounter:
    """Cumulative totals from one gate counter, stitched across device restarts.

    ``base_*`` hold what earlier runs of the device counted; ``device_*`` the current
    run's totals. A repeated or older ``seq`` changes nothing (QoS 1 redelivers); a
    ``seq`` back at 0 or 1 with lower totals is a restart, unless it is a redelivery of
    this run's own first message (``run_start``); totals that fall otherwise are refused.
    """

    last_seq: int | None = None
    device_in: int = 0
    device_out: int = 0
    base_in: int = 0
    base_out: int = 0
    restarts: int = 0
    run_started: int = 0  # ts of the current run's first message, once it has restarted
    recent: deque[tuple[int, int]] = field(default_factory=deque)
    run_start: tuple[GateCount, ...] = ()

    @property
    def in_total(self) -> int:
        return self.base_in + self.device_in

    @property
    def out_total(self) -> int:
        return self.base_out + self.device_out

    @property
    def net(self) -> int:
        return self.in_total - self.out_total

    def apply(self, msg: GateCount, t: int) -> GateOutcome:
        last = self.last_seq
        if self.restarts and to_us(msg.ts) < self.run_started:
            # A redelivery from an earlier run of the device (the broker resends what
            # was not acknowledged before a crash): its totals were already stitched in.
            return GateOutcome("duplicate", f"seq {msg.seq} is from before the counter restarted")
        lower = msg.in_total < self.device_in or msg.out_total < self.device_out
        if last is not None:
            if msg.seq <= 1 and msg.seq < last and lower:
                if msg in self.run_start:
                    return _already_counted(msg.seq, last)
                self.run_start = ()
                self.base_in += self.device_in
                self.base_out += self.device_out
                self.restarts += 1
                self.run_started = to_us(msg.ts)
                self._take(msg, t)
                return GateOutcome(
                    "restart",
                    f"counter restarted at seq {msg.seq}; totals before it kept "
                    f"(in {self.base_in:,}, out {self.base_out:,})",
                )
            if msg.seq <= last:
                return _already_counted(msg.seq, last)
            if lower:
                return GateOutcome(
                    "rejected",
                    f"totals fell without a restart (in {self.device_in:,}→{msg.in_total:,}, "
                    f"out {self.device_out:,}→{msg.out_total:,} at seq {msg.seq})",
                )
        self._take(msg, t)
        return _COUNTED

    def _take(self, msg: GateCount, t: int) -> None:
        if msg.seq <= 1:
            self.run_start = (*self.run_start, msg)
        self.last_seq = msg.seq
        self.device_in = msg.in_total
        self.device_out = msg.out_total
        recent = self.recent
        recent.append((t, self.in_total))
        cutoff = t - RATE_WINDOW_US
        while len(recent) > 2 and recent[1][0] <= cutoff:
            recent.popleft()

    def per_minute(self, now: int) -> float:
        """Persons in per minute over the last minute of messages."""
        recent = self.recent
        if len(recent) < 2:
            return 0.0
        t0, in0 = recent[0]
        t1, in1 = recent[-1]
        if now - t1 > RATE_WINDOW_US:
            return 0.0
        span = max(t1 - t0, 1)
        return (in1 - in0) * 60 * SECOND / span if span >= SECOND else 0.0


_COUNTED = GateOutcome("counted")


def _already_counted(seq: int, last: int | None) -> GateOutcome:
    """A reading whose ``seq`` was taken before (QoS 1 redelivers): the same words for
    every kind of sensor, so the evidence log and the report say one thing for it."""
    after = f" (last {last})" if last is not None else ""
    return GateOutcome("duplicate", f"seq {seq} already counted{after}")


@dataclass(slots=True)
class LotSensor:
    """Cars now in one lot; older ``seq`` ignored, a device restart accepted."""

    capacity: int
    occupied: int | None = None
    last_seq: int | None = None
    run_start: tuple[LotOccupancy, ...] = ()

    def apply(self, msg: LotOccupancy) -> bool:
        last = self.last_seq
        if last is not None and msg.seq <= last:
            if not (msg.seq <= 1 < last) or msg in self.run_start:
                return False
            self.run_start = ()  # a restart, not a redelivery of this run's first message
        if msg.seq <= 1:
            self.run_start = (*self.run_start, msg)
        self.last_seq = msg.seq
        self.occupied = msg.occupied
        return True


@dataclass(slots=True)
class StaffRoster:
    """Who is on duty, from badge scans; a second "on" for the same badge changes nothing."""

    on_duty: dict[str, str] = field(default_factory=dict)  # badge -> role
    counts: dict[str, int] = field(default_factory=lambda: {"doctor": 0, "nurse": 0, "security": 0})
    last_seq: dict[str, int] = field(default_factory=dict)  # station -> seq
    run_start: dict[str, tuple[Badge, ...]] = field(default_factory=dict)  # station -> seq 0/1

    def apply(self, station: str, msg: Badge) -> bool:
        last = self.last_seq.get(station)
        first = self.run_start.get(station, ())
        if last is not None and msg.seq <= last:
            if not (msg.seq <= 1 < last) or msg in first:
                return False
            first = ()  # a restart, not a redelivery of this run's first scan
        if msg.seq <= 1:
            self.run_start[station] = (*first, msg)
        self.last_seq[station] = msg.seq
        current = self.on_duty.get(msg.badge)
        if msg.action == "on":
            if current == msg.role:
                return True
            if current is not None:
                self.counts[current] -= 1
            self.on_duty[msg.badge] = msg.role
            self.counts[msg.role] += 1
        elif current is not None:
            del self.on_duty[msg.badge]
            self.counts[current] -= 1
        return True


@dataclass(slots=True)
class SensorLiveness:
    """When a sensor was last heard and what its availability topic says."""

    kind: str  # its kind's name in core/sensor_kinds.py: gate | lot | station
    manual: bool = False
    last_seen: int | None = None
    available: bool | None = None
    stale: bool = False

    @property
    def online(self) -> bool:
        if self.manual and self.last_seen is None and self.available is None:
            return False  # a manual tally nobody has used yet is not reporting
        return self.available is not False and not self.stale

    @property
    def doubt(self) -> str | None:
        """Why its figure cannot be relied on now (``offline``, ``silent``), or None."""
        if self.available is False:
            return "offline"
        if self.stale:
            return "silent"
        return None

    @property
    def watched_for_silence(self) -> bool:
        """Counters and lot sensors heartbeat; badge readers and a deputy's manual tally
        publish only when used, so their silence is never a fault (docs/protocol.md):
        the kind's entry in core/sensor_kinds.py says which."""
        return kind_of(self.kind, self.manual).heartbeats


@dataclass(slots=True)
class Counting:
    """All counts for one event, updated message by message."""

    gates: dict[str, GateCounter]
    lots: dict[str, LotSensor]
    roster: StaffRoster
    sensors: dict[str, SensorLiveness]
    offset: int = 0
    peak: int = 0
    counter_attendance: int = 0
    clamped: bool = False
    """The counts plus the last adjustment went below 0 since it was made: attendance
    reads 0 and is indeterminate until the next adjustment (docs/law.md, "Adjustments")."""
    entries: int = 0
    exits: int = 0
    occupied_total: int = 0
    offline: set[str] = field(default_factory=set)
    gate_property: dict[str, str] = field(default_factory=dict)
    """Each boundary gate's property: its persons in are persons entering the assembly."""
    internal: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Gates between two properties, (from, to): they move persons, the aggregate stays."""

    @classmethod
    def for_sensors(
        cls,
        gates: list[str],
        manual: set[str],
        lots: dict[str, int],
        stations: list[str],
        *,
        gate_property: dict[str, str] | None = None,
        internal: dict[str, tuple[str, str]] | None = None,
    ) -> Counting:
        sensors = {g: SensorLiveness(GATE.name, manual=g in manual) for g in gates}
        sensors.update({lot: SensorLiveness(LOT.name) for lot in lots})
        sensors.update({s: SensorLiveness(STATION.name) for s in stations})
        return cls(
            gates={g: GateCounter() for g in gates},
            lots={lot: LotSensor(cap) for lot, cap in lots.items()},
            roster=StaffRoster(),
            sensors=sensors,
            gate_property=dict(gate_property or {}),
            internal=dict(internal or {}),
        )

    @classmethod
    def for_permit(cls, permit: Permit) -> Counting:
        """The counts for every sensor the permit lists, gates placed on their properties."""
        specs = permit.gate_specs.values()
        return cls.for_sensors(
            list(permit.gates),
            set(permit.manual_gates),
            dict(permit.lots),
            list(permit.staff_stations),
            gate_property={g.id: g.property for g in specs if g.property is not None},
            internal={
                g.id: (g.from_property, g.to_property)
                for g in specs
                if g.from_property is not None and g.to_property is not None
            },
        )

    @property
    def attendance(self) -> int:
        """Persons present: the counts plus the last adjustment, never below 0."""
        raw = self.counter_attendance + self.offset
        return raw if raw > 0 else 0

    @property
    def unadjusted(self) -> int:
        """Persons present by the gate counts alone, as if no adjustment had been made."""
        raw = self.counter_attendance
        return raw if raw > 0 else 0

    def apply_gate(self, gate: str, msg: GateCount, t: int) -> GateOutcome:
        counter = self.gates[gate]
        before_in = counter.base_in + counter.device_in
        before_out = counter.base_out + counter.device_out
        outcome = counter.apply(msg, t)
        d_in = counter.base_in + counter.device_in - before_in
        d_out = counter.base_out + counter.device_out - before_out
        if (d_in or d_out) and gate not in self.internal:
            self.entries += d_in
            self.exits += d_out
            self.counter_attendance += d_in - d_out
            if self.attendance > self.peak:
                self.peak = self.attendance
            elif self.counter_attendance + self.offset < 0 and not self.clamped:
                self.clamped = True
        return outcome

    def apply(self, sensor: str, msg: Reading, t: int) -> GateOutcome:
        """One sensor's reading, whatever its kind, on that kind's counting state.

        A gate's outcome is its own; a lot's or a station's is counted, or a duplicate
        when its ``seq`` was already taken, said in a gate's words: one fact, one
        wording, whichever kind of sensor a redelivery comes from.
        """
        match msg:
            case GateCount():
                return self.apply_gate(sensor, msg, t)
            case LotOccupancy():
                applied = self.apply_lot(sensor, msg)
                last = self.lots[sensor].last_seq
            case Badge():
                applied = self.roster.apply(sensor, msg)
                last = self.roster.last_seq.get(sensor)
            case _:
                raise TypeError(f"no counting state takes a {type(msg).__name__}")
        return _COUNTED if applied else _already_counted(msg.seq, last)

    def by_property(self) -> dict[str, int]:
        """Persons on each property, from its gates (inspectors' adjustments are not split)."""
        persons: dict[str, int] = {}
        for gate, prop in self.gate_property.items():
            persons[prop] = persons.get(prop, 0) + self.gates[gate].net
        for gate, (source, target) in self.internal.items():
            moved = self.gates[gate].net
            persons[target] = persons.get(target, 0) + moved
            persons[source] = persons.get(source, 0) - moved
        return persons

    def apply_lot(self, lot: str, msg: LotOccupancy) -> bool:
        sensor = self.lots[lot]
        before = sensor.occupied or 0
        if not sensor.apply(msg):
            return False
        self.occupied_total += (sensor.occupied or 0) - before
        return True

    def adjust(self, attendance: int) -> int:
        """Set attendance by hand; from now on it is the counters plus this offset.

        A new adjustment ends a clamp: attendance is known again from it.
        """
        self.offset = attendance - self.counter_attendance
        self.clamped = attendance < 0
        if self.attendance > self.peak:
            self.peak = self.attendance
        return self.offset

    def heard(self, sensor: str, t: int) -> None:
        """A message came from ``sensor``: it is no longer stale."""
        s = self.sensors[sensor]
        s.last_seen = t
        if s.stale:
            s.stale = False
            self._refresh(sensor, s)

    def set_available(self, sensor: str, available: bool) -> None:
        s = self.sensors[sensor]
        s.available = available
        self._refresh(sensor, s)

    def set_stale(self, sensor: str) -> None:
        s = self.sensors[sensor]
        s.stale = True
        self._refresh(sensor, s)

    def _refresh(self, sensor: str, s: SensorLiveness) -> None:
        if s.online or (s.manual and not self._tallied(sensor)):
            self.offline.discard(sensor)  # an unused tally is not a gate down
        else:
            self.offline.add(sensor)

    def shown_online(self, sensor: str) -> bool | None:
        """Whether the status calls ``sensor`` online: None for a manual tally that has
        counted nobody (not used is not offline, docs/protocol.md), else its liveness."""
        live = self.sensors[sensor]
        if live.manual and not self._tallied(sensor):
            return None
        return live.online

    def _tallied(self, gate: str) -> bool:
        """A manual tally has counted someone (its view going offline is then a note)."""
        counter = self.gates[gate]
        return counter.in_total > 0 or counter.out_total > 0

    @property
    def uncertain(self) -> bool:
        """True while attendance is indeterminate: any sensor whose kind makes it so (an
        automatic gate counter) is offline or stale, so its count may be behind, or the
        counts went below 0 after an adjustment. A manual tally never does: the automatic
        counter it stands in for already did, if it failed. The lots holding more cars
        than the gates count persons (staff added) make it indeterminate too."""
        return bool(self.doubts("attendance"))

    def doubts(self, figure: str) -> tuple[str, ...]:
        """Why ``figure`` (``attendance``, ``staff``, ``vehicles``) is indeterminate now:
        each sensor in doubt as ``"<kind> <id> <why>"``, in id order (empty: measured).

        Attendance is also in doubt while clamped at 0 (``"attendance clamped at 0"``),
        and while more cars are parked than it counts persons, staff on duty added
        (``"cars exceed persons counted"``).
        """
        sensors = self.sensors
        out = []
        for sensor in sorted(self.offline):
            live = sensors[sensor]
            kind = kind_of(live.kind, live.manual)
            if kind.figure != figure or (figure == "attendance" and not kind.makes_uncertain):
                continue
            out.append(f"{kind.noun} {sensor} {live.doubt or 'offline'}")
        if figure == "attendance" and self.clamped:
            out.append(CLAMPED)
        if figure == "attendance" and cars_exceed_persons(
            self.occupied_total, self.attendance, sum(self.roster.counts.values())
        ):
            out.append(CARS_EXCEED)
        return tuple(out)
