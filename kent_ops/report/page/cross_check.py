"""The lots against the gates (data quality): the cross-check and what it made indeterminate.

Every parked car brought at least one person, so more cars in the lots than persons
counted plus staff on duty means a gate counter was missing entries
(``cars-exceed-persons``). While it held, attendance was indeterminate, and so was each
stretch of a finding resting on it (docs/law.md, "When the lots contradict the gates").
This section lists each such alert with its stretches, then the stretches of findings
that rested on it, so a reader sees at once which figures the lots contradicted.
"""

from __future__ import annotations

from html import escape

from kent_ops.core.counting import CARS_EXCEED
from kent_ops.report.findings import Finding, FindingStretch
from kent_ops.report.model import ReportData
from kent_ops.report.page.fmt import Fmt, duration, table

__all__ = ["RULE", "cross_check_section"]

RULE = "cars-exceed-persons"


def _stretch_words(x: FindingStretch, fmt: Fmt) -> str:
    until = fmt.clock(x.end) if x.end is not None else "the log's end"
    rests = f" ({'; '.join(x.rests_on)})" if x.rests_on else ""
    return f"{x.basis} {fmt.clock(x.start)}–{until}{rests}"


def _alerts(findings: list[Finding], fmt: Fmt) -> str:
    rows = [
        f"<tr><td>{escape(f.id)}</td><td>{escape(fmt.when(f.start))}</td>"
        f"<td>{escape(fmt.when(f.end) if f.end else 'still so at the end')}</td>"
        f"<td class='num'>{escape(duration(f.duration_s))}</td>"
        f"<td>{escape(f.worst_sentence)}</td>"
        f"<td>{'<br>'.join(escape(_stretch_words(x, fmt)) for x in f.parts)}</td></tr>"
        for f in findings
    ]
    return table(["Alert", "From", "Until", "For", "At its worst", "Stretches"], rows, {3})


def _resting(data: ReportData, fmt: Fmt) -> list[str]:
    """The stretches of other findings that were indeterminate because of it."""
    rows = [
        f"<tr><td>{escape(f.id)}</td><td><b>{escape(f.name)}</b> <span class='muted'>"
        f"({escape(f.rule)})</span></td><td>{escape(fmt.when(x.start))}</td>"
        f"<td>{escape(fmt.when(x.end) if x.end else 'still so at the end')}</td>"
        f"<td class='num'>{escape(duration(x.seconds))}</td></tr>"
        for f in data.findings
        if f.rule != RULE
        for x in f.parts
        if CARS_EXCEED in x.rests_on
    ]
    if not rows:
        return ["<p>No finding rested on attendance while the lots contradicted it.</p>"]
    return [
        "<p>These stretches of findings rested on attendance while the lots contradicted "
        "it: they are indeterminate, not proven.</p>",
        table(["Finding", "Rule", "From", "Until", "For"], rows, {4}),
    ]


def cross_check_section(data: ReportData, fmt: Fmt) -> list[str]:
    """The data quality's "Lots against the gates" subsection."""
    out = ["<h3>Lots against the gates</h3>"]
    findings = [f for f in data.findings if f.rule == RULE]
    brief = [d for d in data.doubts if d.why == CARS_EXCEED]
    if not findings and not brief:
        out.append(
            "<p>At no time were more cars parked than persons counted plus staff on duty.</p>"
        )
        return out
    out.append(
        "<p>Every parked car brought at least one person: more cars in the lots than persons "
        "counted plus staff on duty means a gate counter was missing entries. While that "
        "held, attendance was indeterminate (listed under “Figures in doubt” as "
        f"“{escape(CARS_EXCEED)}”), and so was every finding resting on it.</p>"
    )
    if findings:
        out.append(_alerts(findings, fmt))
    else:
        out.append(
            "<p>It never held for the permit's pending time "
            f"({data.permit.alerting.pending_s:g} s), so no alert was raised.</p>"
        )
    out += _resting(data, fmt)
    return out
