"""The findings: the replayed alerts as the Town Board reads them, and what they add up to.

A finding is one alert with its start (``since``), end (``ended_at``; none while the
breach was still in progress when the log ended), duration, worst figure and the figure
required. From the findings come the distinct breaches (one per rule and local day on
which the rule was breached: how the law's "each violation" may be read, though how many
violations occurred is for the prosecutor and the court, docs/law.md "Penalties") and the
verdict, which also counts the breaches the permit file showed before the assembly and a
clean-up found deficient and never made good (permit:F).

Each finding is split into the stretches its alert carries (core/basis.py): only its
``measured`` stretches are proven, and only they make distinct breaches, the verdict and
the grounds for revocation; an ``indeterminate``, ``estimate`` or ``rounding`` stretch is
listed apart with what it rests on (docs/law.md, "Each stretch says what it rests on").

The verdict is one of three (docs/law.md, "The verdict says what was watched"):
``BREACHED`` (a proven breach), ``NO BREACH FOUND`` or ``RECORD INCOMPLETE``; the last
two are followed by what was not watched. No verdict says the permit's terms were kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
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
    "FindingStretch",
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
class FindingStretch:
    """A part of a finding with one basis; ``end`` None while still open at the log's end
    (``stop`` is then the log's end)."""

    start: datetime
    end: datetime | None
    stop: datetime
    basis: str
    rests_on: tuple[str, ...] = ()

    @property
    def seconds(self) -> float:
        return max((self.stop - self.start).total_seconds(), 0.0)


_NOT_PROVEN_WORDS = {
    "indeterminate": "indeterminate",
    "estimate": "an estimate",
    "rounding": "only within the rounding",
}
"""How a basis that proves nothing reads in a sentence."""


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
    stretches: tuple[FindingStretch, ...] = ()

    @property
    def is_breach(self) -> bool:
        return self.severity == "breach"

    @property
    def parts(self) -> tuple[FindingStretch, ...]:
        """Its stretches; a finding made without any is one, from start to end, on the
        basis its ``uncertain`` flag and worst figures give (as an older log's)."""
        if self.stretches:
            return self.stretches
        basis = "measured"
        if self.uncertain:
            basis = "indeterminate"
        elif self.worst_observed.get("within_rounding") is True:
            basis = "rounding"
        stop = self.end or self.start + timedelta(seconds=self.duration_s)
        return (FindingStretch(self.start, self.end, stop, basis),)

    @property
    def proven_s(self) -> float:
        """Seconds of its measured stretches: the time it is proven for."""
        return sum(x.seconds for x in self.parts if x.basis == "measured")

    @property
    def proven(self) -> bool:
        """A breach with a measured stretch: proven for that time (and only that time)."""
        return self.is_breach and any(x.basis == "measured" for x in self.parts)

    @property
    def basis(self) -> str:
        """``measured``, ``indeterminate``, ``estimate``, ``rounding``, or ``mixed``."""
        bases = {x.basis for x in self.parts}
        return bases.pop() if len(bases) == 1 else "mixed"

    @property
    def apart(self) -> tuple[FindingStretch, ...]:
        """Its stretches that are not proven, each listed with what it rests on."""
        return tuple(x for x in self.parts if x.basis != "measured")

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
        """A proven breach that is one of permit:G's grounds (for its proven time); one
        with no measured stretch proves no ground and is tied to none."""
        return self.of_a_ground and self.proven

    @property
    def not_proven(self) -> str:
        """Why a breach finding is not proven (``indeterminate``, ``an estimate``, ``within
        the rounding``), or empty for a proven one and for any other finding."""
        if not self.is_breach or self.proven:
            return ""
        bases = dict.fromkeys(x.basis for x in self.parts)
        return " or ".join(_NOT_PROVEN_WORDS.get(b, b) for b in bases)

    @property
    def worst_sentence(self) -> str:
        """The rule's sentence for the worst figures (``message`` is the latest one)."""
        return message_for(self.rule, self.subject, self.worst_observed, self.required)

    @property
    def within_rounding(self) -> bool:
        """A breach with a stretch that held only by kent-ops' rounding up."""
        return self.is_breach and any(x.basis == "rounding" for x in self.parts)


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
        stretches = _stretches(a, start, end, stop)
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
                uncertain=any(x.basis == "indeterminate" for x in stretches),
                acknowledged=[_ack(x) for x in a.acknowledged],
                notes=[_note(x) for x in a.notes],
                message=clean(a.message),
                evidence_record=record,
                evidence_hash=hashes.get(record, a.evidence.hash)
                if record is not None
                else a.evidence.hash,
                stretches=stretches,
            )
        )
    return out


def _stretches(
    a: wire.Alert, start: datetime, end: datetime | None, stop: datetime
) -> tuple[FindingStretch, ...]:
    """The alert's stretches, an open one running to the log's end.

    An alert from a log written before alerts carried stretches is one stretch, from its
    start to its end: indeterminate if it was uncertain, rounding if its worst figures held
    only by the rounding, else measured.
    """
    if a.stretches:
        return tuple(
            FindingStretch(
                x.start,
                x.end,
                x.end if x.end is not None else max(stop, x.start),
                x.basis,
                tuple(clean(r) for r in x.rests_on),
            )
            for x in a.stretches
        )
    basis = "measured"
    if a.uncertain:
        basis = "indeterminate"
    elif a.worst.observed.get("within_rounding") is True:
        basis = "rounding"
    return (FindingStretch(start, end, max(stop, start), basis),)


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
    """One entry per (rule, local day) on which a breach held proven, by day then rule.

    A breach from 22:00 to 01:00 gives two (one each day); two breaches of one rule on
    one afternoon give one. Only measured stretches count: an indeterminate, estimated or
    rounding stretch is listed apart on the page, never here.
    """
    order = {name: i for i, name in enumerate(RULES)}
    by_key: dict[tuple[date, str], DistinctBreach] = {}
    for f in findings:
        if not f.is_breach:
            continue
        for x in f.parts:
            if x.basis != "measured":
                continue
            parts = _days(x.start, x.stop, tz)
            for i, (day, a, b) in enumerate(parts):
                entry = by_key.setdefault((day, f.rule), DistinctBreach(f.rule, day, [], []))
                still = x.end is None and i == len(parts) - 1
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
    """The breach findings the record proves, the only ones the verdict counts: those
    with a measured stretch (proven for that time only)."""
    return [f for f in findings if f.proven]


def _not_proven(findings: Sequence[Finding], proven: Sequence[Finding]) -> str:
    """``2 more breach findings not proven (…), listed apart``; empty if none."""
    counted = {f.id for f in proven}
    rest = [f for f in findings if f.is_breach and f.id not in counted]
    if not rest:
        return ""
    kinds = list(dict.fromkeys(f.not_proven for f in rest))
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
