"""The alert lifecycle: pending → active → ended → cleared, with exact times.

A condition (a rule and its subject) that starts holding is *pending*; once it has held
``pending_s`` it becomes an alert with a new id, ``since`` the moment it first held and
``raised_at = since + pending_s``. When it stops holding the alert is *ended*
(``ended_at``); if it returns within ``clear_s`` the same alert continues, otherwise it
is *cleared* at ``ended_at + clear_s`` and a later return opens a new id. Instants are
computed from the deadlines, not from whenever the caller happened to look, so a live
run and its replay agree to the microsecond.

While a condition holds, each rule pass also says what it rests on (core/basis.py): a
condition is split into *stretches*, one per basis, from ``since`` on; the alert's
``uncertain`` is its last stretch's (judged now, not once when raised). A condition of
the staffing rules that ends before ``pending_s`` raises no alert but is kept as a
*brief gap* (:attr:`AlertBook.brief`): the law asks for doctors and nurses at all times.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kent_ops.core import wire
from kent_ops.core.basis import MEASURED, Judged
from kent_ops.core.rules import RULES, Condition
from kent_ops.core.timeutil import from_us

__all__ = ["BRIEF_RULES", "Alert", "AlertBook", "Brief", "Stretch"]

Key = tuple[str, str | None]

BRIEF_RULES = frozenset({"doctor-on-duty", "nurse-ratio", "application-staffing"})
"""Rules whose every shortfall is kept on the record, however brief: doctors and nurses
are required "at all times" (permit:C(9); docs/law.md, "At all times")."""


@dataclass(slots=True)
class Stretch:
    """A part of a condition's time with one basis: ``[start, end)``, end None while open."""

    start: int
    end: int | None
    basis: str
    rests_on: tuple[str, ...] = ()

    def to_record(self) -> wire.Stretch:
        return wire.Stretch(
            start=from_us(self.start),
            end=_time(self.end),
            basis=self.basis,
            rests_on=list(self.rests_on),
        )


def _judge(stretches: list[Stretch], t: int, judged: Judged) -> bool:
    """Bring ``stretches`` to instant ``t`` with the basis judged now; True if it changed.

    A stretch begun at this very instant is re-judged in place (and merged into the one
    before when that had the same basis), so no stretch is ever empty.
    """
    last = stretches[-1] if stretches else None
    if last is not None and last.end is None:
        if last.basis == judged.basis and last.rests_on == judged.rests_on:
            return False
        if last.start == t:
            before = stretches[-2] if len(stretches) > 1 else None
            if before is not None and before.end == t and _same(before, judged):
                stretches.pop()
                before.end = None
            else:
                last.basis, last.rests_on = judged.basis, judged.rests_on
            return True
        last.end = t
    elif last is not None and last.end == t and _same(last, judged):
        last.end = None  # the condition is back at the instant it ended: one stretch
        return True
    stretches.append(Stretch(t, None, judged.basis, judged.rests_on))
    return True


def _same(stretch: Stretch, judged: Judged) -> bool:
    return stretch.basis == judged.basis and stretch.rests_on == judged.rests_on


def _close(stretches: list[Stretch], t: int) -> None:
    """End the open stretch at ``t``; one begun at this very instant held for no time (the
    staff changed several times at once) and is dropped, the one before ending here."""
    if not stretches or stretches[-1].end is not None:
        return
    if stretches[-1].start == t and len(stretches) > 1 and stretches[-2].end == t:
        stretches.pop()
        return
    stretches[-1].end = t


@dataclass(slots=True)
class Brief:
    """A staffing shortfall that ended before it could become an alert (under
    ``pending_s``): not a finding, but on the record (permit:C(9) "at all times")."""

    rule: str
    subject: str | None
    since: int
    until: int | None
    observed: dict[str, Any]
    required: dict[str, Any]
    stretches: list[Stretch]


def worst_rank(cond: Condition) -> tuple[float, float]:
    """How bad an observation is: its magnitude, ties going to the larger attendance.

    A strict order on figures makes the worst one the maximum of everything seen, which
    does not depend on the order or grouping in which observations are offered; so the
    live engine (which looks often) and a replay (which does not) keep the same worst.
    """
    return (cond.magnitude, cond.observed.get("attendance", 0))


