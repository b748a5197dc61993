"""The findings: the replayed alerts as the Town Board reads them, and what they add up to.

A finding is one alert with its start (``since``), end (``ended_at``; none while the
breach still held when the log ended), duration, worst figure and the figure required.
From the findings come the verdict, the fine range (penalties:B: each breach finding is
one violation) and, beside them, the clean-up finding of permit:F, which no sensor sees.
The replayed alerts are also checked against the alerts the live service logged: the
report and the dashboards must tell the same story.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core import wire
from kent_ops.core.permit import Permit
from kent_ops.report.collect import InspectionMark, InspectorNote

__all__ = [
    "COMPARED_FIELDS",
    "CleanUp",
    "CleanUpMark",
    "Finding",
    "Penalty",
    "Verdict",
    "clean_up_status",
    "compare_with_live",
    "findings_from_alerts",
    "penalty_exposure",
    "verdict",
]

COMPARED_FIELDS = (
    "id",
    "rule",
    "subject",
    "since",
    "raised_at",
    "ended_at",
    "cleared_at",
    "state",
)
"""The fields on which the replayed alerts must equal the ones published live."""

WALL_TOLERANCE_S = 2.0
"""With the wall clock the live engine also looked at moments the log does not record
(ticks that changed nothing); a message received just before such a tick was taken at
the tick. Replayed times may then differ from live ones by a fraction of a tick."""

CLEAN_UP_PREFIX = "CLEAN-UP OK"


@dataclass(frozen=True, slots=True)
class Finding:
    """One alert, as the report states it."""

    id: str
    rule: str
    subject: str | None
    cite: str
    severity: str
    state: str
    start: datetime
    end: datetime | None
    duration_s: float
    worst_observed: wire.Figures
    required: wire.Figures
    uncertain: bool
    acknowledged: list[wire.Acknowledgement]
    notes: list[wire.NoteEntry]
    message: str
    evidence_record: int | None
    evidence_hash: str | None

    @property
    def is_breach(self) -> bool:
        return self.severity == "breach"


def findings_from_alerts(
    alerts: Mapping[str, wire.Alert],
    log_end: datetime | None,
    record_hashes: Mapping[int, str] | None = None,
) -> list[Finding]:
    """Every alert as a finding, in id order; an open breach lasts until the log's end.

    ``record_hashes`` gives the (verified) log's hash of each record an alert cites; the
    alert's own hash is used for a record it does not name.
    """
    hashes = record_hashes or {}
    out: list[Finding] = []
    for alert_id in sorted(alerts):
        a = alerts[alert_id]
        start = a.since
        if start is None:
            continue
        end = a.ended_at
        stop = end if end is not None else (log_end if log_end is not None else start)
        record = a.evidence.record
        out.append(
            Finding(
                id=alert_id,
                rule=a.rule,
                subject=a.subject,
                cite=a.cite,
                severity=a.severity,
                state=a.state,
                start=start,
                end=end,
                duration_s=max((stop - start).total_seconds(), 0.0),
                worst_observed=a.worst.observed,
                required=a.worst.required,
                uncertain=a.uncertain,
                acknowledged=list(a.acknowledged),
                notes=list(a.notes),
                message=a.message,
                evidence_record=record,
                evidence_hash=hashes.get(record, a.evidence.hash)
                if record is not None
                else a.evidence.hash,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Comparison:
    """How the replayed alerts compare with the ones the live service logged."""

    live_count: int
    replay_count: int
    problems: list[str]
    notes: list[str]

    @property
    def equal(self) -> bool:
        return not self.problems


def compare_with_live(
    replayed: Mapping[str, wire.Alert],
    live: Mapping[str, wire.Alert],
    *,
    clock: str,
    log_end: datetime | None,
) -> Comparison:
    """Check the replayed alerts against the last logged state of each live alert.

    With the sensor clock they must be equal on :data:`COMPARED_FIELDS`. With the wall
    clock, times may differ by up to :data:`WALL_TOLERANCE_S`, and an alert the replay
    sees cleared just before the log's end, which the live service (stopping) never
    looked at again, is noted rather than counted as a difference.
    """
    problems: list[str] = []
    notes: list[str] = []
    for alert_id in sorted(set(replayed) | set(live)):
        r, lv = replayed.get(alert_id), live.get(alert_id)
        if lv is None:
            problems.append(f"{alert_id} was found on replay but never logged live")
            continue
        if r is None:
            if alert_id.startswith("S-"):
                # The service's own evidence-storage alert: no message raised it, so a
                # replay cannot; the storage outage itself is under data quality.
                notes.append(f"{alert_id} is the aggregator's evidence-storage alert")
            else:
                problems.append(f"{alert_id} was logged live but not found on replay")
            continue
        diffs = [f for f in COMPARED_FIELDS if getattr(r, f) != getattr(lv, f)]
        if clock == "wall":
            diffs = [f for f in diffs if not _close(getattr(r, f), getattr(lv, f))]
            if _cleared_at_the_end(diffs, r, lv, log_end):
                notes.append(
                    f"{alert_id} cleared at {_shown(r.cleared_at)}, just before the log ends; "
                    "the live service stopped before it looked again"
                )
                continue
        if diffs:
            shown = ", ".join(
                f"{f} {_shown(getattr(lv, f))!r} live vs {_shown(getattr(r, f))!r} replayed"
                for f in diffs
            )
            problems.append(f"{alert_id}: {shown}")
    return Comparison(len(live), len(replayed), problems, notes)


def _cleared_at_the_end(
    diffs: list[str], r: wire.Alert, lv: wire.Alert, log_end: datetime | None
) -> bool:
    """The wall clock's one allowed difference: the replay saw the alert clear just as the
    log ended, after the live service (stopping) last looked at it."""
    return (
        bool(diffs)
        and set(diffs) <= {"state", "cleared_at"}
        and lv.state == "active"
        and lv.ended_at is not None
        and r.state == "cleared"
        and log_end is not None
        and r.cleared_at is not None
        and r.cleared_at >= log_end - timedelta(seconds=WALL_TOLERANCE_S)
    )


def _shown(value: Any) -> Any:
    """A compared value as the log writes it: a time as its ISO text."""
    return value.isoformat() if isinstance(value, datetime) else value


def _close(a: Any, b: Any) -> bool:
    if not isinstance(a, datetime) or not isinstance(b, datetime):
        return False
    return abs((a - b).total_seconds()) <= WALL_TOLERANCE_S


@dataclass(frozen=True, slots=True)
class CleanUpMark:
    """One record that bears on clean-up: an item-F mark or a ``CLEAN-UP OK`` note."""

    by: str
    at: datetime
    result: str
    source: str
    """``inspection`` or ``note``."""
    text: str
    record: int


@dataclass(frozen=True, slots=True)
class CleanUp:
    """The clean-up finding of permit:F.

    ``status`` is ``done`` (an ok mark within the deadline), ``open`` (the log ends
    before the deadline and no ok mark yet), ``late`` (the ok mark came after the
    deadline) or ``not done`` (the deadline passed with no ok mark).
    """

    status: str
    deadline: datetime
    assembly_end: datetime
    satisfied_by: CleanUpMark | None
    marks: list[CleanUpMark]

    @property
    def is_breach(self) -> bool:
        return self.status in ("late", "not done")


def clean_up_status(
    permit: Permit,
    inspections: Sequence[InspectionMark],
    notes: Sequence[InspectorNote],
    log_end: datetime | None,
) -> CleanUp:
    """Clean-up (permit:F): item ``F`` marked ``ok``, or a note ``CLEAN-UP OK …``, in time.

    Only marks made after the assembly's last window ended count (a clean-up cannot be
    done while the assembly goes on); within the five days, the last mark decides, so a
    site found dirty again after an ``ok`` is not clean.
    """
    assembly_end = permit.last_end
    deadline = assembly_end + timedelta(days=law.CLEAN_UP_DAYS)
    marks = [
        CleanUpMark(m.by, m.at, m.result, "inspection", m.note, m.record)
        for m in inspections
        if m.item == "F"
    ]
    marks += [
        CleanUpMark(n.by, n.at, "ok", "note", n.text, n.record)
        for n in notes
        if n.text.lstrip().upper().startswith(CLEAN_UP_PREFIX)
    ]
    marks.sort(key=lambda m: m.at)
    in_time = [m for m in marks if assembly_end <= m.at <= deadline]
    late = [m for m in marks if m.at > deadline]
    if in_time and in_time[-1].result == "ok":
        return CleanUp("done", deadline, assembly_end, in_time[-1], marks)
    if log_end is not None and log_end < deadline:
        return CleanUp("open", deadline, assembly_end, None, marks)
    late_ok = next((m for m in late if m.result == "ok"), None)
    if late_ok is not None:
        return CleanUp("late", deadline, assembly_end, late_ok, marks)
    return CleanUp("not done", deadline, assembly_end, None, marks)


@dataclass(frozen=True, slots=True)
class Penalty:
    """The fine range the violations expose the permittee to (penalties:B)."""

    proven: int
    uncertain: int

    @property
    def low(self) -> int:
        return self.proven * law.FINE_MIN_USD

    @property
    def high(self) -> int:
        return self.proven * law.FINE_MAX_USD

    @property
    def high_with_uncertain(self) -> int:
        return (self.proven + self.uncertain) * law.FINE_MAX_USD


def penalty_exposure(findings: list[Finding], clean_up: CleanUp) -> Penalty:
    """Each breach finding is one violation; uncertain ones are shown apart."""
    proven = sum(1 for f in findings if f.is_breach and not f.uncertain)
    uncertain = sum(1 for f in findings if f.is_breach and f.uncertain)
    if clean_up.is_breach:
        proven += 1
    return Penalty(proven, uncertain)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The page's first line: ``kept``, ``breached`` or ``indeterminate``, and why."""

    word: str
    reason: str


