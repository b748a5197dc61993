"""How much one source may make the evidence log grow by with messages it gets rejected.

Every message is evidence, but a rejected one changes no figure, and one sensor's
password is enough to send them as fast as the network carries them. So each source
(named from its topic: ``sensor-{id}`` for a gate, lot, staff station or availability,
``inspector-{id}``, ``clerk-{id}``, ``notifier-{id}``) may add ``flood_budget_bytes``
of rejected records to the log every ``flood_period_s``. Once a source has used its
budget in a period, its further messages that the decoder alone rejects are not stored
one by one: they are counted, with their sizes and a SHA-256 over the SHA-256 of each
(in arrival order), into a ``flood-summary`` system record at the end of the period
(and before each engine snapshot, and at a clean stop). They count in the status's
``rejected`` as they come, and a replay adds each summary's count. The first time a
source goes over, the log gets a ``flood-started`` system record and an
``evidence-flood`` alert (data) is raised, numbered ``S-`` like the service's other
alerts; it is cleared after a period in which the source stayed within its budget, and
at a clean stop. A run that stops abruptly during a flood loses the count since the last
summary; the next start says so in a ``flood-count-lost`` record and clears the alert
after a quiet period. Accepted messages, and messages only the engine's state rejects (those
its replay must see), are always stored whole. docs/protocol.md describes it.

This module is bookkeeping only; the worker appends what it returns. A batch whose
commit the disk refuses is fed again later, so everything a batch changed here can be
undone (:meth:`FloodGuard.begin`, :meth:`FloodGuard.rollback`, :meth:`FloodGuard.commit`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import msgspec

from kent_ops.core import wire
from kent_ops.core.alerts import raised_outside
from kent_ops.core.sensor_kinds import SENSOR_KINDS
from kent_ops.evidence.system import FloodCountLost, FloodStarted, FloodSummary
from kent_ops.service.flush import Lead

__all__ = ["FLOOD_RULE", "FloodGuard", "Records", "source_of"]

log = logging.getLogger("aggregator")

FLOOD_RULE = "evidence-flood"
RECORD_OVERHEAD = 160
"""Bytes a record costs beyond its payload, topic and reason (id, time, hash, SQLite)."""
MAX_SOURCES = 10_000
"""Sources tracked in one period; past that (made-up ids on an open broker) they share one."""
MAX_LISTED = 20
"""Distinct reasons and topics a summary names; the rest are counted under ``(others)``."""

_ROLES = {
    **{kind.area: "sensor" for kind in SENSOR_KINDS},  # each kind's readings (sensor-{id})
    "sensor": "sensor",
    "inspector": "inspector",
    "clerk": "clerk",
    "notifier": "notifier",
}

Records = list[Lead]
"""Records for a flush's ``lead`` (:class:`kent_ops.service.flush.FlushPlan`)."""


def source_of(prefix: str, topic: str) -> str:
    """The source a topic names: the account the broker's access list lets publish there."""
    rest = topic[len(prefix) + 1 :] if topic.startswith(prefix + "/") else ""
    area, _, tail = rest.partition("/")
    who = tail.partition("/")[0]
    role = _ROLES.get(area)
    if role is None or not who:
        return "unknown-topic"
    return f"{role}-{who}"[:200]


@dataclass(slots=True)
class _Source:
    """One source's period: its rejected bytes stored, what was summarised, its alert."""

    used: int = 0
    count: int = 0
    size: int = 0
    largest: int = 0
    digest: Any = field(default_factory=hashlib.sha256)
    first_at: datetime | None = None
    last_at: datetime | None = None
    reasons: dict[str, int] = field(default_factory=dict)
    topics: dict[str, int] = field(default_factory=dict)
    alert: wire.Alert | None = None
    counted: int = 0
    """Messages counted, not stored, since its alert was raised (every period)."""
    counted_bytes: int = 0

    def copy(self) -> _Source:
        return dataclasses.replace(
            self, digest=self.digest.copy(), reasons=dict(self.reasons), topics=dict(self.topics)
        )


