"""The findings, clean-up, and what inspectors acknowledged and wrote.

Every alert the replay raised with its plain name, citation, start, end, duration, worst
figure, acknowledgements and evidence record; then, for each breached rule, how long it
was in breach in all; clean-up against the deadline of permit:F; and the inspectors'
words.
"""

from __future__ import annotations

from html import escape

from kent_ops.core import ordinance as law
from kent_ops.report.findings import Finding
from kent_ops.report.model import ReportData
from kent_ops.report.page.fmt import Fmt, cites, duration, figures, table
from kent_ops.report.page.record import on_the_record

__all__ = ["clean_up", "findings", "inspectors"]

_SEVERITY_ORDER = {"breach": 0, "warning": 1, "data": 2}
_CLEAN_UP_TAG = {
    "done": "ok",
    "open": "warning",
    "not recorded": "warning",
    "not done": "breach",
    "not applicable": "ok",
}


def _row_class(f: Finding) -> str:
    if f.is_breach:
        return "uncertain" if f.not_proven else "breach"
    return "warning-row" if f.severity == "warning" else "data"


def _finding_row(f: Finding, fmt: Fmt) -> str:
    if f.not_proven:
        tag = f'<span class="tag uncertain">breach not proven: {escape(f.not_proven)}</span>'
    else:
        tag = f'<span class="tag {escape(f.severity)}">{escape(f.severity)}</span>'
    if f.is_breach and f.proven and f.basis != "measured":
        tag += (
            f' <span class="tag uncertain">proven for {escape(duration(f.proven_s))} of it; '
            "the rest listed apart</span>"
        )
    if f.revocation_ground:
        tag += ' <span class="tag breach">a ground for revocation (permit:G)</span>'
    acks = "<br>".join(
        f"{escape(a.by)} at {escape(fmt.when(a.at))}: {escape(a.comment)}" for a in f.acknowledged
    )
    end = fmt.cell(f.end) if f.end else "still in progress when the log ends"
    lasted = escape(duration(f.duration_s)) + ("" if f.end else "<br>(to the log's end)")
    subject = f"<br><span class='muted'>{escape(f.subject)}</span>" if f.subject else ""
    evidence = (
        f"record {f.evidence_record}<br><span class='hash'>{escape((f.evidence_hash or '')[:16])}"
        "…</span>"
        if f.evidence_record is not None
        else "—"
    )
    return (
        f'<tr class="{_row_class(f)}"><td class="id">{escape(f.id)}</td><td><b>{escape(f.name)}</b>'
        f" <span class='muted'>({escape(f.rule)})</span>{subject}<br>{tag}</td>"
        f"<td>{cites(f.cite)}</td>"
        f"<td>{fmt.cell(f.start)}</td><td>{end}</td>"
        f'<td class="num wrap">{lasted}</td>'
        f"<td>{figures(f.worst_observed)}</td><td>{figures(f.required)}</td>"
        f"<td>{acks or '—'}</td><td>{evidence}</td></tr>"
    )


def _by_rule(data: ReportData) -> list[str]:
    """Each breached rule: how long it was proven in breach in all (its measured
    stretches), and apart how long it held without proof."""
    rules = dict.fromkeys(f.rule for f in data.findings if f.is_breach)
    if not rules:
        return []
    rows = []
    for rule in rules:
        these = [f for f in data.findings if f.rule == rule and f.is_breach]
        proven = [f for f in these if f.proven]
        proven_s = sum(f.proven_s for f in these)
        rest = sum(x.seconds for f in these for x in f.apart)
        rows.append(
            f"<tr><td><b>{escape(these[0].name)}</b> <span class='muted'>({escape(rule)})"
            f"</span></td><td class='num'>{len(proven)}</td>"
            f"<td class='num'>{escape(duration(proven_s)) if proven_s else '—'}</td>"
            f"<td class='num'>{escape(duration(rest)) if rest else '—'}</td></tr>"
        )
    head = ["Rule", "Proven findings", "Time proven in breach", "Not proven (duration)"]
    return [
        "<h3>Breaches by rule</h3>",
        "<p>Each rule's proven breach findings and the time they were proven for, in all: a "
        "duration, not a count. How many violations a duration holds is for the prosecutor "
        "and the court (see What the law provides). The time a breach held without proof "
        "(indeterminate, an estimate, or only within the rounding) is shown apart.</p>",
        table(head, rows, {1, 2, 3}),
    ]


