"""The findings and what follows from them (sections 3 to 6).

Every alert the replay raised with its citation, start, end, duration, worst figure,
acknowledgements and evidence record; the fine range (penalties:B); clean-up
(permit:F); and what inspectors acknowledged and wrote.
"""

from __future__ import annotations

from html import escape

from kent_ops.core import ordinance as law
from kent_ops.core import wire
from kent_ops.report.findings import Finding
from kent_ops.report.model import ReportData
from kent_ops.report.page.fmt import Fmt, duration, figures, table
from kent_ops.report.page.summary import penalty_line

__all__ = ["clean_up", "findings", "inspectors", "penalties"]

_SEVERITY_ORDER = {"breach": 0, "warning": 1, "data": 2}

_CLEAN_UP_MEANING = {
    "done": "done in time",
    "open": "open: the deadline has not passed when the log ends and no clean-up is recorded yet",
    "late": "late: recorded only after the deadline",
    "not done": "not done: the deadline passed with no clean-up recorded",
}


def _row_class(f: Finding) -> str:
    if f.is_breach:
        return "uncertain" if f.uncertain else "breach"
    return "warning-row" if f.severity == "warning" else "data"


def _finding_row(f: Finding, fmt: Fmt) -> str:
    tag = f'<span class="tag {escape(f.severity)}">{escape(f.severity)}</span>'
    if f.uncertain:
        tag += ' <span class="tag uncertain">uncertain</span>'
    acks = "<br>".join(
        f"{escape(a.by)} at {escape(fmt.when(a.at))}: {escape(a.comment)}" for a in f.acknowledged
    )
    end = fmt.when(f.end) if f.end else "still held when the log ends"
    subject = f"<br><span class='muted'>{escape(f.subject)}</span>" if f.subject else ""
    evidence = (
        f"record {f.evidence_record}<br><span class='hash'>{escape((f.evidence_hash or '')[:16])}"
        "…</span>"
        if f.evidence_record is not None
        else "—"
    )
    return (
        f'<tr class="{_row_class(f)}"><td>{escape(f.id)}</td><td><b>{escape(f.rule)}</b>{subject}'
        f"<br>{tag}</td><td>{escape(f.cite)}</td>"
        f"<td>{escape(fmt.when(f.start))}</td><td>{escape(end)}</td>"
        f'<td class="num">{escape(duration(f.duration_s))}</td>'
        f"<td>{figures(f.worst_observed)}</td><td>{figures(f.required)}</td>"
        f"<td>{acks or '—'}</td><td>{evidence}</td></tr>"
    )


def _by_rule(data: ReportData) -> list[str]:
    """Each breached rule: how many findings, how long in all, how many minutes touched."""
    if not data.breach_minutes:
        return []
    rows = []
    for rule, minutes in data.breach_minutes.items():
        these = [f for f in data.findings if f.rule == rule]
        total = sum(f.duration_s for f in these)
        rows.append(
            f"<tr><td>{escape(rule)}</td><td class='num'>{len(these)}</td>"
            f"<td class='num'>{escape(duration(total))}</td>"
            f"<td class='num'>{minutes:,}</td></tr>"
        )
    return [
        "<h3>Breaches by rule</h3>",
        table(["Rule", "Findings", "Total duration", "Minutes touched"], rows, {1, 2, 3}),
    ]


def findings(data: ReportData, fmt: Fmt) -> str:
    """Section 3: every finding, breaches first, then the breaches summed by rule."""
    if not data.findings:
        return (
            "<p>No alert was raised: no live rule's condition held for its pending time "
            "(see the data quality section for what the log holds).</p>"
        )
    ordered = sorted(data.findings, key=lambda f: (_SEVERITY_ORDER.get(f.severity, 9), f.id))
    head = [
        "Id", "Rule", "Cite", "Start", "End", "Duration", "Worst observed", "Required",
        "Acknowledged", "Evidence",
    ]  # fmt: skip
    out = [
        f"<p>{len(data.findings)} finding{'s' if len(data.findings) != 1 else ''}: every alert "
        "the engine raised when the evidence log was replayed. Start is when the condition "
        "first held; end when it stopped holding. Times in "
        f"{escape(data.permit.timezone.key)}.</p>",
        table(head, [_finding_row(f, fmt) for f in ordered], {5}),
        *_by_rule(data),
    ]
    return "\n".join(out)