def verdict(findings: list[Finding], clean_up: CleanUp, *, messages: int) -> Verdict:
    """Breached if any breach is proven; indeterminate if the only ones are uncertain."""
    proven = [f for f in findings if f.is_breach and not f.uncertain]
    uncertain = [f for f in findings if f.is_breach and f.uncertain]
    if proven or clean_up.is_breach:
        parts = []
        if proven:
            rules = sorted({f.rule for f in proven})
            parts.append(f"{len(proven)} breach finding{'s' if len(proven) != 1 else ''} "
                         f"({', '.join(rules)})")  # fmt: skip
        if clean_up.is_breach:
            parts.append(f"clean-up {clean_up.status} (permit:F)")
        if uncertain:
            parts.append(f"{len(uncertain)} more while counts were uncertain")
        return Verdict("breached", "; ".join(parts))
    if uncertain:
        rules = sorted({f.rule for f in uncertain})
        return Verdict(
            "indeterminate",
            f"{len(uncertain)} breach finding{'s' if len(uncertain) != 1 else ''} "
            f"({', '.join(rules)}) arose while a gate counter was offline or stale, so the "
            "counts behind them are uncertain",
        )
    if messages == 0:
        return Verdict(
            "indeterminate",
            "the evidence log holds no sensor or inspector messages, so nothing shows "
            "whether the terms were kept",
        )
    tail = " so far; clean-up is still open" if clean_up.status == "open" else ""
    return Verdict("kept", f"no breach of the permit's terms was found{tail}")


def compact_json(value: Any) -> str:
    """A figure dict as one short, stable JSON text for a CSV cell."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