def findings(data: ReportData, fmt: Fmt) -> str:
    """Every finding, breaches first, then the breaches summed by rule."""
    if not data.findings:
        return "\n".join(
            [
                "<p>No alert was raised: no live rule's condition held for its pending time "
                "(see the data quality section for what the log holds).</p>",
                *on_the_record(data, fmt),
            ]
        )
    ordered = sorted(data.findings, key=lambda f: (_SEVERITY_ORDER.get(f.severity, 9), f.id))
    head = [
        "Id", "Rule", "Cite", "Start", "End", "Duration", "Worst observed", "Required",
        "Acknowledged", "Evidence",
    ]  # fmt: skip
    out = [
        f"<p>{len(data.findings)} finding{'s' if len(data.findings) != 1 else ''}: every alert "
        "the engine raised when the evidence log was replayed. Start is when the condition "
        "first held; end when it stopped holding. A breach is proven only for the time its "
        "figures were measured; the rest of it (indeterminate, an estimate, or within the "
        "rounding) is listed under \u201cNot proven: listed apart\u201d with what it rests on."
        "</p>",
        f"<p>{escape(PERSONS)}</p>",
        *_attendance_limits(data),
        table(head, [_finding_row(f, fmt) for f in ordered], {5}, widths=FINDINGS_WIDTHS),
        *_by_rule(data),
        *on_the_record(data, fmt),
    ]
    return "\n".join(out)


FINDINGS_WIDTHS = [6, 16, 10, 8, 8, 8, 16, 8, 11, 9]
"""The findings table's columns, in percent: the figures observed get the room, a
duration (``8 min 00 s``) no more than it needs."""

PERSONS = (
    "Persons are those the gates count: entries minus exits, plus any correction an "
    "inspector made after a sweep count. Staff who enter elsewhere (crew, vendors, medical "
    "staff through a staff entrance) are not counted as persons, in attendance or against "
    "any limit."
)
"""Who the attendance figures count, as every finding about persons rests on it."""

LIMITS = (
    "Attendance above the permitted maximum (max-at-one-time) is a breach: more persons "
    "present than the application's expected maximum at one time (permit:B(2)), which is "
    "the assembly the permit authorised (permit:A: “… upon written permit authorizing such "
    "use and assembly …”). Entries above the expected total (max-collective) is a warning, "
    "not because that figure is an expectation (both figures are the application's "
    "expected maximums), but because gate entries count a person who leaves and comes back "
    "twice: entries are not persons."
)
"""Why one of the application's two figures is a breach and the other a warning."""


def _attendance_limits(data: ReportData) -> list[str]:
    """The one reason for both attendance limits, where either was found."""
    if not any(f.rule in ("max-at-one-time", "max-collective") for f in data.findings):
        return []
    return [f"<p>{escape(LIMITS)}</p>"]