@dataclass(slots=True)
class Alert:
    """One raised alert, as inspectors and the Town Board see it."""

    id: str
    rule: str
    subject: str | None
    since: int
    raised_at: int
    observed: dict[str, Any]
    required: dict[str, Any]
    worst_observed: dict[str, Any]
    worst_required: dict[str, Any]
    worst_rank: tuple[float, float]
    evidence_record: int | None
    stretches: list[Stretch]
    ended_at: int | None = None
    cleared_at: int | None = None
    acknowledged: list[wire.Acknowledgement] = field(default_factory=list)
    notes: list[wire.NoteEntry] = field(default_factory=list)

    @property
    def state(self) -> wire.AlertState:
        return "cleared" if self.cleared_at is not None else "active"

    @property
    def uncertain(self) -> bool:
        """Its figures are indeterminate as it stands now (its last stretch)."""
        return bool(self.stretches) and self.stretches[-1].basis == "indeterminate"

    def observe(self, cond: Condition) -> bool:
        """Take the figures seen now; True if they differ from the ones it showed."""
        moved = cond.observed != self.observed or cond.required != self.required
        self.observed = cond.observed
        self.required = cond.required
        self.offer_worst(cond)
        return moved

    def offer_worst(self, cond: Condition) -> None:
        rank = worst_rank(cond)
        if rank > self.worst_rank:
            self.worst_rank = rank
            self.worst_observed = cond.observed
            self.worst_required = cond.required

    def to_record(self) -> wire.Alert:
        """The alert as published, citing its record by id (the log's holder adds the hash)."""
        rule = RULES[self.rule]
        return wire.Alert(
            id=self.id,
            rule=self.rule,
            subject=self.subject,
            cite=rule.cite_for(self.subject),
            severity=rule.severity,
            state=self.state,
            since=from_us(self.since),
            raised_at=from_us(self.raised_at),
            ended_at=_time(self.ended_at),
            cleared_at=_time(self.cleared_at),
            observed=self.observed,
            required=self.required,
            worst=wire.Worst(observed=self.worst_observed, required=self.worst_required),
            message=rule.sentence(self.subject, self.observed, self.required),
            acknowledged=list(self.acknowledged),
            notes=list(self.notes),
            evidence=wire.EvidenceRef(record=self.evidence_record),
            uncertain=self.uncertain,
            stretches=[x.to_record() for x in self.stretches],
        )


def _time(us: int | None) -> datetime | None:
    return None if us is None else from_us(us)


@dataclass(slots=True)
class _Pending:
    since: int
    record: int | None
    cond: Condition
    stretches: list[Stretch] = field(default_factory=list)


