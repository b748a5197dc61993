"""What the report gathers while the log is replayed, one record at a time.

The replay calls :class:`Collector` after every record, millions of times for a
festival, so the hot path is a few integer comparisons: figures are kept per second
(the highest attendance, the fewest doctors and nurses, the most cars, and the values
at the end of the second) in compact arrays, and pandas turns those into minutes
afterwards. Everything rarer (inspector notes and inspections, rejected messages, the
alerts the live service logged, checkpoints, the service's own events) is kept whole,
typed, because the page shows it.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import msgspec

from kent_ops.core import wire
from kent_ops.core.engine import Engine, FeedResult
from kent_ops.core.sensor_kinds import SENSOR_KINDS
from kent_ops.evidence.replay import Replayed
from kent_ops.evidence.system import BrokerRestarted, Checkpointed, FloodSummary
from kent_ops.report.devices import RentedDevices
from kent_ops.report.kept import Kept
from kent_ops.report.reasons import Reasons, normalise_reason
from kent_ops.report.snapshots import SnapshotChecks
from kent_ops.report.staff import StaffBeside
from kent_ops.report.text import clean

__all__ = [
    "ATTENDANCE_AT_START",
    "STAFF_AT_START",
    "VEHICLES_AT_START",
    "Checkpoint",
    "Collector",
    "InspectionMark",
    "InspectorNote",
    "Reasons",
    "Samples",
    "normalise_reason",
]

ATTENDANCE_AT_START = 1
STAFF_AT_START = 2
VEHICLES_AT_START = 4
_EARLIEST = datetime.min.replace(tzinfo=UTC)
_NEVER = datetime.max.replace(tzinfo=UTC)
_ONE_SECOND = timedelta(seconds=1)
_LOW = -(2**62)
_HIGH = 2**62
_FIGURES = {m.record: kind.figure for kind in SENSOR_KINDS for m in kind.messages}
"""The figure each kind of sensor's readings (and re-statements) move (core/sensor_kinds/)."""
_SAMPLED_KINDS = frozenset({*_FIGURES, "adjust"})
_INSPECTOR_KINDS = frozenset({"note", "ack", "inspection", "adjust"})
_SERVICE_EVENTS = frozenset(
    [
        "started",
        "stopped",
        "broker-connected",
        "broker-disconnected",
        "storage-error",
        "permit-changed",
        "broker-session-lost",
        "broker-session-contested",
        "rollback-accepted",
        "rollback-found",
        "clock-jump",
        "broker-restarted",
    ]
)


@dataclass(slots=True)
class Samples:
    """Per-second figures: one entry per second in which an accepted message arrived.

    ``*_max``/``*_min`` are the extremes of the figures that held for some time within
    the second (a figure overwritten at the same instant, as when several gates report
    with one timestamp, never held); ``*_last`` the figures it ended with, which held
    until the next sample (the extremes include them). ``changed_at_start`` marks, in
    a minute's first second, the figures that changed exactly at the minute's start
    (bits :data:`ATTENDANCE_AT_START`, :data:`STAFF_AT_START`, :data:`VEHICLES_AT_START`):
    the figure carried in from before did not hold in that minute.
    """

    second: array[int] = field(default_factory=lambda: array("q"))
    attendance_max: array[int] = field(default_factory=lambda: array("q"))
    attendance_last: array[int] = field(default_factory=lambda: array("q"))
    entries_last: array[int] = field(default_factory=lambda: array("q"))
    doctors_min: array[int] = field(default_factory=lambda: array("q"))
    doctors_last: array[int] = field(default_factory=lambda: array("q"))
    nurses_min: array[int] = field(default_factory=lambda: array("q"))
    nurses_last: array[int] = field(default_factory=lambda: array("q"))
    vehicles_max: array[int] = field(default_factory=lambda: array("q"))
    vehicles_last: array[int] = field(default_factory=lambda: array("q"))
    changed_at_start: array[int] = field(default_factory=lambda: array("q"))
    property_max: dict[str, array[int]] = field(default_factory=dict)
    """For an assembly over several properties: each one's most persons in the second."""
    property_last: dict[str, array[int]] = field(default_factory=dict)
    """... and the persons on it the second ended with."""

    def __len__(self) -> int:
        return len(self.second)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A ``checkpoint`` system record: the service's claim that ``record`` had ``hash``."""

    at: datetime
    record_id: int
    record: int
    hash: str