def _tally(counts: dict[str, int], key: str) -> None:
    if key in counts or len(counts) < MAX_LISTED:
        counts[key] = counts.get(key, 0) + 1
    else:
        counts["(others)"] = counts.get("(others)", 0) + 1


class FloodGuard:
    """Each source's budget in the current period, its summary, and its alert.

    Args:
        budget: rejected bytes a source may add to the log per period.
        period_s: the period, in seconds of the monotonic clock.
        number: hands out the next ``S-`` alert id.
        mono: the monotonic clock.
    """

    def __init__(
        self, budget: int, period_s: float, number: Callable[[], str], mono: Callable[[], float]
    ) -> None:
        self.budget = budget
        self.period_s = period_s
        self._number = number
        self._mono = mono
        self._period_start = mono()
        self.exhausted: set[str] = set()
        """Sources over their budget in this period: their rejected messages are counted."""
        self._sources: dict[str, _Source] = {}
        self._undo: dict[str, _Source | None] | None = None
        self._undo_exhausted: set[str] = set()
        self._lead: Records = []
        self._publish: list[wire.Alert] = []

    # -- a batch, undone if its commit is refused ------------------------------------------

    def begin(self) -> None:
        """Start recording what to undo should the coming commit be refused."""
        self._undo = {}
        self._undo_exhausted = set(self.exhausted)
        self._lead = []
        self._publish = []

    def rollback(self) -> None:
        """The commit was refused: back to where :meth:`begin` found it."""
        for source, before in (self._undo or {}).items():
            if before is None:
                self._sources.pop(source, None)
            else:
                self._sources[source] = before
        self.exhausted = self._undo_exhausted
        self._undo = None
        self._lead = []
        self._publish = []

    def commit(self) -> list[wire.Alert]:
        """The commit reached the disk: the alerts to publish now."""
        published = self._publish
        self._undo = None
        self._lead = []
        self._publish = []
        return published

    def lead(self) -> Records:
        """The records this batch adds (a flood started, an alert raised or cleared)."""
        return list(self._lead)

    def key(self, source: str) -> str:
        """The name a source is tracked under (one shared name once too many are)."""
        if source in self._sources or len(self._sources) < MAX_SOURCES:
            return source
        return "unknown-topic"

    def _touch(self, source: str) -> _Source:
        state = self._sources.get(source)
        if self._undo is not None and source not in self._undo:
            self._undo[source] = None if state is None else state.copy()
        if state is None:
            state = self._sources[source] = _Source()
        return state

    # -- messages ---------------------------------------------------------------------------

    def charge(self, source: str, cost: int, at: datetime) -> None:
        """A rejected record of ``cost`` bytes was stored for ``source``."""
        source = self.key(source)
        state = self._touch(source)
        state.used += cost
        if state.used < self.budget or source in self.exhausted:
            return
        self.exhausted.add(source)
        if state.alert is not None:
            return  # still flooding from an earlier period: its alert is active already
        state.alert = self._alert(source, at, state.used)
        log.warning("alert %s %s: %s", state.alert.id, FLOOD_RULE, state.alert.message)
        started = FloodStarted(
            source=source,
            since=at.astimezone(UTC).isoformat(),
            budget_bytes=self.budget,
            period_s=self.period_s,
            alert=state.alert.id,
        )
        self._lead += [started, state.alert]
        self._publish.append(state.alert)

    def count(self, source: str, topic: str, payload: bytes, reason: str, at: datetime) -> None:
        """A rejected message of an exhausted source: counted, hashed, not stored."""
        state = self._touch(self.key(source))
        state.count += 1
        state.size += len(payload)
        state.largest = max(state.largest, len(payload))
        state.digest.update(hashlib.sha256(payload).digest())
        state.first_at = state.first_at or at
        state.last_at = at
        _tally(state.reasons, reason[:200])
        _tally(state.topics, topic[:300])

    # -- periods ----------------------------------------------------------------------------

    def period_due(self) -> bool:
        return self._mono() - self._period_start >= self.period_s

    def summaries(self) -> None:
        """Write down what was counted so far (before an engine snapshot, which counts them)."""
        for source, state in list(self._sources.items()):
            if state.count:
                state = self._touch(source)
                self._lead.append(self._summary(source, state))
                state.counted += state.count
                state.counted_bytes += state.size
                state.count = state.size = state.largest = 0
                state.digest = hashlib.sha256()
                state.first_at = state.last_at = None
                state.reasons, state.topics = {}, {}

    def end_period(self, now: datetime, *, closing: bool = False) -> None:
        """Summarise each source's counted messages; clear the alerts of quiet sources.

        ``closing`` (a clean stop) clears every alert. Adds to :meth:`lead`.
        """
        self.summaries()
        for source in list(self._sources):
            state = self._touch(source)
            quiet = source not in self.exhausted
            if state.alert is not None and (quiet or closing):
                cleared = self._cleared(state.alert, now, state)
                self._lead.append(cleared)
                self._publish.append(cleared)
                state.alert = None
            if state.alert is None:
                del self._sources[source]
            else:
                self._sources[source] = _Source(
                    alert=state.alert, counted=state.counted, counted_bytes=state.counted_bytes
                )
        self.exhausted = set()
        self._period_start = self._mono()

    def _summary(self, source: str, state: _Source) -> FloodSummary:
        assert state.first_at is not None
        assert state.last_at is not None
        return FloodSummary(
            source=source,
            first_at=state.first_at.astimezone(UTC).isoformat(),
            last_at=state.last_at.astimezone(UTC).isoformat(),
            messages=state.count,
            size=state.size,
            largest=state.largest,
            sha256=state.digest.hexdigest(),
            reasons=state.reasons,
            topics=state.topics,
            alert=state.alert.id if state.alert is not None else None,
        )

    # -- alerts -----------------------------------------------------------------------------

    def active(self) -> list[wire.Alert]:
        """The active flood alerts (logged again after each engine snapshot)."""
        return [s.alert for s in self._sources.values() if s.alert is not None]

    def adopt(self, retained: Mapping[str, bytes]) -> Records:
        """Take over the flood alerts a run that stopped abruptly left active.

        Returns a ``flood-count-lost`` record for each: that run may have counted
        messages after its last ``flood-summary`` record that no record holds.
        """
        notes: Records = []
        for payload in retained.values():
            try:
                alert = wire.decode_json(wire.Alert, payload)
            except msgspec.DecodeError:
                continue
            if alert.rule == FLOOD_RULE and alert.state == "active" and alert.subject:
                self._sources.setdefault(alert.subject, _Source()).alert = alert
                lost = FloodCountLost(
                    source=alert.subject,
                    alert=alert.id,
                    why="the service stopped abruptly during this flood: rejected messages "
                    "it counted after this source's last flood-summary record are in no record",
                )
                notes.append(lost)
        return notes

    def decorate(self, status: wire.Status) -> wire.Status:
        """The status with the active flood alerts among its active alerts."""
        ids = [a.id for a in self.active() if a.id not in status.active_alerts]
        if not ids:
            return status
        return msgspec.structs.replace(status, active_alerts=[*status.active_alerts, *ids])

    def _alert(self, source: str, at: datetime, used: int) -> wire.Alert:
        observed = {"rejected_bytes": used}
        required = {"rejected_bytes_at_most": self.budget, "per_s": self.period_s}
        return raised_outside(self._number(), FLOOD_RULE, at, observed, required, subject=source)

    @staticmethod
    def _cleared(alert: wire.Alert, now: datetime, state: _Source) -> wire.Alert:
        """The alert ended, with how many of the source's messages were counted meanwhile."""
        at = now.astimezone(UTC)
        observed = {
            **alert.observed,
            "counted": state.counted,
            "counted_bytes": state.counted_bytes,
        }
        return msgspec.structs.replace(
            alert, state="cleared", ended_at=at, cleared_at=at, observed=observed
        )
