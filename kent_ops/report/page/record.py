"""On the record, though not findings: brief staffing gaps, staff beside attendance, and
the time the figures were in doubt.

The law asks for doctors and nurses "at all times": a shortfall shorter than the
permit's pending time raises no alert, but it happened, so it is listed (docs/law.md,
"At all times"). Staff are not persons (docs/law.md, "Staff"), but a stretch in which
the badged staff would have carried attendance over 500 or the permitted maximum is
shown. And the time any figure rested on a sensor in doubt (or on attendance clamped at
0) is listed, so no reader takes an unwatched hour for a quiet one.
"""

from __future__ import annotations

from datetime import datetime
from html import escape

from kent_ops.core.timeutil import from_us
from kent_ops.report.findings import rule_name
from kent_ops.report.model import ReportData
from kent_ops.report.page.fmt import Fmt, duration, figures, table

__all__ = ["doubt_section", "on_the_record"]

_FIGURE = {"attendance": "Attendance", "staff": "Doctors and nurses", "vehicles": "Cars"}


def _until(end: datetime | None, fmt: Fmt) -> str:
    return fmt.when(end) if end is not None else "still so when the log ends"


def _seconds(start: datetime, end: datetime | None, log_end: datetime | None) -> float:
    stop = end if end is not None else (log_end or start)
    return max((stop - start).total_seconds(), 0.0)


def _brief(data: ReportData, fmt: Fmt) -> list[str]:
    gaps = data.brief_gaps
    out = ["<h3>Brief gaps in doctors and nurses</h3>"]
    if not gaps:
        out.append(
            "<p>No shortfall of doctors or nurses with more than 500 present ended before it "
            "became a finding.</p>"
        )
        return out
    rows = []
    for g in gaps:
        start = from_us(g.since)
        end = from_us(g.until) if g.until is not None else None
        bases = ", ".join(dict.fromkeys(x.basis for x in g.stretches)) or "measured"
        rows.append(
            f"<tr><td><b>{escape(rule_name(g.rule))}</b> <span class='muted'>"
            f"({escape(g.rule)})</span></td><td>{escape(fmt.when(start))}</td>"
            f"<td>{escape(_until(end, fmt))}</td>"
            f"<td class='num'>{escape(duration(_seconds(start, end, data.log_end)))}</td>"
            f"<td>{figures(g.observed)}</td><td>{figures(g.required)}</td>"
            f"<td>{escape(bases)}</td></tr>"
        )
    out.append(
        "<p>The law requires a doctor and the nurses “at all times” (permit:C(9)). Each "
        "shortfall below, with more than 500 present, ended before the permit's pending "
        f"time ({data.permit.alerting.pending_s:g} s) and so raised no finding; it is on the "
        "record all the same.</p>"
    )
    out.append(table(["Rule", "From", "Until", "For", "Seen", "Required", "Basis"], rows, {3}))
    return out


def _staff(data: ReportData, fmt: Fmt) -> list[str]:
    stretches = data.collector.staff_beside.stretches
    out = [
        "<h3>Staff beside attendance</h3>",
        "<p>Attendance counts the persons through the gates; staff who enter elsewhere "
        "(badged doctors, nurses and guards) are not counted as persons.</p>",
    ]
    if not stretches:
        out.append(
            "<p>At no time would the staff on duty have carried attendance over 500 or the "
            "permitted maximum.</p>"
        )
        return out
    rows = [
        f"<tr><td class='num'>{x.limit:,}</td><td>{escape(fmt.when(x.start))}</td>"
        f"<td>{escape(_until(x.end, fmt))}</td>"
        f"<td class='num'>{escape(duration(_seconds(x.start, x.end, data.log_end)))}</td>"
        f"<td class='num'>{x.attendance:,}</td><td class='num'>{x.staff:,}</td></tr>"
        for x in stretches
    ]
    out.append(
        "<p>These are not findings: staff are not persons in attendance. In these stretches "
        "attendance alone was at or below the limit, and attendance plus the staff on duty "
        "by badge was above it:</p>"
    )
    out.append(
        table(
            ["Limit", "From", "Until", "For", "Persons counted", "Staff on duty"],
            rows,
            {0, 3, 4, 5},
        )
    )
    return out


def on_the_record(data: ReportData, fmt: Fmt) -> list[str]:
    """Brief staffing gaps and staff beside attendance: on the record, not findings."""
    return [*_brief(data, fmt), *_staff(data, fmt)]


def doubt_section(data: ReportData, fmt: Fmt) -> list[str]:
    """Every stretch in which a figure rested on a sensor in doubt, or on a clamp at 0."""
    spans = data.doubts
    out = ["<h3>Figures in doubt</h3>"]
    if not spans:
        out.append("<p>No figure rested on a sensor in doubt at any time.</p>")
        return out
    rows = []
    for x in spans:
        start = from_us(x.start)
        end = from_us(x.end) if x.end is not None else None
        rows.append(
            f"<tr><td>{escape(_FIGURE.get(x.figure, x.figure))}</td><td>{escape(x.why)}</td>"
            f"<td>{escape(fmt.when(start))}</td><td>{escape(_until(end, fmt))}</td>"
            f"<td class='num'>{escape(duration(_seconds(start, end, data.log_end)))}</td></tr>"
        )
    out.append(
        "<p>While a figure rested on one of these, every finding that reads it is "
        "indeterminate for that time, and the timeline marks the minute uncertain. "
        "Attendance “clamped at 0” means the counts less an inspector's adjustment went "
        "below zero: it reads 0 until the next adjustment; “cars exceed persons counted” "
        "means the lots held more cars than the gates counted persons, staff on duty "
        "added (see “Lots against the gates”).</p>"
    )
    out.append(table(["Figure", "Why", "From", "Until", "For"], rows, {4}))
    return out
