"""The alert lifecycle: pending → active → ended → cleared, with exact times.

A condition (a rule and its subject) that starts holding is *pending*; once it has held
``pending_s`` it becomes an alert with a new id, ``since`` the moment it first held and
``raised_at = since + pending_s``. When it stops holding the alert is *ended*
(``ended_at``); if it returns within ``clear_s`` the same alert continues, otherwise it
is *cleared* at ``ended_at + clear_s`` and a later return opens a new id. Instants are
computed from the deadlines, not from whenever the caller happened to look, so a live
run and its replay agree to the microsecond.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kent_ops.core import wire
from kent_ops.core.rules import RULES, Condition
from kent_ops.core.timeutil import from_us

__all__ = ["Alert", "AlertBook"]

Key = tuple[str, str | None]


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
    uncertain: bool
    evidence_record: int | None
    ended_at: int | None = None
    cleared_at: int | None = None
    acknowledged: list[wire.Acknowledgement] = field(default_factory=list)
    notes: list[wire.NoteEntry] = field(default_factory=list)

    @property
    def state(self) -> wire.AlertState:
        return "cleared" if self.cleared_at is not None else "active"

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
        )


def _time(us: int | None) -> datetime | None:
    return None if us is None else from_us(us)


@dataclass(slots=True)
class _Pending:
    since: int
    record: int | None
    cond: Condition


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

    def _delay(self, rule: str) -> int:
        return self.pending_us if RULES[rule].waits else 0

    def _new_alert(
        self,
        key: Key,
        since: int,
        raised_at: int,
        cond: Condition,
        record: int | None,
        uncertain: bool,
    ) -> Alert:
        alert_id = f"A-{self._next_number:04d}"
        # Only a rule whose figures come from the gate counts is in doubt while a
        # counter is down; an inspector's observation or a lot sensor's is not.
        uncertain = uncertain and RULES[key[0]].counts_attendance
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
            uncertain=uncertain,
            evidence_record=record,
        )
        self.alerts[alert_id] = alert
        self.live[key] = alert
        self.changed.add(alert_id)
        return alert

    def update(
        self, t: int, held: dict[Key, Condition], *, uncertain: bool, record: int | None
    ) -> list[Alert]:
        """Bring every condition and alert to instant ``t`` given what holds now.

        Returns the alerts it ended: their ending figures are the caller's to set.
        """
        ended: list[Alert] = []
        live = self.live
        pending = self.pending
        for key, cond in held.items():
            alert = live.get(key)
            if alert is not None:
                if alert.ended_at is not None:
                    alert.ended_at = None
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
            matures = waiting.since + self._delay(key[0])
            if t >= matures:
                del pending[key]
                alert = self._new_alert(
                    key, waiting.since, matures, waiting.cond, waiting.record, uncertain
                )
                alert.observe(cond)
        if len(pending) > len(held) or any(k not in held for k in pending):
            for key in [k for k in pending if k not in held]:
                del pending[key]
        if len(live) != len(held) or any(k not in held for k in live):
            self._end_missing(t, held, ended)
        return ended

    def _end_missing(self, t: int, held: dict[Key, Condition], ended: list[Alert]) -> None:
        """Alerts whose condition no longer holds end now, and clear ``clear_s`` later."""
        live = self.live
        for key, alert in list(live.items()):
            if key in held:
                continue
            if alert.ended_at is None:
                alert.ended_at = t
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

    def event(
        self, key: Key, t: int, cond: Condition, *, uncertain: bool, record: int | None
    ) -> None:
        """A momentary condition (a counter restart): raised at once, cleared ``clear_s`` later."""
        alert = self.live.get(key)
        if alert is not None:
            alert.ended_at = t
            alert.observe(cond)
            self.changed.add(alert.id)
        else:
            alert = self._new_alert(key, t, t, cond, record, uncertain)
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