class AlertBook:
    """Every alert of one event and the conditions waiting to become alerts.

    ``schedule`` is called with each future instant at which the book must be looked at
    again (a pending condition maturing, an ended alert clearing), so the engine can
    visit exactly those instants. ``cite`` is called with the evidence record a new
    condition starts at, so the engine keeps that record's hash (and no other).
    """

    def __init__(
        self,
        pending_us: int,
        clear_us: int,
        schedule: Callable[[int], None],
    ) -> None:
        self.pending_us = pending_us
        self.clear_us = clear_us
        self._schedule = schedule
        self.pending: dict[Key, _Pending] = {}
        self.live: dict[Key, Alert] = {}
        self.alerts: dict[str, Alert] = {}
        self.changed: set[str] = set()
        self._next_number = 1
        self.brief: list[Brief] = []
        """Staffing shortfalls that ended before ``pending_s`` (:data:`BRIEF_RULES`)."""

    def _delay(self, rule: str) -> int:
        return self.pending_us if RULES[rule].waits else 0

    def _new_alert(
        self,
        key: Key,
        since: int,
        raised_at: int,
        cond: Condition,
        record: int | None,
        stretches: list[Stretch],
    ) -> Alert:
        alert_id = f"A-{self._next_number:04d}"
        self._next_number += 1
        alert = Alert(
            id=alert_id,
            rule=key[0],
            subject=key[1],
            since=since,
            raised_at=raised_at,
            observed=cond.observed,
            required=cond.required,
            worst_observed=cond.observed,
            worst_required=cond.required,
            worst_rank=worst_rank(cond),
            evidence_record=record,
            stretches=stretches,
        )
        self.alerts[alert_id] = alert
        self.live[key] = alert
        self.changed.add(alert_id)
        return alert

    def update(
        self,
        t: int,
        held: dict[Key, Condition],
        judged: Mapping[Key, Judged],
        *,
        record: int | None,
    ) -> list[Alert]:
        """Bring every condition and alert to instant ``t`` given what holds now and what
        each rests on (``judged``; a key it lacks is measured).

        Returns the alerts it ended: their ending figures are the caller's to set.
        """
        ended: list[Alert] = []
        live = self.live
        pending = self.pending
        for key, cond in held.items():
            basis = judged.get(key, MEASURED)
            alert = live.get(key)
            if alert is not None:
                if alert.ended_at is not None:
                    alert.ended_at = None
                    self.changed.add(alert.id)
                if _judge(alert.stretches, t, basis):
                    self.changed.add(alert.id)
                if alert.observe(cond):
                    self.changed.add(alert.id)  # its live figures are what it shows
                continue
            waiting = pending.get(key)
            if waiting is None:
                waiting = pending[key] = _Pending(t, record, cond)
                delay = self._delay(key[0])
                if delay:
                    self._schedule(t + delay)
            elif worst_rank(cond) > worst_rank(waiting.cond):
                waiting.cond = cond
            _judge(waiting.stretches, t, basis)
            matures = waiting.since + self._delay(key[0])
            if t >= matures:
                del pending[key]
                alert = self._new_alert(
                    key, waiting.since, matures, waiting.cond, waiting.record, waiting.stretches
                )
                alert.observe(cond)
        if len(pending) > len(held) or any(k not in held for k in pending):
            for key in [k for k in pending if k not in held]:
                self._lapse(key, pending.pop(key), t)
        if len(live) != len(held) or any(k not in held for k in live):
            self._end_missing(t, held, ended)
        return ended

    def _lapse(self, key: Key, waiting: _Pending, t: int) -> None:
        """A condition gone before it matured: a staffing one stays on the record."""
        if key[0] not in BRIEF_RULES:
            return
        _close(waiting.stretches, t)
        cond = waiting.cond
        self.brief.append(
            Brief(key[0], key[1], waiting.since, t, cond.observed, cond.required, waiting.stretches)
        )

    def brief_gaps(self) -> list[Brief]:
        """Every brief staffing gap so far, with any still short of ``pending_s`` now
        (their ``until`` None), in the order they began."""
        open_ = [
            Brief(k[0], k[1], p.since, None, p.cond.observed, p.cond.required, p.stretches)
            for k, p in self.pending.items()
            if k[0] in BRIEF_RULES
        ]
        return sorted([*self.brief, *open_], key=lambda b: (b.since, b.rule))

    def _end_missing(self, t: int, held: dict[Key, Condition], ended: list[Alert]) -> None:
        """Alerts whose condition no longer holds end now, and clear ``clear_s`` later."""
        live = self.live
        for key, alert in list(live.items()):
            if key in held:
                continue
            if alert.ended_at is None:
                alert.ended_at = t
                _close(alert.stretches, t)
                self.changed.add(alert.id)
                ended.append(alert)
                self._schedule(t + self.clear_us)
            elif t >= alert.ended_at + self.clear_us:
                alert.cleared_at = alert.ended_at + self.clear_us
                del live[key]
                self.changed.add(alert.id)

    def observe_worst(self, held: dict[Key, Condition]) -> None:
        """Offer figures seen between evaluations; only an alert's worst figure can change."""
        for key, cond in held.items():
            alert = self.live.get(key)
            if alert is not None:
                alert.offer_worst(cond)
            waiting = self.pending.get(key)
            if waiting is not None and worst_rank(cond) > worst_rank(waiting.cond):
                waiting.cond = cond

    def event(self, key: Key, t: int, cond: Condition, *, record: int | None) -> None:
        """A momentary condition (a counter restart): raised at once, cleared ``clear_s`` later."""
        alert = self.live.get(key)
        if alert is not None:
            alert.ended_at = t
            alert.observe(cond)
            self.changed.add(alert.id)
        else:
            alert = self._new_alert(key, t, t, cond, record, [Stretch(t, t, "measured")])
            alert.ended_at = t
        self._schedule(t + self.clear_us)

    def acknowledge(self, alert_id: str, by: str, at: datetime, comment: str) -> bool:
        alert = self.alerts.get(alert_id)
        if alert is None:
            return False
        _keep(alert.acknowledged, wire.Acknowledgement(by=by, at=at, comment=comment))
        self.changed.add(alert_id)
        return True

    def note(self, alert_id: str, entry: wire.NoteEntry) -> bool:
        alert = self.alerts.get(alert_id)
        if alert is None:
            return False
        _keep(alert.notes, entry)
        self.changed.add(alert_id)
        return True

    def pending_list(self) -> list[wire.PendingCondition]:
        return [
            wire.PendingCondition(rule=rule, subject=subject, since=from_us(p.since))
            for (rule, subject), p in sorted(self.pending.items(), key=lambda kv: kv[1].since)
        ]

    def active_ids(self) -> list[str]:
        return sorted(a.id for a in self.live.values())


KEPT_ON_ALERT = 20
"""Acknowledgements (and notes) an alert carries: the first and the latest, so one alert's
message stays far below the broker's packet limit however many are sent; the evidence
log and the report's inspector section keep every one."""


def _keep(entries: list[Any], entry: Any) -> None:
    """Append ``entry``, keeping the first and the latest ``KEPT_ON_ALERT - 1``."""
    entries.append(entry)
    if len(entries) > KEPT_ON_ALERT:
        del entries[1]


def raised_outside(
    alert_id: str,
    rule_name: str,
    at: datetime,
    observed: dict[str, Any],
    required: dict[str, Any],
    *,
    subject: str | None = None,
    ended: bool = False,
) -> wire.Alert:
    """An active alert no rule pass raised (the service's own ``S-`` alerts): held from
    ``at``, its worst figures its first, its sentence its rule's; ended at once if
    ``ended`` (a finding that is a moment, as ``counter-reset`` is)."""
    rule = RULES[rule_name]
    at = at.astimezone(UTC)
    return wire.Alert(
        id=alert_id,
        rule=rule_name,
        subject=subject,
        cite=rule.cite,
        severity=rule.severity,
        state="active",
        since=at,
        raised_at=at,
        ended_at=at if ended else None,
        observed=observed,
        required=required,
        worst=wire.Worst(observed=observed, required=required),
        message=rule.sentence(subject, observed, required),
    )