def clean_up(data: ReportData, fmt: Fmt) -> str:
    """Clean-up by the end of the fifth day after the assembly ended (permit:F), and its marks."""
    cu = data.clean_up
    said = cu.sentence(fmt.when, fmt.midnight_ending)
    out = [
        f'<p><span class="tag {_CLEAN_UP_TAG.get(cu.status, "breach")}">{escape(cu.word)}'
        f"</span> {escape(said.removeprefix(cu.word + ': '))}.</p>"
    ]
    if cu.from_schedule and cu.ended_on is not None and cu.deadline is not None:
        out.append(
            "<p>The log shows no one counted at the assembly, so the period is counted from "
            f"the end of its last permitted window, {escape(fmt.day(data.permit.last_end))}: "
            f"by <b>{escape(fmt.midnight_ending(cu.deadline))}</b>.</p>"
        )
    elif cu.assembly_end is not None and cu.ended_on is not None and cu.deadline is not None:
        out.append(
            f"<p>The assembly was last on at {escape(fmt.when(cu.assembly_end))}, so it ended "
            f"on {escape(fmt.date(cu.ended_on))} (its last permitted window was to end "
            f"{escape(fmt.day(data.permit.last_end))}). Trash and waste must be removed "
            f"within {law.CLEAN_UP_DAYS} days from that date: by "
            f"<b>{escape(fmt.midnight_ending(cu.deadline))}</b>.</p>"
        )
    out.append(
        "<p>Clean-up is recorded by an inspector marking checklist item F ok, or by an "
        "inspector's note starting “CLEAN-UP OK”, after the assembly ended and by the "
        "deadline; if several fall in that time, the last decides. No record by the deadline "
        "is “not recorded”, a warning: the Town holds no record that the premises were "
        "inspected, which is no proof that they were not cleaned. Only item F found "
        "deficient after the assembly ended and not marked ok by the deadline is "
        "“not done”, a breach of permit:F.</p>"
    )
    if cu.satisfied_by:
        m = cu.satisfied_by
        out.append(
            f"<p>Recorded by {escape(m.by)} at {escape(fmt.action(m.made, m.at))} "
            f"({escape(m.source)}, record {m.record}).</p>"
        )
    if cu.marks:
        rows = [
            f"<tr><td>{escape(fmt.action(m.made, m.at))}</td><td>{escape(m.by)}</td>"
            f"<td>{escape(m.source)}</td><td>{escape(m.result)}</td>"
            f"<td>{escape(m.text)}</td><td>{escape(cu.counts(m))}</td></tr>"
            for m in cu.marks
        ]
        out.append(table(["Made (recorded)", "By", "From", "Result", "Text", "Counts?"], rows))
    return "\n".join(out)


def _recorded_clock(data: ReportData) -> str:
    """Which clock "recorded" is on: the receive clock, or the sensors' timestamps."""
    if data.replay.clock == "sensor":
        return "the engine's time: the sensors' own timestamps, never earlier than the last reading"
    return "the aggregator's receive clock"


def inspectors(data: ReportData, fmt: Fmt) -> str:
    """Every acknowledgement of an alert, then every inspector note."""
    named = {f.id: f for f in data.findings}
    acks = sorted(data.collector.acks, key=lambda a: (a.at, a.record))
    out = [
        "<p>Each action is shown at the time the inspector made it (the time their phone or "
        "dashboard stamped on it), followed, where they differ, by the time the aggregator "
        f"recorded it ({escape(_recorded_clock(data))}); findings and the clean-up period "
        "use the recorded time.</p>",
        "<h3>Acknowledgements</h3>",
    ]
    if acks:
        rows = []
        for a in acks:
            f = named.get(a.alert)
            about = (
                f"<span class='id'>{escape(a.alert)}</span> {escape(f.name)} "
                f"<span class='muted'>({escape(f.rule)})</span>"
                if f is not None
                else f"<span class='id'>{escape(a.alert)}</span>"
            )
            rows.append(
                f"<tr><td>{escape(fmt.action(a.made, a.at))}</td><td>{escape(a.by)}</td>"
                f"<td>{about}</td><td>{escape(a.comment)}</td>"
                f"<td class='num'>{a.record}</td></tr>"
            )
        head = ["Made (recorded)", "Inspector", "Alert", "Comment", "Record"]
        out.append(table(head, rows, {4}))
    else:
        out.append("<p>No alert was acknowledged.</p>")
    out.append("<h3>Inspector notes</h3>")
    notes = data.collector.notes
    if notes:
        rows = [
            f"<tr><td>{escape(fmt.action(n.made, n.at))}</td><td>{escape(n.by)}</td>"
            f"<td>{escape(n.alert or '—')}</td><td>{escape(n.text)}</td>"
            f"<td class='num'>{n.record}</td></tr>"
            for n in notes
        ]
        head = ["Made (recorded)", "Inspector", "About", "Note", "Record"]
        out.append(table(head, rows, {4}))
    else:
        out.append("<p>No inspector notes.</p>")
    return "\n".join(out)
