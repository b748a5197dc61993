"""The findings: the replayed alerts as the Town Board reads them, and what they add up to.

A finding is one alert with its start (``since``), end (``ended_at``; none while the
breach was still in progress when the log ended), duration, worst figure and the figure
required. From the findings come the distinct breaches (one per rule and local day on
which the rule was breached: how the law's "each violation" may be read, though how many
violations occurred is for the prosecutor and the court, docs/law.md "Penalties") and the
verdict, which also counts the breaches the permit file showed before the assembly and a
clean-up found deficient and never made good (permit:F). A breach found while attendance
was uncertain is indeterminate, and one that holds only by rounding a required count up
is within the rounding: both listed apart, never counted as proven.

The verdict is one of three (docs/law.md, "The verdict says what was watched"):
``BREACHED`` (a proven breach), ``NO BREACH FOUND`` or ``RECORD INCOMPLETE``; the last
two are followed by what was not watched. No verdict says the permit's terms were kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from kent_ops.core import wire
from kent_ops.core.permit import local_midnight_after
from kent_ops.core.precheck import PreEventFinding
from kent_ops.core.rules import RULES, message_for
from kent_ops.report.cleanup import CleanUp
from kent_ops.report.text import clean, clean_figures

__all__ = [
    "BREACHED",
    "CLEAN_UP_NAME",
    "NO_BREACH_FOUND",
    "RECORD_INCOMPLETE",
    "REVOCATION_GROUNDS",
    "DistinctBreach",
    "Finding",
    "Verdict",
    "day_spans",
    "distinct_breaches",
    "findings_from_alerts",
    "plural",
    "proven_breaches",
    "rule_name",
    "verdict",
]

CLEAN_UP_NAME = "Clean-up within five days"

REVOCATION_GROUNDS = frozenset(
    {
        "doctor-on-duty",
        "nurse-ratio",
        "application-staffing",
        "parking-ratio",
        "overnight-housing",
        "facility-deficient",
    }
)
"""The rules whose breach is a ground for revoking the permit under permit:G: facilities
the application specified, and the law requires of it, not provided. Never the
attendance figures, the permitted hours, the data rules or the clean-up (docs/law.md,
"Revocation: its two grounds")."""


def rule_name(rule: str) -> str:
    """A rule's plain name (``nurse-ratio`` → "Registered nurses per persons present")."""
    if rule == "clean-up":
        return CLEAN_UP_NAME
    found = RULES.get(rule)
    return found.title if found is not None else rule


@dataclass(frozen=True, slots=True)
class Finding:
    """One alert, as the report states it (texts from the wire already cleaned)."""

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

    @property
    def proven(self) -> bool:
        """A breach found while every gate counter was reporting."""
        return self.is_breach and not self.uncertain

    @property
    def name(self) -> str:
        return rule_name(self.rule)

    @property
    def of_a_ground(self) -> bool:
        """A breach of a rule that is one of permit:G's grounds: a facility of permit:C
        not provided as the application specified (a checklist item of C, not D or F)."""
        if not self.is_breach or self.rule not in REVOCATION_GROUNDS:
            return False
        return self.rule != "facility-deficient" or (self.subject or "").startswith("C(")

    @property
    def revocation_ground(self) -> bool:
        """A proven breach that is one of permit:G's grounds; one that is indeterminate or
        holds only within the rounding proves no ground and is tied to none."""
        return self.of_a_ground and self.proven and not self.within_rounding

    @property
    def not_proven(self) -> str:
        """Why a breach finding is not proven (``indeterminate``, ``within the rounding``),
        or empty for a proven one and for any other finding."""
        if not self.is_breach:
            return ""
        if self.uncertain:
            return "indeterminate"
        return "within the rounding" if self.within_rounding else ""

    @property
    def worst_sentence(self) -> str:
        """The rule's sentence for the worst figures (``message`` is the latest one)."""
        return message_for(self.rule, self.subject, self.worst_observed, self.required)

    @property
    def within_rounding(self) -> bool:
        """It holds only by kent-ops' rounding up: the staff met the exact ratio."""
        return self.is_breach and self.worst_observed.get("within_rounding") is True


