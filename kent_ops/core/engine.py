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
    snapshot = engine.status()              # the status, a wire.Status
    saved = engine.snapshot()               # the whole state; Engine.restore(...) takes it
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from kent_ops.core import snapshot as snapshots
from kent_ops.core import wire
from kent_ops.core.alerts import AlertBook
from kent_ops.core.assembly import AssemblyTrack, assembly_on
from kent_ops.core.band import AttendanceBand
from kent_ops.core.basis import Judged, judge
from kent_ops.core.checklist import applicable_items
from kent_ops.core.counting import Counting
from kent_ops.core.coverage import Dispersal, cover_end, why_uncovered
from kent_ops.core.deadlines import Deadlines
from kent_ops.core.doubt import DoubtTrack, doubts_now
from kent_ops.core.engine_io import Changes, FeedResult
from kent_ops.core.engine_outputs import EngineOutputs
from kent_ops.core.errors import Refused
from kent_ops.core.foresight import Foresight
from kent_ops.core.gate_orders import GateOrders
from kent_ops.core.inspectors import InspectorRecords
from kent_ops.core.permit import Permit, PermitStatus
from kent_ops.core.rules import (
    RULES,
    Condition,
    Situation,
    Terms,
    attendance_band,
    evaluate,
    held_in,
)
from kent_ops.core.rules.data import note_skew
from kent_ops.core.sensor_kinds import SENSOR_KINDS, Reading, is_reading
from kent_ops.core.seq import GAPS_KEPT, Gap
from kent_ops.core.steady import SteadyGateReadings
from kent_ops.core.timeutil import from_us, seconds, to_us
from kent_ops.core.wire import Decoded, Rejection, decode
from kent_ops.core.wire.adapter import AdapterRaw

__all__ = ["Changes", "Engine", "FeedResult"]

Clock = Literal["wall", "sensor"]
_ATTENDANCE_ONLY = frozenset(k.payload for k in SENSOR_KINDS if k.figure == "attendance")
"""Readings that move attendance alone: within its band the rules can wait (core/band.py)."""
_ATTENDANCE_KINDS = frozenset(k.record for k in SENSOR_KINDS if k.figure == "attendance")
Key = tuple[str, str | None]
Keys = Mapping[str, bytes] | None


