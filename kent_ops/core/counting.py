"""The counting state: gates, lots, the staff roster, adjustments and sensor liveness.

Everything here is incremental (each message moves a few integers) because the engine
applies hundreds of thousands of messages a second on replay. Times are whole
microseconds (see :mod:`kent_ops.core.timeutil`). Nothing here knows about rules or alerts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kent_ops.core.permit import Permit
from kent_ops.core.sensor_kinds import (
    GATE,
    LOT,
    STATION,
    Badge,
    GateCount,
    LotOccupancy,
    Reading,
    Roster,
    kind_of,
)
from kent_ops.core.sensor_states import (
    RATE_WINDOW_US,
    GateCounter,
    GateOutcome,
    LotSensor,
    Outcome,
    StaffRoster,
)
from kent_ops.core.seq import SeqTrack, numbers

__all__ = [
    "CARS_EXCEED",
    "CLAMPED",
    "RATE_WINDOW_US",
    "Counting",
    "GateCounter",
    "GateOutcome",
    "LotSensor",
    "Outcome",
    "SensorLiveness",
    "StaffRoster",
    "cars_exceed_persons",
]

CLAMPED = "attendance clamped at 0"
"""The doubt a clamp puts on attendance (the counts less an adjustment went below 0)."""
CARS_EXCEED = "cars exceed persons counted"
"""The doubt the lots put on attendance when they hold more cars than the gates count
persons, staff on duty added (:func:`cars_exceed_persons`)."""


def cars_exceed_persons(cars: int, persons: int, staff: int) -> bool:
    """More cars parked than persons counted plus staff on duty: every parked car brought
    at least one person, so a gate counter is missing entries (docs/law.md)."""
    return cars > persons + staff


@dataclass(slots=True)
class SensorLiveness:
    """When a sensor was last heard, what its availability topic says, and whatever else
    puts its figure in doubt: messages that arrive but are not counted (stuck), a gap
    that leaves a staff station's roster unknown, a broker restart since it was heard
    (docs/protocol.md, "Counting")."""

    kind: str  # its kind's name in core/sensor_kinds/table.py: gate | lot | station
    manual: bool = False
    last_seen: int | None = None
    available: bool | None = None
    stale: bool = False
    last_counted: int | None = None
    """When a message of it was last counted (``last_seen``: when one last arrived)."""
    stuck: bool = False
    """Its messages arrive, but none was counted for ``stale_after_s``."""
    gap: tuple[int, int] | None = None
    """A gap after which its roster is unknown (a staff station), until re-stated."""
    gap_until: int | None = None
    """When that doubt ends if nothing re-states the roster: the day's end."""
    unheard: bool = False
    """Not heard since the broker restarted."""

    @property
    def online(self) -> bool:
        if self.manual and self.last_seen is None and self.available is None:
            return False  # a manual tally nobody has used yet is not reporting
        return self.available is not False and not self.stale

    @property
    def doubt(self) -> str | None:
        """Why its figure cannot be relied on now (``offline``, ``silent``, ``stuck``,
        ``roster unknown since a gap (seq 7–40)``, ``not heard since the broker
        restarted``), or None."""
        if self.available is False:
            return "offline"
        if self.stale:
            return "silent"
        if self.stuck:
            return "stuck"
        if self.gap is not None:
            return f"roster unknown since a gap ({numbers(*self.gap)})"
        if self.unheard:
            return "not heard since the broker restarted"
        return None

    @property
    def suspect(self) -> bool:
        """In doubt for a reason other than its availability or its silence."""
        return self.stuck or self.gap is not None or self.unheard

    @property
    def watched_for_silence(self) -> bool:
        """Counters and lot sensors heartbeat; badge readers and a deputy's manual tally
        publish only when used, so their silence is never a fault (docs/protocol.md):
        the kind's entry in core/sensor_kinds/table.py says which."""
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
    suspect: set[str] = field(default_factory=set)
    """Sensors in doubt for another reason than their availability or silence: stuck, a
    roster unknown since a gap, not heard since the broker restarted."""
    changes: int = 0
    """Counts every change of what is in doubt: the engine passes the rules when it moves."""
    broker_restart: str | None = None
    """How the broker's last restart was told (its uptime fell …), once one was recorded."""
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
        if d_in or d_out:
            self._moved(gate, d_in, d_out)
        return outcome

    def count_next(self, gate: str, msg: GateCount, t: int) -> bool:
        """A gate's next reading, counted at once if it is the common case (the next
        ``seq``, totals that did not fall: :meth:`GateCounter.take_next`); False, and
        nothing changed, for any other (:meth:`apply` judges it)."""
        counter = self.gates[gate]
        d_in = msg.in_total - counter.device_in
        d_out = msg.out_total - counter.device_out
        if not counter.take_next(msg, t):
            return False
        if d_in or d_out:
            self._moved(gate, d_in, d_out)
        return True

    def _moved(self, gate: str, d_in: int, d_out: int) -> None:
        """A gate's totals rose (or, stitched across a restart, moved) by these."""
        if gate in self.internal:
            return  # persons moved between two properties: the aggregate stays
        self.entries += d_in
        self.exits += d_out
        raw = self.counter_attendance + d_in - d_out
        self.counter_attendance = raw
        raw += self.offset
        if raw > self.peak:
            self.peak = raw
        elif raw < 0 and not self.clamped:
            self.clamped = True

    def apply(self, sensor: str, msg: Reading, t: int) -> GateOutcome:
        """One sensor's message, whatever its kind, on that kind's counting state: counted,
        a restart, a duplicate (its ``seq`` already counted) or rejected (an implausible
        ``seq``), with the numbers never received before it, if any.

        A roster taken makes its station's roster known again.
        """
        match msg:
            case GateCount():
                outcome = self.apply_gate(sensor, msg, t)
            case LotOccupancy():
                outcome = self.apply_lot(sensor, msg, t)
            case Badge():
                outcome = self.roster.take(sensor, msg, t)
            case Roster():
                outcome = self.roster.take(sensor, msg, t)
                if outcome.effect in ("counted", "restart"):
                    self.roster_known(sensor)
            case _:
                raise TypeError(f"no counting state takes a {type(msg).__name__}")
        if outcome.missing is not None:
            track = self.seq_track(sensor)
            if track is not None:
                track.gap(outcome.missing)
        return outcome

    def seq_track(self, sensor: str) -> SeqTrack | None:
        """The sequence numbers ``sensor`` has sent (None before a badge reader's first)."""
        gate = self.gates.get(sensor)
        if gate is not None:
            return gate.seqs
        lot = self.lots.get(sensor)
        if lot is not None:
            return lot.seqs
        return self.roster.seqs.get(sensor)

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

    def apply_lot(self, lot: str, msg: LotOccupancy, t: int = 0) -> GateOutcome:
        sensor = self.lots[lot]
        before = sensor.occupied or 0
        outcome = sensor.take(msg, t)
        self.occupied_total += (sensor.occupied or 0) - before
        return outcome

    def adjust(self, attendance: int) -> int:
        """Set attendance by hand; from now on it is the counters plus this offset.

        A new adjustment ends a clamp: attendance is known again from it.
        """
        self.offset = attendance - self.counter_attendance
        self.clamped = attendance < 0
        if self.attendance > self.peak:
            self.peak = self.attendance
        return self.offset

    def heard(self, sensor: str, t: int, counted: bool = True) -> None:
        """A message came from ``sensor``: it is no longer stale; if it was counted, no
        longer stuck, nor unheard since a broker restart."""
        s = self.sensors[sensor]
        s.last_seen = t
        if counted:
            s.last_counted = t
            if s.stuck or s.unheard:
                s.stuck = s.unheard = False
                self._suspect(sensor, s)
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

    def set_stuck(self, sensor: str) -> None:
        """Its messages arrive, but none was counted for ``stale_after_s``."""
        s = self.sensors[sensor]
        s.stuck = True
        self._suspect(sensor, s)

    def check_silence(
        self, sensor: str, d: int, stale_us: int, start: int | None
    ) -> tuple[bool, int | None]:
        """At ``d``: has ``sensor`` been silent, or (its messages arriving) counted
        nothing, for ``stale_us`` since it was last heard, or counted (from ``start`` if
        never)? Marks it stale or stuck; returns (that changed, when to look again)."""
        live = self.sensors[sensor]
        if not live.watched_for_silence or live.stale:
            return False, None
        base = start if start is not None else d
        seen = live.last_seen if live.last_seen is not None else base
        if seen + stale_us <= d:
            self.set_stale(sensor)
            return True, None
        if live.stuck or live.last_seen is None:
            return False, seen + stale_us
        counted = live.last_counted if live.last_counted is not None else base
        if counted + stale_us <= d:
            self.set_stuck(sensor)
            return True, seen + stale_us
        return False, min(seen, counted) + stale_us

    def gap_found(
        self, sensor: str, rec: Reading, missing: tuple[int, int], until: int | None
    ) -> dict[str, object]:
        """The figures of a ``sensor-gap``: what lost which numbers. A gate's or a lot's
        reading measures it again; at a staff station, unless ``rec`` re-states the
        roster, who is on duty there is unknown from now until its reader re-states it,
        or ``until`` (the day's end)."""
        live = self.sensors[sensor]
        kind = kind_of(live.kind, live.manual)
        restatement = kind.restatement
        roster = restatement is not None and type(rec) is not restatement.payload
        if roster:
            live.gap, live.gap_until = missing, until
            self._suspect(sensor, live)
        first, last = missing
        return {
            "device": kind.device_noun,
            "first": first,
            "last": last,
            "missing": last - first + 1,
            "roster": roster,
        }

    def roster_known(self, station: str) -> None:
        """The station's reader re-stated who is on duty there."""
        s = self.sensors[station]
        if s.gap is not None:
            s.gap = s.gap_until = None
            self._suspect(station, s)

    def day_over(self, t: int) -> None:
        """At ``t``: a roster unknown since a gap is no longer in doubt once its day ended."""
        for sensor in [x for x in self.suspect if self.sensors[x].gap_until is not None]:
            s = self.sensors[sensor]
            if s.gap_until is not None and s.gap_until <= t:
                s.gap = s.gap_until = None
                self._suspect(sensor, s)

    def broker_restarted(self, how: str) -> None:
        """The broker restarted: what it acknowledged since its last save may be lost, so
        every sensor is in doubt until it is heard again (a manual tally nobody used has
        nothing to lose)."""
        self.broker_restart = how
        for sensor, s in self.sensors.items():
            if s.manual and s.last_seen is None:
                continue
            s.unheard = True
            self._suspect(sensor, s)

    def _refresh(self, sensor: str, s: SensorLiveness) -> None:
        before = sensor in self.offline
        if s.online or (s.manual and not self._tallied(sensor)):
            self.offline.discard(sensor)  # an unused tally is not a gate down
        else:
            self.offline.add(sensor)
        if (sensor in self.offline) != before:
            self.changes += 1

    def _suspect(self, sensor: str, s: SensorLiveness) -> None:
        self.changes += 1
        if s.suspect:
            self.suspect.add(sensor)
        else:
            self.suspect.discard(sensor)

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
        automatic gate counter) is offline, stale, stuck or not heard since the broker
        restarted, so its count may be behind, or the counts went below 0 after an
        adjustment. A manual tally never does: the automatic counter it stands in for
        already did, if it failed. The lots holding more cars than the gates count persons
        (staff added) make it indeterminate too."""
        return bool(self.doubts("attendance"))

    def doubts(self, figure: str) -> tuple[str, ...]:
        """Why ``figure`` (``attendance``, ``staff``, ``vehicles``) is indeterminate now:
        each sensor in doubt as ``"<kind> <id> <why>"``, in id order (empty: measured).

        A sensor is in doubt while offline, silent, stuck, not heard since the broker
        restarted, or (a staff station) with its roster unknown since a gap. Attendance
        is also in doubt while clamped at 0 (``"attendance clamped at 0"``), and while
        more cars are parked than it counts persons, staff on duty added (``"cars exceed
        persons counted"``).
        """
        sensors = self.sensors
        out = []
        for sensor in sorted(self.offline | self.suspect if self.suspect else self.offline):
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
