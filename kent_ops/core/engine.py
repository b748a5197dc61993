"""The engine's face: permit in, timestamped messages in, status and alert changes out.

One object serves the live aggregator, a restart replay and the post-event report, so
the three can never disagree. It is pure: no clock (every call carries its time), no
MQTT, no SQLite. Feeding the same messages at the same times always gives the same
results, whatever the ticks in between, because time-driven transitions (a pending
breach maturing, a sensor going stale, midnight, a window opening) are taken at their
exact deadlines rather than at whatever moment the caller happened to tick.

Use::

    engine = Engine(permit, clock="wall")
    result = engine.feed(topic, payload, received_at, record_id=17)
    engine.tick(now)                        # between messages, as time passes
    changes = engine.collect_changes()      # alerts and gate commands to publish
    snapshot = engine.status()              # SPEC 3's status, as a dict
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple

import msgspec

from kent_ops.core import ordinance as law
from kent_ops.core.alerts import Alert, AlertBook
from kent_ops.core.checklist import applicable_items
from kent_ops.core.counting import Counting
from kent_ops.core.permit import Permit, local_midnight_after
from kent_ops.core.rules import Condition, Terms, attendance_band, evaluate
from kent_ops.core.timeutil import SECOND, from_us, iso, seconds, to_us
from kent_ops.core.wire import Ack, Adjust, Decoded, Inspection, Note, Rejection, decode

__all__ = ["Changes", "Engine", "FeedResult"]

Clock = Literal["wall", "sensor"]


class FeedResult(NamedTuple):
    """What became of one received message.

    ``kind`` is the message's kind (``gate``, ``lot``, ``badge``, ``availability``,
    ``note``, ``ack``, ``inspection``, ``adjust``, or ``unknown`` for a rejection that
    could not be classified). ``time`` is the time the engine took it at (the receive
    time, or the payload's ``ts`` with ``clock="sensor"``).
    """

    accepted: bool
    reason: str | None
    kind: str
    time: datetime


@dataclass(slots=True)
class Changes:
    """Alerts and gate commands that changed since the last ``collect_changes``.

    ``alerts`` holds each changed alert once, in its latest form (SPEC 3's alert dict),
    ordered by id. ``commands`` maps a gate id to its new command dict.
    """

    alerts: list[dict[str, Any]] = field(default_factory=list)
    commands: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.alerts or self.commands)


class Engine:
    """The compliance engine for one permitted assembly: a pure function of its inputs.

    Args:
        permit: the validated permit.
        clock: ``"wall"`` takes each message at its receive time (the field); ``"sensor"``
            at its payload's ``ts`` (simulations, replays and tests), never going back.
        keys: each sensor's HMAC key when the event signs payloads (the permit's
            ``[signing]`` table); unsigned or mis-signed sensor payloads are rejected.
    """

    def __init__(
        self,
        permit: Permit,
        clock: Clock = "wall",
        keys: Mapping[str, bytes] | None = None,
    ) -> None:
        if clock not in ("wall", "sensor"):
            raise ValueError(f"clock must be 'wall' or 'sensor', not {clock!r}")
        self.permit = permit
        self.clock = clock
        self.keys = dict(keys) if keys is not None else None
        self.terms = Terms.of(permit)
        self._prefix = f"kent/{permit.event_id}"
        self._sensor_kinds = permit.sensors
        self.counts = Counting.for_sensors(
            list(permit.gates),
            set(permit.manual_gates),
            dict(permit.lots),
            list(permit.staff_stations),
        )
        al = permit.alerting
        self._stale_us = seconds(al.stale_after_s)
        self._hold_at = al.hold_at
        self._resume_below = al.resume_below
        self._heap: list[tuple[int, int, str]] = []
        self._stale_scheduled: set[str] = set()
        self.alert_book = AlertBook(
            seconds(al.pending_s),
            seconds(al.clear_s),
            self._schedule_eval,
            no_pending=frozenset({"facility-deficient", "clock-skew"}),
        )
        self._checklist = {item.item: item for item in applicable_items(permit)}
        # The dashboard has no permit: the status names the items that apply (built once).
        self._checklist_items: list[dict[str, str]] = [
            {"item": it.item, "paragraph": it.paragraph, "text": it.text, "cite": it.cite}
            for it in self._checklist.values()
        ]
        self._now: int | None = None
        self._start: int | None = None
        self._present_since: int | None = None
        self._overnight_from: int | None = None
        self._deficient: dict[str, str] = {}
        self._checklist_state: dict[str, dict[str, Any]] = {}
        self._skewed: dict[str, float] = {}
        self._admit_capacity = True
        self._command_state: tuple[bool, str] | None = None
        self._commands_changed = False
        self._last_record: int | None = None
        self._notes: deque[dict[str, Any]] = deque(maxlen=NOTES_KEPT)
        self._adjustments: list[dict[str, Any]] = []
        self.rejected = 0
        self.accepted = 0
        self._counts_only = False
        self._inspector_seen: set[tuple[str, str, bytes]] = set()
        self._band: tuple[int, int] | None = None
        self._over_collective = False
        self._stretch_peak: int | None = None
        self._stretch_at: int = 0  # when the stretch's highest attendance was reached

    # -- time ---------------------------------------------------------------------------

    @property
    def now(self) -> datetime | None:
        return None if self._now is None else from_us(self._now)

    def _schedule_eval(self, t: int) -> None:
        heapq.heappush(self._heap, (t, _EVAL, ""))

    def _schedule_stale(self, sensor: str, t: int) -> None:
        self._stale_scheduled.add(sensor)
        heapq.heappush(self._heap, (t, _STALE, sensor))

    def _begin(self, t: int) -> None:
        """The first instant the engine sees: silence is measured from here."""
        self._start = t
        self._now = t
        for start, end in self.terms.windows:
            for boundary in (start, end):
                if boundary > t:
                    self._schedule_eval(boundary)
        for sensor, live in self.counts.sensors.items():
            if live.watched_for_silence:
                self._schedule_stale(sensor, t + self._stale_us)

    def _advance(self, t: int) -> None:
        """Visit every deadline up to ``t`` in order, then stand at ``t``."""
        if self._now is None:
            self._begin(t)
            self._evaluate()  # what time alone makes true (inside a window) holds from here
            return
        heap = self._heap
        while heap and heap[0][0] <= t:
            d = heap[0][0]
            evaluate = False
            while heap and heap[0][0] == d:
                _, kind, sensor = heapq.heappop(heap)
                if kind == _STALE:
                    evaluate |= self._check_stale(sensor, d)
                else:
                    evaluate = True
            if d > self._now:
                self._now = d
            if evaluate:
                self._evaluate()
        if t > self._now:
            self._now = t

    def _check_stale(self, sensor: str, d: int) -> bool:
        self._stale_scheduled.discard(sensor)
        live = self.counts.sensors[sensor]
        if not live.watched_for_silence or live.stale:
            return False
        base = live.last_seen if live.last_seen is not None else self._start
        due = (base or d) + self._stale_us
        if due <= d:
            self.counts.set_stale(sensor)
            return True
        self._schedule_stale(sensor, due)
        return False

    def tick(self, now: datetime) -> None:
        """Let time pass to ``now``: pending breaches mature, silent sensors go stale."""
        self._advance(to_us(now))

    # -- messages -------------------------------------------------------------------------

    def feed(
        self, topic: str, payload: bytes, received_at: datetime, record_id: int | None = None
    ) -> FeedResult:
        """Take one received message; never raises.

        ``record_id`` is the evidence record that holds it, cited by any alert it starts.
        """
        received = to_us(received_at)
        decoded = decode(self._prefix, self._sensor_kinds, topic, payload, self.keys)
        t = received
        if self.clock == "sensor":
            ts = getattr(decoded.record, "ts", None) if isinstance(decoded, Decoded) else None
            if ts is not None:
                t = to_us(ts)
            elif self._now is not None:
                t = self._now
            else:
                # Sensor time has not started (an availability before any timestamped
                # message): the receive time is on another clock, so take the message
                # without starting the clock from it.
                return self._feed_untimed(decoded, received_at, record_id)
        now = self._now
        if now is not None and t < now:
            t = now  # time never goes back: a late message is taken now
        if now is None or (self._heap and self._heap[0][0] <= t):
            self._advance(t)
        elif t > now:
            self._now = t
        if record_id is not None:
            self._last_record = record_id
        if isinstance(decoded, Rejection):
            self.rejected += 1
            return FeedResult(False, decoded.reason, decoded.kind, from_us(t))
        at = received_at if t == received else from_us(t)
        self._counts_only = False
        if decoded.kind != "gate":
            self._fold_stretch()  # before a badge or an adjustment changes what the peak meant
        try:
            reason = self._apply(decoded, t, received, record_id)
        except _Refused as refused:
            self.rejected += 1
            return FeedResult(False, str(refused), decoded.kind, at)
        self.accepted += 1
        if not (self._counts_only and self._within_band()):
            self._evaluate()
        return FeedResult(True, reason, decoded.kind, at)

    def _feed_untimed(
        self, decoded: Decoded | Rejection, received_at: datetime, record_id: int | None
    ) -> FeedResult:
        if record_id is not None:
            self._last_record = record_id
        if isinstance(decoded, Rejection):
            self.rejected += 1
            return FeedResult(False, decoded.reason, decoded.kind, received_at)
        if decoded.kind != "availability":
            self.rejected += 1
            return FeedResult(False, "message has no ts to time it by", decoded.kind, received_at)
        self.counts.set_available(decoded.source, decoded.record.online)  # type: ignore[union-attr]
        self.accepted += 1
        return FeedResult(True, None, decoded.kind, received_at)

    def _within_band(self) -> bool:
        """True when this attendance leaves every rule and the gate command as they were.

        Every attendance rule flips where attendance crosses a fixed figure (500, the
        permitted maximum, a nurse or car-space boundary, hold_at…). Between two such
        figures nothing but the numbers change, so a full evaluation can wait; the
        highest attendance seen meanwhile is kept so an alert's worst figure is exact.
        """
        band = self._band
        if band is None:
            return False
        counts = self.counts
        attendance = counts.attendance
        if not (band[0] <= attendance <= band[1]):
            return False
        if (counts.entries > self.terms.max_collective) != self._over_collective:
            return False
        if self._stretch_peak is None or attendance > self._stretch_peak:
            self._stretch_peak = attendance
            self._stretch_at = self._now if self._now is not None else 0
        return True

    def _apply(self, msg: Decoded, t: int, received: int, record: int | None) -> str | None:
        """Move the counts; return a note for an accepted message that changed nothing."""
        rec = msg.record
        counts = self.counts
        kind = msg.kind
        skew_changed = False
        if kind in ("gate", "lot", "badge"):
            skew_changed = self._note_skew(msg.source, rec, received)
        if kind == "gate":
            outcome = counts.apply_gate(msg.source, rec, t)  # type: ignore[arg-type]
            if outcome.effect == "rejected":
                raise _Refused(outcome.reason or "refused")
            was_stale = counts.sensors[msg.source].stale
            self._heard(msg.source, t)
            if outcome.effect == "restart":
                self._track_presence(t)  # the stitched totals can bring persons present
                self.alert_book.event(
                    ("counter-reset", msg.source),
                    t,
                    Condition(
                        {"seq": rec.seq, "restarts": counts.gates[msg.source].restarts},  # type: ignore[union-attr]
                        {},
                        1,
                    ),
                    uncertain=counts.uncertain,
                    record=record,
                )
                return outcome.reason
            self._track_presence(t)
            # A stale gate heard again ends its sensor-offline now: not counts only.
            self._counts_only = not (skew_changed or was_stale)
            return outcome.reason if outcome.effect == "duplicate" else None
        if kind == "lot":
            applied = counts.apply_lot(msg.source, rec)  # type: ignore[arg-type]
            self._heard(msg.source, t)
            return None if applied else f"seq {rec.seq} already seen"  # type: ignore[union-attr]
        if kind == "badge":
            applied = counts.roster.apply(msg.source, rec)  # type: ignore[arg-type]
            self._heard(msg.source, t)
            return None if applied else f"seq {rec.seq} already seen"  # type: ignore[union-attr]
        if kind == "availability":
            counts.set_available(msg.source, rec.online)  # type: ignore[union-attr]
            return None
        return self._apply_inspector(msg, t)

    def _apply_inspector(self, msg: Decoded, t: int) -> str | None:
        # Inspector messages carry no seq; the broker redelivers a QoS 1 message that was
        # not acknowledged (a crash), byte for byte. The same inspector, kind and body
        # (whose ts has milliseconds) is that redelivery, not a second acknowledgement.
        fingerprint = (msg.source, msg.kind, msgspec.json.encode(msg.record))
        if fingerprint in self._inspector_seen:
            return "duplicate: this inspector message was already recorded"
        self._inspector_seen.add(fingerprint)
        return self._apply_inspector_new(msg, t)

    def _apply_inspector_new(self, msg: Decoded, t: int) -> str | None:
        rec = msg.record
        who = msg.source
        at = iso(t)
        if isinstance(rec, Ack):
            if not self.alert_book.acknowledge(rec.alert, who, at, rec.comment):
                raise _Refused(f"acknowledgement for unknown alert {rec.alert!r}")
            return None
        if isinstance(rec, Note):
            entry = {"by": who, "at": at, "text": rec.text, "alert": rec.alert}
            if rec.alert is not None and not self.alert_book.note(rec.alert, entry):
                raise _Refused(f"note about unknown alert {rec.alert!r}")
            self._notes.append(entry)
            return None
        if isinstance(rec, Adjust):
            offset = self.counts.adjust(rec.attendance)
            self._adjustments.append(
                {
                    "by": who,
                    "at": at,
                    "attendance": rec.attendance,
                    "offset": offset,
                    "reason": rec.reason,
                }
            )
            self._track_presence(t)
            return None
        if isinstance(rec, Inspection):
            if rec.item not in self._checklist:
                raise _Refused(
                    f"checklist item {rec.item!r} is unknown or does not apply to this permit"
                )
            if rec.result == "deficient":
                if not rec.note.strip():
                    raise _Refused("a deficient mark needs a note saying what was found")
                self._deficient[rec.item] = rec.note
            else:
                self._deficient.pop(rec.item, None)
            self._checklist_state[rec.item] = {
                "result": rec.result, "by": who, "at": at, "note": rec.note,
            }  # fmt: skip
            return None
        raise _Refused("unhandled message")  # pragma: no cover - decode() knows every kind

    def _heard(self, sensor: str, t: int) -> None:
        self.counts.heard(sensor, t)
        if sensor not in self._stale_scheduled and self.counts.sensors[sensor].watched_for_silence:
            self._schedule_stale(sensor, t + self._stale_us)

    def _note_skew(self, sensor: str, rec: Any, received: int) -> bool:
        """Track sensors whose clock is off by more than 30 s; True if that set changed."""
        if self.clock != "wall":
            return False
        skew = (to_us(rec.ts) - received) / SECOND
        if abs(skew) > CLOCK_SKEW_S:
            changed = self._skewed.get(sensor) != skew  # a new figure must be observed now
            self._skewed[sensor] = skew
            return changed
        return self._skewed.pop(sensor, None) is not None

    def _track_presence(self, t: int) -> None:
        """Remember since when persons have been continuously present, for midnight."""
        if self.counts.attendance > 0:
            if self._present_since is None:
                self._present_since = t
                midnight = to_us(local_midnight_after(from_us(t), self.permit.timezone))
                self._overnight_from = midnight
                self._schedule_eval(midnight)
        elif self._present_since is not None:
            self._fold_stretch()  # the stretch's peak was present overnight: offer it first
            self._present_since = None
            self._overnight_from = None

    # -- rules ----------------------------------------------------------------------------

    def _evaluate(self) -> None:
        t = self._now
        assert t is not None
        counts = self.counts
        self._fold_stretch()
        held = evaluate(
            self.terms,
            counts,
            t,
            overnight_from=self._overnight_from,
            deficient=self._deficient,
            skewed=self._skewed,
        )
        self.alert_book.update(t, held, uncertain=counts.uncertain, record=self._last_record)
        attendance = counts.attendance
        if self._admit_capacity and attendance >= self._hold_at:
            self._admit_capacity = False
        elif not self._admit_capacity and attendance < self._resume_below:
            self._admit_capacity = True
        state = self._command_reason(("permit-required", None) in held)
        if state != self._command_state:
            self._command_state = state
            self._commands_changed = True
        self._band = attendance_band(
            self.terms,
            counts,
            t,
            admit_capacity=self._admit_capacity,
            hold_at=self._hold_at,
            resume_below=self._resume_below,
        )
        self._over_collective = counts.entries > self.terms.max_collective

    def _fold_stretch(self) -> None:
        """Offer the highest attendance of the deferred messages to the alerts' worst figures.

        Attendance rose and fell inside the band since the last evaluation; the worst
        figure of each alert is at the highest attendance reached, taken at the instant it
        was reached. Only worst figures change here, so folding when someone looks and
        folding at the next evaluation give the same alerts.
        """
        peak = self._stretch_peak
        if peak is None:
            return
        self._stretch_peak = None
        at_peak = evaluate(
            self.terms,
            self.counts,
            self._stretch_at,
            overnight_from=self._overnight_from,
            deficient=self._deficient,
            skewed=self._skewed,
            attendance=peak,
        )
        self.alert_book.observe_worst(at_peak)

    def _command_reason(self, permit_hold: bool) -> tuple[bool, str]:
        if permit_hold:
            return False, (
                "HOLD: more than 500 persons without an issued permit or outside the "
                "permitted hours (permit:A)"
            )
        if not self._admit_capacity:
            return False, (
                f"HOLD: attendance reached {self._hold_at:,}; admit again below "
                f"{self._resume_below:,}"
            )
        return True, f"ADMIT: attendance below {self._hold_at:,}"

    # -- outputs --------------------------------------------------------------------------

    @property
    def alerts(self) -> dict[str, dict[str, Any]]:
        """Every alert so far, by id, in SPEC 3's shape."""
        self._settle()
        return {aid: self._alert_dict(a) for aid, a in self.alert_book.alerts.items()}

    def _alert_dict(self, alert: Alert) -> dict[str, Any]:
        # The record is cited by id; its hash belongs to the log (kent_ops.evidence.cite).
        return alert.to_dict()

    def _settle(self) -> None:
        """Bring worst figures up to date after a stretch of in-band messages.

        Looking must not change what a replay that never looks would compute, so this
        folds the stretch into the worst figures only; ``observed`` keeps the figures of
        the last evaluation.
        """
        self._fold_stretch()

    def collect_changes(self) -> Changes:
        """Alerts and gate commands that changed since the last call, to publish and log."""
        self._settle()
        book = self.alert_book
        changes = Changes(
            alerts=[self._alert_dict(book.alerts[aid]) for aid in sorted(book.changed)]
        )
        book.changed.clear()
        if self._commands_changed:
            changes.commands = self.commands()
            self._commands_changed = False
        return changes

    def commands(self) -> dict[str, dict[str, Any]]:
        """Each gate's ADMIT/HOLD for its deputy, with the attendance now."""
        if self._command_state is None:
            self._command_state = self._command_reason(False)
        admit, reason = self._command_state
        command = {
            "admit": admit,
            "attendance": self.counts.attendance,
            "hold_at": self._hold_at,
            "resume_below": self._resume_below,
            "reason": reason,
        }
        return {gate: dict(command) for gate in self.permit.gates}

    def status(self) -> dict[str, Any]:
        """The live picture at the engine's current time, SPEC 3's ``status``."""
        permit = self.permit
        counts = self.counts
        t = self._now if self._now is not None else 0
        attendance = counts.attendance
        present = max(attendance, 0)
        roster = counts.roster.counts
        window = next(((s, e) for s, e in self.terms.windows if e > t), None)
        admit = self._command_state[0] if self._command_state else True
        return {
            "ts": iso(t) if self._now is not None else None,
            "event": permit.event_id,
            "event_name": permit.event_name,
            "timezone": permit.timezone.key,
            "permit": {"number": permit.number, "status": permit.status},
            "window": {
                "inside": self.terms.inside_window(t),
                "start": iso(window[0]) if window else None,
                "end": iso(window[1]) if window else None,
            },
            "attendance": {
                "current": attendance,
                "entries": counts.entries,
                "exits": counts.exits,
                "peak": counts.peak,
                "offset": counts.offset,
                "max_at_one_time": permit.max_at_one_time,
                "max_collective": permit.max_collective,
                "threshold": law.PERMIT_THRESHOLD,
                "uncertain": counts.uncertain,
            },
            "admit": admit,
            "hold_at": self._hold_at,
            "resume_below": self._resume_below,
            "parking": {
                "spaces_provided": permit.spaces_provided,
                "spaces_required": law.car_spaces_required(present),
                "occupied": counts.occupied_total,
                "vehicles_at_one_time": permit.vehicles_at_one_time,
            },
            "medical": {
                "doctors_on_duty": roster["doctor"],
                "doctors_required": permit.doctors_min,
                "nurses_on_duty": roster["nurse"],
                "nurses_required": law.nurses_required(present, permit.persons_per_nurse),
            },
            "security": {"on_duty": roster["security"], "declared": permit.security_guards},
            "sensors": {
                sensor: {"kind": live.kind, "online": live.online, "last_seen": iso(live.last_seen)}
                for sensor, live in counts.sensors.items()
            },
            "gates": {
                gate: {
                    "in": g.in_total,
                    "out": g.out_total,
                    "net": g.net,
                    "per_minute": round(g.per_minute(t), 1),
                    "last_seen": iso(counts.sensors[gate].last_seen),
                    "online": counts.sensors[gate].online,
                    "manual": counts.sensors[gate].manual,
                    "restarts": g.restarts,
                }
                for gate, g in counts.gates.items()
            },
            "lots": {
                lot: {
                    "capacity": s.capacity,
                    "occupied": s.occupied,
                    "free": None if s.occupied is None else s.capacity - s.occupied,
                    "share": None
                    if s.occupied is None or s.capacity == 0
                    else round(s.occupied / s.capacity, 3),
                    "online": counts.sensors[lot].online,
                    "last_seen": iso(counts.sensors[lot].last_seen),
                }
                for lot, s in counts.lots.items()
            },
            "active_alerts": self.alert_book.active_ids(),
            "pending": self.alert_book.pending_list(),
            "rejected": self.rejected,
            "accepted": self.accepted,
            "notes": list(self._notes),
            "adjustments": list(self._adjustments),
            "checklist": dict(self._checklist_state),
            "checklist_items": list(self._checklist_items),
        }


class _Refused(Exception):
    """A well-formed message the state refuses (falling totals, an unknown alert)."""


_STALE = 0
_EVAL = 1
NOTES_KEPT = 20
CLOCK_SKEW_S = 30.0