def penalties(data: ReportData) -> str:
    """Section 4: what each violation may cost (penalties:B), and how many there are."""
    lines = [
        f"<p>Each violation is punishable by a fine of ${law.FINE_MIN_USD:,} to "
        f"${law.FINE_MAX_USD:,}, or imprisonment of up to one year, or both "
        "(penalties:B). Each breach finding is counted as one violation"
        + (", and so is the failed clean-up" if data.clean_up.is_breach else "")
        + ".</p>",
        f"<p><b>{escape(penalty_line(data))}.</b></p>",
    ]
    if data.penalty.uncertain:
        lines.append(
            '<p class="note">Findings marked uncertain arose while a gate counter was offline '
            "or stale: the attendance behind them may be wrong, so they are not counted as "
            "proven.</p>"
        )
    return "\n".join(lines)


def clean_up(data: ReportData, fmt: Fmt) -> str:
    """Section 5: clean-up within five days of the last window (permit:F), and its marks."""
    cu = data.clean_up
    tag = "ok" if cu.status == "done" else "warning" if cu.status == "open" else "breach"
    out = [
        f'<p><span class="tag {tag}">{escape(cu.status)}</span> '
        f"{escape(_CLEAN_UP_MEANING[cu.status])}.</p>",
        f"<p>The assembly's last window ended {escape(fmt.day(cu.assembly_end))}; trash and "
        f"waste must be removed within {law.CLEAN_UP_DAYS} days, by "
        f"<b>{escape(fmt.day(cu.deadline))}</b>. It is recorded by an inspector marking "
        "checklist item F ok, or by an inspector's note starting “CLEAN-UP OK”.</p>",
    ]
    if cu.satisfied_by:
        m = cu.satisfied_by
        out.append(
            f"<p>Recorded by {escape(m.by)} at {escape(fmt.when(m.at))} "
            f"({escape(m.source)}, record {m.record}).</p>"
        )
    if cu.marks:
        rows = [
            f"<tr><td>{escape(fmt.when(m.at))}</td><td>{escape(m.by)}</td>"
            f"<td>{escape(m.source)}</td><td>{escape(m.result)}</td>"
            f"<td>{escape(m.text)}</td></tr>"
            for m in cu.marks
        ]
        out.append(table(["At", "By", "From", "Result", "Text"], rows))
    return "\n".join(out)


def _ack_order(a: wire.Acknowledgement) -> tuple[bool, float]:
    """By time; one without a time (never written by the engine) last."""
    return (a.at is None, a.at.timestamp() if a.at is not None else 0.0)


def inspectors(data: ReportData, fmt: Fmt) -> str:
    """Section 6: every acknowledgement of an alert, then every inspector note."""
    acks = [(f, a) for f in data.findings for a in f.acknowledged]
    out = ["<h3>Acknowledgements</h3>"]
    if acks:
        rows = [
            f"<tr><td>{escape(fmt.when(a.at))}</td><td>{escape(a.by)}</td>"
            f"<td>{escape(f.id)} {escape(f.rule)}</td>"
            f"<td>{escape(a.comment)}</td></tr>"
            for f, a in sorted(acks, key=lambda fa: _ack_order(fa[1]))
        ]
        out.append(table(["At", "Inspector", "Alert", "Comment"], rows))
    else:
        out.append("<p>No alert was acknowledged.</p>")
    out.append("<h3>Inspector notes</h3>")
    notes = data.collector.notes
    if notes:
        rows = [
            f"<tr><td>{escape(fmt.when(n.at))}</td><td>{escape(n.by)}</td>"
            f"<td>{escape(n.alert or '—')}</td><td>{escape(n.text)}</td>"
            f"<td class='num'>{n.record}</td></tr>"
            for n in notes
        ]
        out.append(table(["At", "Inspector", "About", "Note", "Record"], rows, {4}))
    else:
        out.append("<p>No inspector notes.</p>")
    return "\n".join(out)