class Engine(SteadyGateReadings, EngineOutputs):
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
        self._prefix = wire.Topics(permit.event_id).prefix
        self._sensor_kinds = permit.sensors
        self._ts_span = wire.sensor_clock_span(permit.windows) if clock == "sensor" else None
        self.counts = Counting.for_permit(permit)
        al = permit.alerting
        self._stale_us = {s: seconds(permit.stale_after_s(s)) for s in self.counts.sensors}
        self.orders = GateOrders(al.hold_at, al.resume_below)
        self._deadlines = Deadlines()
        self.alert_book = AlertBook(
            seconds(al.pending_s), seconds(al.clear_s), self._deadlines.evaluate_at
        )
        self.permit_status = PermitStatus(permit)
        self.dispersal = Dispersal(self.terms.dispersal_us)
        self.assembly = AssemblyTrack(permit.timezone)
        checklist = {item.item: item for item in applicable_items(permit)}
        self.inspectors = InspectorRecords(checklist)
        # The dashboard has no permit: the status names the items that apply (built once).
        self._checklist_items = [
            wire.ChecklistItemInfo(item=it.item, paragraph=it.paragraph, text=it.text, cite=it.cite)
            for it in checklist.values()
        ]
        self._now: int | None = None
        self._start: int | None = None
        self._skewed: dict[str, float] = {}
        self._last_record: int | None = None
        self._clerk_seen: set[tuple[str, str, wire.ClerkPermit]] = set()
        self.rejected = 0
        self.accepted = 0
        self.band = AttendanceBand()
        self.doubt = DoubtTrack()
        """When each figure was in doubt, and why (the report's indeterminate time)."""
        self.foresight = Foresight()
        """When attendance will reach ``hold_at``: advice for the gates, never a finding."""
        self.gaps: list[Gap] = []
        """Every gap in a sensor's ``seq`` (the first ``GAPS_KEPT``), for the report."""
        self._steady = self._steady_routes()
        """Each gate's count topic, with its gate and kind: the hot path (:meth:`feed`)."""

    # -- snapshots ----------------------------------------------------------------------

    def snapshot(self, service: Mapping[str, Any] | None = None) -> bytes:
        """The whole state as one document (:mod:`kent_ops.core.snapshot`); changes nothing."""
        return snapshots.take(self, service)

    @classmethod
    def restore(cls, permit: Permit, data: bytes, clock: Clock, keys: Keys = None) -> Engine:
        """Where the engine that took ``data`` stood; raises SnapshotRefused (replay all)."""
        engine = cls(permit, clock=clock, keys=keys)
        snapshots.load(engine, data)
        return engine

    # -- time ---------------------------------------------------------------------------

    @property
    def now(self) -> datetime | None:
        return None if self._now is None else from_us(self._now)

    def _begin(self, t: int) -> None:
        """The first instant the engine sees: silence is measured from here."""
        self._start = t
        self._now = t
        boundaries = [b for window in self.terms.windows for b in window]
        boundaries += [change.at for change in self.permit_status.changes]
        for boundary in boundaries:
            if boundary > t:
                self._deadlines.evaluate_at(boundary)
        for sensor, live in self.counts.sensors.items():
            if live.watched_for_silence:
                self._deadlines.stale_at(sensor, t + self._stale_us[sensor])

    def _advance(self, t: int) -> None:
        """Visit every deadline up to ``t`` in order, then stand at ``t``."""
        if self._now is None:
            self._begin(t)
            self._evaluate()  # what time alone makes true (inside a window) holds from here
            return
        for d, rule_pass, sensors in self._deadlines.pop_until(t):
            for sensor in sensors:
                rule_pass |= self._check_stale(sensor, d)
            if d > self._now:
                self._now = d
            if rule_pass:
                self._evaluate()
        if t > self._now:
            self._now = t

    def _check_stale(self, sensor: str, d: int) -> bool:
        changed, due = self.counts.check_silence(sensor, d, self._stale_us[sensor], self._start)
        if due is not None:
            self._deadlines.stale_at(sensor, due)
        return changed

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
        steady = self._steady.get(topic)
        if steady is not None:
            result = self._feed_steady(steady, payload, received_at, record_id)
            if result is not None:
                return result
        received = to_us(received_at)
        decoded = decode(self._prefix, self._sensor_kinds, topic, payload, self.keys, self._ts_span)
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
        if now is None or self._deadlines.due_by(t):
            self._advance(t)
        elif t > now:
            self._now = t
        if record_id is not None:
            self._last_record = record_id
        if isinstance(decoded, Rejection):
            self.rejected += 1
            return FeedResult(False, decoded.reason, decoded.kind, from_us(t))
        at = received_at if t == received else from_us(t)
        band = self.band
        band.counts_only = False
        if decoded.kind not in _ATTENDANCE_KINDS:
            self._fold_stretch()  # before a badge or an adjustment changes what the peak meant
        changes = self.counts.changes
        try:
            reason = self._apply(decoded, t, received, record_id)
        except Refused as refused:
            self.rejected += 1
            if self.counts.changes != changes:
                self._evaluate()  # a refused reading still ends its sensor's silence
            return FeedResult(False, str(refused), decoded.kind, at)
        self.accepted += 1
        forecast = self.foresight.observe(t, self.counts, decoded.source, self.orders.hold_at)
        self.orders.changed |= forecast  # the gate commands carry the forecast
        terms = self.terms
        if not band.defers(
            self.counts, terms.max_collective, self.dispersal, self._now, terms.several_properties
        ):
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
        match decoded.record:
            case wire.Availability(online=online):
                self.counts.set_available(decoded.source, online)
            case AdapterRaw():
                pass  # a raw record moves nothing
            case _:
                self.rejected += 1
                why = "message has no ts to time it by"
                return FeedResult(False, why, decoded.kind, received_at)
        self.accepted += 1
        return FeedResult(True, None, decoded.kind, received_at)

    def _apply(self, msg: Decoded, t: int, received: int, record: int | None) -> str | None:
        """Move the counts; return a note for an accepted message that changed nothing."""
        rec = msg.record
        if is_reading(rec):
            return self._apply_reading(msg.source, rec, t, received, record)
        match rec:
            case wire.Availability(online=online):
                self.counts.set_available(msg.source, online)
                return None
            case wire.ClerkPermit():
                return self._apply_clerk(msg.source, rec, t)
            case wire.NotifierSent() | AdapterRaw():
                return None  # the log proves who was told what, when, and what a device said
        return self.inspectors.apply(
            msg.source, msg.kind, msg.record, from_us(t), self.alert_book, self.counts
        )

    def _apply_reading(
        self, sensor: str, rec: Reading, t: int, received: int, record: int | None
    ) -> str | None:
        """A reading of any kind of sensor (core/sensor_kinds/table.py): counted, its sensor heard
        (a refused one too: a sensor whose every message is refused is stuck, not silent)."""
        counts = self.counts
        skew_changed = self._note_skew(sensor, rec, received)
        clamped = counts.clamped
        changes = counts.changes
        outcome = counts.apply(sensor, rec, t)
        effect = outcome.effect
        self._heard(sensor, t, effect in ("counted", "restart"))
        if effect == "rejected":
            raise Refused(outcome.reason or "refused")
        if outcome.missing is not None:
            self._gap(sensor, rec, outcome.missing, t, record)
        if effect == "restart" and sensor in counts.gates:  # stitched, and a finding
            restarts = counts.gates[sensor].restarts
            self.alert_book.event(
                ("counter-reset", sensor),
                t,
                Condition({"seq": rec.seq, "restarts": restarts}, {}, 1),
                record=record,
            )
        elif type(rec) in _ATTENDANCE_ONLY:
            # A stale gate heard again, a clamp, any doubt begun or ended: not counts only.
            changed = skew_changed or counts.changes != changes or counts.clamped != clamped
            self.band.counts_only = not changed
        return outcome.reason

    def _gap(
        self, sensor: str, rec: Reading, missing: tuple[int, int], t: int, record: int | None
    ) -> None:
        """``sensor-gap`` at once; a roster unknown until re-stated or its window ends."""
        until = min((end for _, end in self.terms.windows if end > t), default=None)
        n = missing[1] - missing[0] + 1
        cond = Condition(self.counts.gap_found(sensor, rec, missing, until), {}, n)
        self.alert_book.event(("sensor-gap", sensor), t, cond, record=record)
        if len(self.gaps) < GAPS_KEPT:
            self.gaps.append(Gap(sensor, *missing, t, record))

    def broker_restarted(self, how: str) -> None:
        """A ``broker-restarted`` record, fed live and on replay at one point of the log."""
        self.counts.broker_restarted(how)
        if self._now is not None:
            self._fold_stretch()
            self._evaluate()

    def _apply_clerk(self, who: str, rec: wire.ClerkPermit, t: int) -> str | None:
        """The Clerk changes the permit's status from an instant on (permit:G)."""
        fingerprint = (who, "clerk-permit", rec)
        if fingerprint in self._clerk_seen:
            return "duplicate: this change of the permit was already recorded"
        effective = self.permit_status.apply(who, rec, t)
        self._clerk_seen.add(fingerprint)
        if effective > t:
            self._deadlines.evaluate_at(effective)
        return None

    def _heard(self, sensor: str, t: int, counted: bool) -> None:
        self.counts.heard(sensor, t, counted)
        if not self._deadlines.watching(sensor) and self.counts.sensors[sensor].watched_for_silence:
            self._deadlines.stale_at(sensor, t + self._stale_us[sensor])

    def _note_skew(self, sensor: str, rec: Any, received: int) -> bool:
        """Track sensors whose clock is off by more than 30 s; True if that set changed."""
        return self.clock == "wall" and note_skew(self._skewed, sensor, to_us(rec.ts), received)

    # -- rules ----------------------------------------------------------------------------

    def _evaluate(self) -> None:
        t = self._now
        assert t is not None
        counts = self.counts
        if counts.suspect:
            counts.day_over(t)
        self._fold_stretch()
        attendance = counts.attendance
        terms = self.terms
        issued = self.permit_status.issued(t)
        inside = terms.inside_window(t)
        ended = cover_end(terms.windows, self.permit_status, t) if terms.regulated else None
        allowance_end = self.dispersal.update(ended, counts.entries, t)
        if allowance_end is not None:
            self._deadlines.evaluate_at(allowance_end)
        on = assembly_on(attendance, inside, terms.regulated)
        midnight = self.assembly.update(on, t, terms.inside_window)
        if midnight is not None:
            self._deadlines.evaluate_at(midnight)
        s = Situation(
            terms=terms,
            counts=counts,
            t=t,
            attendance=attendance,
            inside=inside,
            issued=issued,
            overnight_from=self.assembly.overnight_from,
            deficient=self.inspectors.deficient,
            skewed=self._skewed,
            allowance=self.dispersal.view(t),
        )
        held = held_in(s)
        doubts = doubts_now(counts, self.inspectors.adjustments, terms.tz)
        self.doubt.update(t, doubts)
        judged: dict[Key, Judged] = {key: judge(RULES[key[0]], key[1], s, doubts) for key in held}
        book = self.alert_book
        ended_alerts = book.update(t, held, judged, record=self._last_record)
        for alert in ended_alerts:  # the figures that ended it, not the last breaching ones
            ending = RULES[alert.rule].measure(s, alert.subject)
            if ending is not None:
                alert.observed, alert.required = ending.observed, ending.required
        orders = self.orders
        uncovered = None
        if not s.covered:
            uncovered = why_uncovered(
                terms.windows, self.permit_status, t, terms.tz, terms.regulated
            )
        if orders.update(
            attendance, permit_hold=("permit-required", None) in held, uncovered=uncovered
        ):
            self.foresight.refresh(attendance, orders.hold_at)  # the new order carries it
        limits = attendance_band(
            terms,
            counts,
            t,
            issued=issued,
            allowance=s.allowance,
            admit_capacity=orders.admit_capacity,
            hold_at=orders.hold_at,
            resume_below=orders.resume_below,
        )
        self.band.evaluated(limits, counts.entries > terms.max_collective)

    def _conditions_at(
        self, attendance: int, at: int, split: dict[str, int] | None = None
    ) -> dict[Key, Condition]:
        """What held at ``at`` with this attendance (and these persons on each property),
        everything else as it is now: of the rules with a live or pending alert, the only
        ones whose worst figures it can move (:meth:`AlertBook.observe_worst`)."""
        book = self.alert_book
        only = {rule for rule, _ in book.live} | {rule for rule, _ in book.pending}
        if not only:
            return {}
        return evaluate(
            self.terms,
            self.counts,
            at,
            issued=self.permit_status.issued(at),
            overnight_from=self.assembly.overnight_from,
            deficient=self.inspectors.deficient,
            skewed=self._skewed,
            allowance=self.dispersal.view(at),
            attendance=attendance,
            split=split,
            only=only,
        )