@dataclass(frozen=True, slots=True)
class InspectorNote:
    """An inspector's note as the log holds it, with the record it is in."""

    by: str
    at: datetime
    text: str
    alert: str | None
    record: int
    made: datetime | None = None
    """When the inspector made it: its own ``ts`` (``at`` is when it was recorded)."""


@dataclass(frozen=True, slots=True)
class InspectorAck:
    """An inspector's acknowledgement as the log holds it (an alert carries the first and
    the latest only), with the record it is in."""

    by: str
    at: datetime
    alert: str
    comment: str
    record: int
    made: datetime | None = None
    """When the inspector made it: its own ``ts`` (``at`` is when it was recorded)."""


@dataclass(frozen=True, slots=True)
class InspectionMark:
    """One checklist mark an inspector made (permit:C, D, F), with the record it is in."""

    by: str
    at: datetime
    item: str
    result: str
    note: str
    record: int
    made: datetime | None = None
    """When the inspector made it: its own ``ts`` (``at`` is when it was recorded)."""


class Collector:
    """The replay's ``on_record``: samples figures and keeps the rare records whole.

    ``properties`` names the permit's properties: the highest number of persons the
    status showed on each (and when) is kept in :attr:`property_peaks`.
    """

    def __init__(self, properties: Sequence[str] = (), max_at_one_time: int = 500) -> None:
        self.samples = Samples()
        self.staff_beside = StaffBeside((500, max_at_one_time))
        """Stretches above 500 (or the permitted maximum) only with the badged staff added."""
        self.property_peaks: dict[str, tuple[int, datetime]] = {}
        self._single = properties[0] if len(properties) == 1 else None
        self._several = len(properties) > 1
        self._props = list(properties) if self._several else []
        self._prop_now = dict.fromkeys(self._props, 0)
        self._prop_max = dict.fromkeys(self._props, _LOW)
        for prop in self._props:
            self.samples.property_max[prop] = array("q")
            self.samples.property_last[prop] = array("q")
        self.notes: list[InspectorNote] = []
        self.acks: list[InspectorAck] = []
        self.inspections: list[InspectionMark] = []
        self.adjustments_made: dict[tuple[str, datetime], datetime] = {}
        """When each adjustment was made (its ``ts``), by (inspector, recorded time)."""
        self.rejected: dict[str, Reasons] = {}
        self.repeats: dict[str, Reasons] = {}
        self.live_alerts: dict[str, wire.Alert] = {}
        self.checkpoints: list[Checkpoint] = []
        self.service_events: Counter[str] = Counter()
        """How often the service logged each of its own events (started, stopped, …)."""
        self.broker_restarts: list[tuple[datetime, int, BrokerRestarted]] = []
        """Each ``broker-restarted`` record: when it was received, its record, what it says."""
        self.snapshots = SnapshotChecks()
        """Each engine snapshot in the log, compared with the replay's state there."""
        self.rejected_total = 0
        self.devices = RentedDevices()
        """Rented devices' raw records: each figure back to the device's bytes."""
        self.kept = Kept()
        """Rejected payloads kept in part, and messages counted in flood summaries."""
        self._sec: int | None = None  # the second being gathered
        self._sec_start = _EARLIEST  # when it started
        self._next = _EARLIEST  # when the next one starts
        self._minute_start = False  # whether it starts a minute
        self._flags = 0  # figures that changed exactly at the minute's start (bits)
        # The figures now, when each last changed, and their extremes over the open second.
        self._att = self._entries = self._doc = self._nurse = self._veh = 0
        self._t_att = self._t_staff = self._t_veh = _NEVER
        self._att_max = self._veh_max = _LOW
        self._doc_min = self._nurse_min = _HIGH

    # -- the hot path -------------------------------------------------------------------

    def on_message(self, result: FeedResult, engine: Engine) -> bool:
        """Take the figures after one message; True when the whole record is wanted too.

        When a figure changes at a later instant than it last did, its old value held in
        between: it counts towards this second's extreme if it held for part of this
        second (not when the change falls exactly on the second's start; the earlier
        seconds hold it as their closing figure). A figure replaced at the same instant
        (several gates reporting with one timestamp) never held and does not count.
        """
        if not result.accepted:
            return True
        kind = result.kind
        if kind not in _SAMPLED_KINDS:
            # Availability and inspector messages move no sampled figure; with the sensor
            # clock an availability may even come before the clock starts, timed on
            # another clock, and must not open the timeline.
            return kind in _INSPECTOR_KINDS or kind == "adapter-raw" or result.reason is not None
        t = result.time
        if t >= self._next:
            self._new_second(t)
        figure = _FIGURES.get(kind)
        if figure == "attendance":
            if t != self._t_att:
                self._attendance_held(t)
            counts = engine.counts
            self._att = counts.attendance
            self._entries = counts.entries
            self._staff_beside(t, engine)
            if self._single is not None:
                peak = self.property_peaks.get(self._single)
                if peak is None or counts.counter_attendance > peak[0]:
                    self.property_peaks[self._single] = (counts.counter_attendance, t)
            elif self._several:
                persons = counts.by_property()
                self._property_peaks(persons, t)
                self._property_now(persons)
            return result.reason is not None
        if figure == "vehicles":
            if t != self._t_veh:
                self._vehicles_held(t)
            self._veh = engine.counts.occupied_total
            return result.reason is not None
        if figure == "staff":
            if t != self._t_staff:
                self._staff_held(t)
            roster = engine.counts.roster.counts
            self._doc = roster["doctor"]
            self._nurse = roster["nurse"]
            self._staff_beside(t, engine)
            return result.reason is not None
        # An inspector's adjustment: the attendance figure moves.
        if t != self._t_att:
            self._attendance_held(t)
        self._att = engine.counts.attendance
        self._staff_beside(t, engine)
        return True

    def _staff_beside(self, t: datetime, engine: Engine) -> None:
        counts = engine.counts
        roster = counts.roster.counts
        staff = roster["doctor"] + roster["nurse"] + roster["security"]
        self.staff_beside.update(t, counts.attendance, staff)

    def _property_peaks(self, persons: dict[str, int], t: datetime) -> None:
        """Persons on each property now, as the status shows them: keep each one's highest."""
        peaks = self.property_peaks
        for prop, n in persons.items():
            peak = peaks.get(prop)
            if peak is None or n > peak[0]:
                peaks[prop] = (n, t)

    def _property_now(self, persons: dict[str, int]) -> None:
        """The persons on each property now (their old figures held until now: the caller
        has already taken them into the second's extremes)."""
        now = self._prop_now
        for prop in self._props:
            now[prop] = persons.get(prop, 0)

    def _attendance_held(self, t: datetime) -> None:
        """Attendance changes at ``t``, later than it last did: its old value held until now."""
        if t != self._sec_start:
            if self._att > self._att_max:
                self._att_max = self._att
            if self._several:
                most = self._prop_max
                for prop, n in self._prop_now.items():
                    if n > most[prop]:
                        most[prop] = n
        elif self._minute_start:
            self._flags |= ATTENDANCE_AT_START
        self._t_att = t

    def _vehicles_held(self, t: datetime) -> None:
        """The cars in the lots change at ``t``: their old number held until now."""
        if t != self._sec_start:
            if self._veh > self._veh_max:
                self._veh_max = self._veh
        elif self._minute_start:
            self._flags |= VEHICLES_AT_START
        self._t_veh = t

    def _staff_held(self, t: datetime) -> None:
        """The doctors and nurses on duty change at ``t``: the old figures held until now."""
        if t != self._sec_start:
            if self._doc < self._doc_min:
                self._doc_min = self._doc
            if self._nurse < self._nurse_min:
                self._nurse_min = self._nurse
        elif self._minute_start:
            self._flags |= STAFF_AT_START
        self._t_staff = t

    def _new_second(self, t: datetime) -> None:
        """Close the open second and open the one ``t`` falls in."""
        if self._sec is None:
            # The figures stand at zero from the first message on.
            self._t_att = self._t_staff = self._t_veh = t
        else:
            self._close_second()
        start = t.replace(microsecond=0)
        self._sec = int(start.timestamp())
        self._sec_start = start
        self._next = start + _ONE_SECOND
        self._minute_start = self._sec % 60 == 0

    def _close_second(self) -> None:
        """Write the open second to the arrays: its extremes and the figures it ended with.

        The figures it ended with held on into the next second, so they count towards
        its extremes as well.
        """
        assert self._sec is not None
        s = self.samples
        s.second.append(self._sec)
        s.attendance_max.append(max(self._att_max, self._att))
        s.attendance_last.append(self._att)
        s.entries_last.append(self._entries)
        s.doctors_min.append(min(self._doc_min, self._doc))
        s.doctors_last.append(self._doc)
        s.nurses_min.append(min(self._nurse_min, self._nurse))
        s.nurses_last.append(self._nurse)
        s.vehicles_max.append(max(self._veh_max, self._veh))
        s.vehicles_last.append(self._veh)
        s.changed_at_start.append(self._flags)
        for prop, n in self._prop_now.items():
            s.property_max[prop].append(max(self._prop_max[prop], n))
            s.property_last[prop].append(n)
            self._prop_max[prop] = _LOW
        self._att_max = self._veh_max = _LOW
        self._doc_min = self._nurse_min = _HIGH
        self._flags = 0

    def flush(self) -> None:
        """Close the last second after the replay: its figures held until the log's end."""
        if self._sec is not None:
            self._close_second()
            self._sec = None
            self._next = self._sec_start = _EARLIEST

    def __call__(self, rec: Replayed, engine: Engine) -> None:
        """The replay's ``on_record``: messages :meth:`on_message` asked for, and the rest."""
        result = rec.result
        if rec.topic is not None and "/adapter/" in rec.topic and rec.topic.endswith("/raw"):
            self.devices.take(rec.id, rec.received_at, rec.payload)
        if result is None:
            if rec.kind == "snapshot":
                self.snapshots(rec, engine)
            self._other(rec)
        elif not result.accepted:
            self._reject(rec, result.reason or "rejected")
            self.kept.excerpt(rec)
        else:
            if result.reason is not None:
                self._tally(self.repeats, result.reason, rec)
            # A redelivered inspector message is recorded, not applied: list it once.
            if result.kind in _INSPECTOR_KINDS and not (result.reason or "").startswith(
                "duplicate"
            ):
                self._inspector(rec, result.kind, result.time)

    # -- the rare records -----------------------------------------------------------------

    def _reject(self, rec: Replayed, reason: str) -> None:
        self.rejected_total += 1
        self._tally(self.rejected, reason, rec)

    @staticmethod
    def _tally(groups: dict[str, Reasons], reason: str, rec: Replayed) -> None:
        key = clean(normalise_reason(reason))
        group = groups.get(key)
        at = rec.received_at
        if group is None:
            group = groups[key] = Reasons(
                example=clean(reason), topic=clean(rec.topic), first_at=at
            )
        group.count += 1
        group.last_at = at

    def _inspector(self, rec: Replayed, kind: str, at: datetime) -> None:
        """Keep a note, an acknowledgement or a checklist mark, decoded as the engine
        decoded it, with when it was recorded (``at``, the engine's time) and when the
        inspector made it (its ``ts``): on the sensor clock, or with a phone's clock off,
        the two differ, and a reader must see both."""
        topic = rec.topic or ""
        who = clean(topic.split("/")[3]) if topic.count("/") >= 4 else ""
        try:
            if kind == "note":
                note = wire.decode_json(wire.Note, rec.payload)
                alert = clean(note.alert) if note.alert is not None else None
                self.notes.append(InspectorNote(who, at, clean(note.text), alert, rec.id, note.ts))
            elif kind == "ack":
                ack = wire.decode_json(wire.Ack, rec.payload)
                self.acks.append(
                    InspectorAck(who, at, clean(ack.alert), clean(ack.comment), rec.id, ack.ts)
                )
            elif kind == "inspection":
                mark = wire.decode_json(wire.Inspection, rec.payload)
                self.inspections.append(
                    InspectionMark(
                        who,
                        at,
                        clean(mark.item),
                        clean(mark.result),
                        clean(mark.note),
                        rec.id,
                        mark.ts,
                    )  # fmt: skip
                )
            elif kind == "adjust":
                adjust = wire.decode_json(wire.Adjust, rec.payload)
                self.adjustments_made[(who, at)] = adjust.ts
        except msgspec.DecodeError:  # pragma: no cover - the engine accepted it
            return

    def _other(self, rec: Replayed) -> None:
        """Alerts as logged live (decoded once), checkpoints and the service's own events.

        Status snapshots and gate commands are what the engine says at that moment; the
        replay's engine says it again, so the report does not read them back.
        """
        kind = rec.kind
        if kind == "alert":
            try:
                alert = wire.decode_json(wire.Alert, rec.payload)
            except msgspec.DecodeError:
                return  # not an alert the comparison could use; the chain still covers it
            self.live_alerts[alert.id] = alert
        elif kind == "system":
            self._system(rec)

    def _system(self, rec: Replayed) -> None:
        said = rec.system
        if isinstance(said, Checkpointed):
            self.checkpoints.append(Checkpoint(rec.received_at, rec.id, said.record, said.hash))
        elif isinstance(said, FloodSummary):
            self.kept.summary(rec, said)
        elif said is not None and said.event in _SERVICE_EVENTS:
            self.service_events[said.event] += 1
            if isinstance(said, BrokerRestarted):
                self.broker_restarts.append((rec.received_at, rec.id, said))