def _ack(a: wire.Acknowledgement) -> wire.Acknowledgement:
    return wire.Acknowledgement(by=clean(a.by), at=a.at, comment=clean(a.comment))


def _note(n: wire.NoteEntry) -> wire.NoteEntry:
    return wire.NoteEntry(by=clean(n.by), at=n.at, text=clean(n.text), alert=n.alert)


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
                subject=clean(a.subject) if a.subject is not None else None,
                cite=a.cite,
                severity=a.severity,
                state=a.state,
                start=start,
                end=end,
                duration_s=max((stop - start).total_seconds(), 0.0),
                worst_observed=clean_figures(a.worst.observed),
                required=clean_figures(a.worst.required),
                uncertain=a.uncertain,
                acknowledged=[_ack(x) for x in a.acknowledged],
                notes=[_note(x) for x in a.notes],
                message=clean(a.message),
                evidence_record=record,
                evidence_hash=hashes.get(record, a.evidence.hash)
                if record is not None
                else a.evidence.hash,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class DistinctBreach:
    """One rule breached on one local day: the times it held that day and the findings.

    ``spans`` are clipped to the day; an end of None means still in progress when the
    log ends.
    """

    rule: str
    day: date
    spans: list[tuple[datetime, datetime | None]]
    findings: list[str]

    @property
    def name(self) -> str:
        return rule_name(self.rule)


def _days(start: datetime, stop: datetime, tz: ZoneInfo) -> list[tuple[date, datetime, datetime]]:
    """The local days ``[start, stop]`` touches, each with the part of it inside."""
    out = []
    at = start
    while True:
        midnight = local_midnight_after(at, tz)
        out.append((at.astimezone(tz).date(), at, min(stop, midnight)))
        if stop <= midnight:
            return out
        at = midnight


def distinct_breaches(
    findings: Sequence[Finding], tz: ZoneInfo, log_end: datetime | None
) -> list[DistinctBreach]:
    """One entry per (rule, local day) on which a proven breach held, by day then rule.

    A breach from 22:00 to 01:00 gives two (one each day); two breaches of one rule on
    one afternoon give one. Indeterminate (uncertain) breaches are left out, and so are
    those that hold only within the rounding: the page lists them apart.
    """
    order = {name: i for i, name in enumerate(RULES)}
    by_key: dict[tuple[date, str], DistinctBreach] = {}
    for f in findings:
        if not f.proven or f.within_rounding:
            continue
        stop = f.end or log_end or f.start
        parts = _days(f.start, max(stop, f.start), tz)
        for i, (day, a, b) in enumerate(parts):
            entry = by_key.setdefault((day, f.rule), DistinctBreach(f.rule, day, [], []))
            still = f.end is None and i == len(parts) - 1
            entry.spans.append((a, None if still else b))
            if f.id not in entry.findings:
                entry.findings.append(f.id)
    return sorted(by_key.values(), key=lambda d: (d.day, order.get(d.rule, 99), d.rule))


BREACHED = "BREACHED"
NO_BREACH_FOUND = "NO BREACH FOUND"
RECORD_INCOMPLETE = "RECORD INCOMPLETE"

_EXIT = {BREACHED: 1, NO_BREACH_FOUND: 0, RECORD_INCOMPLETE: 1}
"""``kent-ops report``'s exit code for each verdict: 0 only when no breach was found in a
complete record (an incomplete one is a check that could not be made whole)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The page's first line and the command's last: the verdict, why, and what was not
    watched (``not_watched``, given for every verdict and said after all but BREACHED)."""

    word: str
    """:data:`BREACHED`, :data:`NO_BREACH_FOUND` or :data:`RECORD_INCOMPLETE`."""
    reason: str
    not_watched: str = ""

    @property
    def key(self) -> str:
        """``breached``, ``no-breach-found`` or ``record-incomplete``: a CSS class, a name."""
        return self.word.lower().replace(" ", "-")

    @property
    def exit_code(self) -> int:
        return _EXIT[self.word]

    @property
    def line(self) -> str:
        """``NO BREACH FOUND: …; not watched: …`` as the command prints it, on one line."""
        text = f"{self.word}: {self.reason}"
        if self.word != BREACHED and self.not_watched:
            text += f"; not watched: {self.not_watched}"
        return text


