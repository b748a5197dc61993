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
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core.permit import Permit

__all__ = [
    "COMPARED_FIELDS",
    "CleanUp",
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


def _parse(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


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
    still_active: bool
    worst_observed: dict[str, Any]
    required: dict[str, Any]
    uncertain: bool
    acknowledged: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    message: str
    evidence_record: int | None
    evidence_hash: str | None

    @property
    def is_breach(self) -> bool:
        return self.severity == "breach"


def findings_from_alerts(
    alerts: dict[str, dict[str, Any]], log_end: datetime | None
) -> list[Finding]:
    """Every alert as a finding, in id order; an open breach lasts until the log's end."""
    out: list[Finding] = []
    for alert_id in sorted(alerts):
        a = alerts[alert_id]
        start = _parse(a.get("since"))
        if start is None:
            continue
        end = _parse(a.get("ended_at"))
        stop = end if end is not None else (log_end if log_end is not None else start)
        worst = a.get("worst") or {}
        evidence = a.get("evidence") or {}
        out.append(
            Finding(
                id=alert_id,
                rule=a.get("rule", ""),
                subject=a.get("subject"),
                cite=a.get("cite", ""),
                severity=a.get("severity", ""),
                state=a.get("state", ""),
                start=start,
                end=end,
                duration_s=max((stop - start).total_seconds(), 0.0),
                still_active=end is None,
                worst_observed=worst.get("observed", a.get("observed") or {}),
                required=worst.get("required", a.get("required") or {}),
                uncertain=bool(a.get("uncertain")),
                acknowledged=list(a.get("acknowledged") or []),
                notes=list(a.get("notes") or []),
                message=a.get("message", ""),
                evidence_record=evidence.get("record"),
                evidence_hash=evidence.get("hash"),
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
    replayed: dict[str, dict[str, Any]],
    live: dict[str, dict[str, Any]],
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
        diffs = [f for f in COMPARED_FIELDS if r.get(f) != lv.get(f)]
        if clock == "wall":
            diffs = [f for f in diffs if not _close(r.get(f), lv.get(f))]
            if (
                set(diffs) <= {"state", "cleared_at"}
                and diffs
                and lv.get("state") == "active"
                and lv.get("ended_at") is not None
                and r.get("state") == "cleared"
                and log_end is not None
                and (cleared := _parse(r.get("cleared_at"))) is not None
                and cleared >= log_end - timedelta(seconds=WALL_TOLERANCE_S)
            ):
                notes.append(
                    f"{alert_id} cleared at {r['cleared_at']}, just before the log ends; "
                    "the live service stopped before it looked again"
                )
                continue
        if diffs:
            shown = ", ".join(f"{f} {lv.get(f)!r} live vs {r.get(f)!r} replayed" for f in diffs)
            problems.append(f"{alert_id}: {shown}")
    return Comparison(len(live), len(replayed), problems, notes)


def _close(a: Any, b: Any) -> bool:
    ta, tb = _parse_maybe(a), _parse_maybe(b)
    if ta is None or tb is None:
        return False
    return abs((ta - tb).total_seconds()) <= WALL_TOLERANCE_S


def _parse_maybe(value: Any) -> datetime | None:
    try:
        return _parse(value)
    except ValueError:
        return None


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
    satisfied_by: dict[str, Any] | None
    marks: list[dict[str, Any]]

    @property
    def is_breach(self) -> bool:
        return self.status in ("late", "not done")


def clean_up_status(
    permit: Permit,
    inspections: list[dict[str, Any]],
    notes: list[dict[str, Any]],
    log_end: datetime | None,
) -> CleanUp:
    """Clean-up (permit:F): item ``F`` marked ``ok``, or a note ``CLEAN-UP OK …``, in time.

    Only marks made after the assembly's last window ended count (a clean-up cannot be
    done while the assembly goes on); within the five days, the last mark decides, so a
    site found dirty again after an ``ok`` is not clean.
    """
    assembly_end = permit.last_end
    deadline = assembly_end + timedelta(days=law.CLEAN_UP_DAYS)
    marks: list[dict[str, Any]] = []
    for mark in inspections:
        if mark.get("item") == "F":
            marks.append({**mark, "source": "inspection"})
    for note in notes:
        if str(note.get("text", "")).lstrip().upper().startswith(CLEAN_UP_PREFIX):
            marks.append({**note, "result": "ok", "source": "note"})
    marks.sort(key=lambda m: m["at"])
    in_time = [m for m in marks if assembly_end <= datetime.fromisoformat(m["at"]) <= deadline]
    late = [m for m in marks if datetime.fromisoformat(m["at"]) > deadline]
    if in_time and in_time[-1]["result"] == "ok":
        return CleanUp("done", deadline, assembly_end, in_time[-1], marks)
    if log_end is not None and log_end < deadline:
        return CleanUp("open", deadline, assembly_end, None, marks)
    late_ok = next((m for m in late if m["result"] == "ok"), None)
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
