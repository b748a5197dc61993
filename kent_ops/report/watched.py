"""What the record does not show was watched: the words that follow "NO BREACH FOUND".

A report that finds no breach must not read as proof that the permit's terms were kept
(docs/law.md, "The verdict says what was watched"). Nothing proves a breach that nobody
looked for, so the verdict names what was not watched:

- the law's checklist items that apply to this permit and that no inspector marked
  (item F also counts as watched when a ``CLEAN-UP OK`` note recorded it);
- the listed sensors the log never heard from (a deputy's manual tally nobody used is
  left out: an unused tally is not a silent sensor);
- the time indeterminate: each indeterminate stretch of a breach, and each stretch in
  which a figure rested on a sensor in doubt while the assembly was on, though no
  finding shows it (:func:`indeterminate_spans`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from kent_ops.core.checklist import applicable_items
from kent_ops.core.doubt import DoubtSpan
from kent_ops.core.permit import Permit
from kent_ops.core.timeutil import from_us
from kent_ops.report.cleanup import CleanUp
from kent_ops.report.collect import InspectionMark
from kent_ops.report.findings import Finding, rule_name

__all__ = ["IndeterminateSpan", "Unwatched", "indeterminate_spans", "unwatched"]


@dataclass(frozen=True, slots=True)
class IndeterminateSpan:
    """A stretch in which a breach may have held that the record cannot prove."""

    rule: str
    finding: str
    start: datetime
    end: datetime | None
    """None: still so when the log ends."""
    why: str


_BREACH_FIGURES = frozenset({"attendance", "staff"})
"""The figures a breach rule reads (the lots' cars move only warnings: core/rules)."""


def indeterminate_spans(
    findings: Sequence[Finding],
    doubts: Sequence[DoubtSpan] = (),
    assembly: Sequence[tuple[datetime, datetime | None]] = (),
) -> list[IndeterminateSpan]:
    """The time indeterminate: the indeterminate stretches of breach findings, in their
    order; then each span in which a figure was in doubt while the assembly was on
    (clipped to it), whether or not a finding shows it. The verdict, the page and the
    command read the time indeterminate from here alone."""
    out = [
        IndeterminateSpan(
            f.rule, f.id, x.start, x.end, "; ".join(x.rests_on) or "a sensor it rests on"
        )
        for f in findings
        if f.is_breach
        for x in f.apart
        if x.basis == "indeterminate"
    ]
    for d in doubts:
        if d.figure not in _BREACH_FIGURES:
            continue
        start, end = from_us(d.start), from_us(d.end) if d.end is not None else None
        for on, off in assembly:
            a = max(start, on)
            b = end if off is None else (off if end is None else min(end, off))
            if b is None or a < b:
                out.append(IndeterminateSpan(d.figure, "", a, b, d.why))
    return out


def _when(t: datetime, tz: ZoneInfo) -> str:
    return f"{t.astimezone(tz):%Y-%m-%d %H:%M:%S}"


def _span_words(s: IndeterminateSpan, tz: ZoneInfo) -> str:
    start = _when(s.start, tz)
    if s.end is None:
        end = "the log's end"
    elif s.end.astimezone(tz).date() == s.start.astimezone(tz).date():
        end = f"{s.end.astimezone(tz):%H:%M:%S}"
    else:
        end = _when(s.end, tz)
    if not s.finding:  # a figure in doubt, no finding: say which and why
        return f"{start} to {end} ({s.rule}: {s.why})"
    return f"{start} to {end} ({rule_name(s.rule)}, {s.rule}, {s.finding})"


SPANS_SPELLED = 5
"""Up to this many stretches of indeterminate time, the verdict names each; more, it
says how many, between when and why, and points to the report, which lists them all."""


def _spans_words(spans: Sequence[IndeterminateSpan], tz: ZoneInfo) -> str:
    if len(spans) <= SPANS_SPELLED:
        return "; ".join(_span_words(s, tz) for s in spans)
    first = min(s.start for s in spans)
    ends = [s.end for s in spans]
    if None in ends:
        last = "the last still so when the log ends"
    else:
        last = f"the last ending at {_when(max(e for e in ends if e is not None), tz)}"
    why = sorted({f"{s.rule}: {s.why}" if not s.finding else rule_name(s.rule) for s in spans})
    return (
        f"{len(spans):,} stretches, the first from {_when(first, tz)}, {last} "
        f"({'; '.join(why)}), each listed in the report (its findings and "
        "“Figures in doubt”)"
    )


@dataclass(frozen=True, slots=True)
class Unwatched:
    """What the record does not show was watched; empty tuples when all was."""

    items: tuple[str, ...]
    """Checklist items that apply to the permit and that no inspector marked."""
    sensors: tuple[str, ...]
    """Listed sensors the log never heard from."""
    spans: tuple[IndeterminateSpan, ...]
    """The time indeterminate."""

    @property
    def nothing(self) -> bool:
        return not (self.items or self.sensors or self.spans)

    def parts(self, tz: ZoneInfo) -> list[str]:
        """Each kind of thing not watched, in words (times in ``tz``, the event's)."""
        if self.nothing:
            return [
                "nothing: every checklist item that applies was marked by an inspector, every "
                "listed sensor was heard, and no time was indeterminate"
            ]
        parts = []
        if self.items:
            parts.append(f"checklist items no inspector marked: {', '.join(self.items)}")
        if self.sensors:
            parts.append(f"sensors never heard: {', '.join(self.sensors)}")
        if self.spans:
            parts.append(f"time indeterminate: {_spans_words(self.spans, tz)}")
        return parts

    def words(self, tz: ZoneInfo) -> str:
        """What follows "not watched: " in the verdict, on one line."""
        return "; ".join(self.parts(tz))


def unwatched(
    permit: Permit,
    marks: Iterable[InspectionMark],
    clean_up: CleanUp,
    last_seen: Mapping[str, datetime | None],
    findings: Sequence[Finding],
    doubts: Sequence[DoubtSpan] = (),
    assembly: Sequence[tuple[datetime, datetime | None]] = (),
) -> Unwatched:
    """What nobody watched: unmarked items, unheard sensors, the time indeterminate.

    Args:
        permit: the permit (its checklist items and its listed sensors).
        marks: every checklist mark the log holds.
        clean_up: the clean-up finding (a ``CLEAN-UP OK`` note records item F too).
        last_seen: each listed sensor's last message at the log's end, None if never.
        findings: the report's findings (for the time indeterminate).
        doubts: the engine's spans of figures in doubt; assembly: when it was on.
    """
    marked = {m.item for m in marks}
    if clean_up.marks:
        marked.add("F")
    items = tuple(it.item for it in applicable_items(permit) if it.item not in marked)
    if not permit.regulated:
        items = ()  # no duty binds an assembly of 500 or fewer: nothing to inspect for
    manual = permit.manual_gates
    sensors = tuple(s for s in permit.sensors if s not in manual and last_seen.get(s) is None)
    return Unwatched(items, sensors, tuple(indeterminate_spans(findings, doubts, assembly)))
