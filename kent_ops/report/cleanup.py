"""Clean-up (permit:F): waste removed by the end of the fifth day after the assembly ended.

    “Within five days from the date of the termination of the assembly, trash, papers,
    garbage and other waste material shall be completely removed from the premises”

The period runs from the local *date* on which the assembly ended, and the assembly
ended when it was last on (docs/law.md, "When the assembly is on"), not when its last
window was scheduled to end: a crowd still there at 00:40 ended the assembly on the next
day, one that went home at 20:00 ended it then. The deadline is local midnight at the
end of the fifth day after that date, counted in calendar days, so a daylight-saving
change moves neither end (7 November 2027 has 25 hours; the deadline stays at midnight).

No sensor sees a clean field. An inspector records it by marking checklist item ``F``
``ok``, or by a note starting ``CLEAN-UP OK``. Only marks made after the assembly ended
and before the deadline count; of those, the last decides (a site found dirty again
after an ``ok`` is not clean).

A finding claims only what the record proves (docs/law.md, "Clean-up"). With no
inspector's record by the deadline the Town holds no record that the premises were
inspected: clean-up is *not recorded*, a warning, never "not done". It is *not done*, a
breach, only when item F was marked ``deficient`` after the assembly ended and not
marked ``ok`` after that by the deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from kent_ops.core import ordinance as law
from kent_ops.report.collect import InspectionMark, InspectorNote

__all__ = [
    "CLEAN_UP_PREFIX",
    "CleanUp",
    "CleanUpMark",
    "clean_up_deadline",
    "clean_up_status",
    "not_applicable",
]

CLEAN_UP_PREFIX = "CLEAN-UP OK"

MEANING = {
    "done": "recorded done after the assembly ended and by the deadline",
    "open": "the log ends before the deadline and no clean-up is recorded yet",
    "not recorded": (
        "the deadline passed with no inspector's record of item F: the Town holds no record "
        "that the premises were inspected, which is not a finding that they were not cleaned"
    ),
    "not done": "item F was found deficient after the assembly ended and not marked done by "
    "the deadline",
    "not applicable": (
        "the permit is for 500 or fewer persons, an assembly the chapter does not regulate"
    ),
}
"""Each status explained, as the page states it after the status's word (never the word
again: the page shows it once, as a tag)."""
STILL_ON = "the assembly was still on when the log ends, so the period had not begun"


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
    made: datetime | None = None
    """When the inspector made it (its ``ts``; ``at`` is when it was recorded)."""


@dataclass(frozen=True, slots=True)
class CleanUp:
    """The clean-up finding of permit:F.

    ``status`` is ``done`` (the last mark in the period is ok), ``open`` (the log ends
    before the deadline, or while the assembly is still on: ``still_on``), ``not
    recorded`` (the deadline passed with no ok in the period and no deficiency standing:
    a warning; ``late`` holds an ok made after the deadline) or ``not done`` (the last
    mark in the period is ``deficient``: ``deficient``; a breach).
    ``assembly_end`` is when the assembly was last on, or, when the log shows no one at
    it at all (``from_schedule``), the scheduled end of its last window; ``deadline`` the
    local midnight ending the fifth day after ``ended_on``.
    """

    status: str
    still_on: bool
    from_schedule: bool
    assembly_end: datetime | None
    ended_on: date | None
    deadline: datetime | None
    satisfied_by: CleanUpMark | None
    marks: list[CleanUpMark]
    spans: tuple[tuple[datetime, datetime | None], ...] = ()
    """When the assembly was on (the last end None while it still is)."""
    deficient: CleanUpMark | None = None
    """``not done``: the deficient mark in the period that was never made good."""
    late: CleanUpMark | None = None
    """An ok made only after the deadline."""

    @property
    def is_breach(self) -> bool:
        """Only a deficiency found and never made good is a breach of permit:F."""
        return self.status == "not done"

    @property
    def is_warning(self) -> bool:
        """No record by the deadline: the Town's missing record, never the organiser's."""
        return self.status == "not recorded"

    @property
    def word(self) -> str:
        """The status as a reader is told it: an open clean-up whose period has begun is
        ``not yet due`` (its deadline is still ahead), not a fault."""
        if self.status == "open" and not self.still_on and self.deadline is not None:
            return "not yet due"
        return self.status

    @property
    def meaning(self) -> str:
        """The status explained, without its word (the page shows that as a tag)."""
        return STILL_ON if self.still_on else MEANING[self.status]

    def sentence(self, when: Callable[[datetime], str], by: Callable[[datetime], str]) -> str:
        """``not done: found deficient by insp-2 at …, not marked done by …``; for the other
        statuses, the word and its meaning. ``when`` writes an instant, ``by`` the deadline."""
        mark, deadline = self.deficient, self.deadline
        if self.status == "not done" and mark is not None and deadline is not None:
            text = f"not done: found deficient by {mark.by} at {when(mark.at)}"
            if mark.text:
                text += f" (“{mark.text}”)"
            text += f", not marked done by {by(deadline)}"
        else:
            text = f"{self.word}: {self.meaning}"
        if self.late is not None:
            text += f"; marked ok by {self.late.by} at {when(self.late.at)}, after the deadline"
        return text

    def counts(self, mark: CleanUpMark | InspectionMark) -> str:
        """Whether one mark counts for clean-up, in words."""
        if any(a <= mark.at and (b is None or mark.at < b) for a, b in self.spans):
            return "made while the assembly was on: does not count for clean-up"
        if self.assembly_end is None or self.deadline is None or mark.at < self.assembly_end:
            if self.from_schedule:
                return "made before the last permitted window ended: does not count for clean-up"
            return "made before the assembly ended: does not count for clean-up"
        if mark.at >= self.deadline:
            return "after the clean-up deadline (permit:F)"
        if mark.result == "ok":
            return "after the assembly ended and by the deadline: counts for clean-up (permit:F)"
        return f"within the clean-up period of permit:F: {mark.result}"


def not_applicable() -> CleanUp:
    """No clean-up duty: the chapter regulates no assembly of 500 or fewer (permit:A)."""
    return CleanUp("not applicable", False, False, None, None, None, None, [])


def clean_up_deadline(ended_on: date, tz: ZoneInfo) -> datetime:
    """Local midnight at the end of the fifth day after ``ended_on`` (permit:F)."""
    day = ended_on + timedelta(days=law.CLEAN_UP_DAYS + 1)
    return datetime(day.year, day.month, day.day, tzinfo=tz).astimezone(UTC).astimezone(tz)


def _marks(
    inspections: Sequence[InspectionMark], notes: Sequence[InspectorNote]
) -> list[CleanUpMark]:
    marks = [
        CleanUpMark(m.by, m.at, m.result, "inspection", m.note, m.record, m.made)
        for m in inspections
        if m.item == "F"
    ]
    marks += [
        CleanUpMark(n.by, n.at, "ok", "note", n.text, n.record, n.made)
        for n in notes
        if n.text.lstrip().upper().startswith(CLEAN_UP_PREFIX)
    ]
    marks.sort(key=lambda m: m.at)
    return marks


def clean_up_status(
    tz: ZoneInfo,
    assembly_end: datetime | None,
    *,
    still_on: bool,
    scheduled_end: datetime,
    inspections: Sequence[InspectionMark],
    notes: Sequence[InspectorNote],
    log_end: datetime | None,
    spans: Sequence[tuple[datetime, datetime | None]] = (),
) -> CleanUp:
    """Clean-up (permit:F) from when the assembly was last on and the inspectors' marks.

    Args:
        tz: the event's zone (the local date the assembly ended is counted in it).
        assembly_end: when the assembly was last on (the engine's ``assembly.last_on``);
            None if it never was, or is still on.
        still_on: the assembly was on when the log ends (the period has not begun).
        scheduled_end: the end of the last permitted window: the period runs from it
            only when the log shows no one at the assembly at all.
        inspections, notes: the accepted inspection marks and inspector notes.
        log_end: the log's end (a deadline after it leaves clean-up open).
        spans: when the assembly was on (to say why a mark does not count).
    """
    marks = _marks(inspections, notes)
    if still_on:
        return CleanUp("open", True, False, None, None, None, None, marks, tuple(spans))
    from_schedule = assembly_end is None
    end = scheduled_end if assembly_end is None else assembly_end
    ended_on = end.astimezone(tz).date()
    deadline = clean_up_deadline(ended_on, tz)

    def result(status: str, by: CleanUpMark | None = None) -> CleanUp:
        return CleanUp(
            status, False, from_schedule, end, ended_on, deadline, by, marks, tuple(spans)
        )

    in_time = [m for m in marks if end <= m.at < deadline]
    if in_time and in_time[-1].result == "ok":
        return result("done", in_time[-1])
    if log_end is None or log_end < deadline:
        return result("open")
    late_ok = next((m for m in marks if m.at >= deadline and m.result == "ok"), None)
    if in_time and in_time[-1].result == "deficient":
        return CleanUp(
            "not done", False, from_schedule, end, ended_on, deadline, None, marks,
            tuple(spans), deficient=in_time[-1], late=late_ok,
        )  # fmt: skip
    return CleanUp(
        "not recorded", False, from_schedule, end, ended_on, deadline, None, marks,
        tuple(spans), late=late_ok,
    )  # fmt: skip