def plural(n: int, noun: str) -> str:
    """``1 breach``, ``2 breaches``, ``3 findings``."""
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {noun}{'es' if noun.endswith(('ch', 'sh', 's', 'x')) else 's'}"


def _rules(findings: Sequence[Finding]) -> str:
    rules = dict.fromkeys(f.rule for f in findings)
    return ", ".join(f"{rule_name(r)} ({r})" for r in rules)


def proven_breaches(findings: Sequence[Finding]) -> list[Finding]:
    """The breach findings the record proves, the only ones the verdict counts: neither
    indeterminate (a sensor they rest on offline or stale) nor only within the rounding."""
    return [f for f in findings if f.proven and not f.within_rounding]


def _not_proven(findings: Sequence[Finding], proven: Sequence[Finding]) -> str:
    """``2 more breach findings not proven (…), listed apart``; empty if none."""
    counted = {f.id for f in proven}
    rest = [f for f in findings if f.is_breach and f.id not in counted]
    if not rest:
        return ""
    kinds = []
    if any(f.uncertain for f in rest):
        kinds.append("indeterminate")
    if any(f.within_rounding and not f.uncertain for f in rest):
        kinds.append("only within the rounding")
    return (
        f"{plural(len(rest), 'breach finding')} not proven ({' or '.join(kinds)}: "
        f"{_rules(rest)}), listed apart"
    )


def _clean_up_words(clean_up: CleanUp) -> str:
    if clean_up.status == "open":
        return (
            "clean-up is not yet due"
            if clean_up.word == "not yet due"
            else ("clean-up is still open")
        )
    if clean_up.is_warning:
        return "clean-up not recorded by its deadline (a warning: the Town holds no record)"
    return ""


def verdict(
    findings: Sequence[Finding],
    clean_up: CleanUp,
    pre_event: Sequence[PreEventFinding],
    *,
    messages: int,
    incomplete: Sequence[str] = (),
    not_watched: str = "",
) -> Verdict:
    """BREACHED if a breach is proven, during the assembly, before it or in its clean-up.

    Otherwise RECORD INCOMPLETE if the log may not show the whole assembly
    (``incomplete``, or no messages at all), else NO BREACH FOUND; either is followed by
    ``not_watched`` (:class:`~kent_ops.report.watched.Unwatched`). A breach that is not
    proven is named as such, never counted.
    """
    proven = proven_breaches(findings)
    before = [p for p in pre_event if p.severity == "breach"]
    parts = []
    if proven:
        parts.append(f"{plural(len(proven), 'breach finding')} proven during the assembly: "
                     f"{_rules(proven)}")  # fmt: skip
    if before:
        ids = ", ".join(dict.fromkeys(p.id for p in before))
        parts.append(f"{plural(len(before), 'pre-event breach')} in the permit file ({ids})")
    if clean_up.is_breach:
        parts.append("clean-up not done (permit:F): item F found deficient and not made good")
    not_proven = _not_proven(findings, proven)
    if parts:
        return Verdict(BREACHED, "; ".join([*parts, *([not_proven] if not_proven else [])]),
                       not_watched)  # fmt: skip
    why = list(incomplete)
    empty = "the evidence log holds no sensor or inspector messages"
    if messages == 0 and empty not in why:
        why.insert(0, empty)
    tail = [t for t in (not_proven, _clean_up_words(clean_up)) if t]
    if why:
        reason = "no breach was proven, but the record is incomplete: " + "; ".join(why)
        return Verdict(RECORD_INCOMPLETE, "; ".join([reason, *tail]), not_watched)
    reason = "no breach was proven in the time the evidence log covers"
    return Verdict(NO_BREACH_FOUND, "; ".join([reason, *tail]), not_watched)


def day_spans(entry: DistinctBreach) -> list[tuple[datetime, datetime | None]]:
    """The spans of one distinct breach merged where they touch or overlap."""
    merged: list[tuple[datetime, datetime | None]] = []
    for a, b in sorted(entry.spans, key=lambda s: s[0]):
        if merged:
            pa, pb = merged[-1]
            if pb is None or a <= pb:
                end = None if pb is None or b is None else max(pb, b)
                merged[-1] = (pa, end)
                continue
        merged.append((a, b))
    return merged
