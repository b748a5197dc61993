"""``index.html``: the one page the Town Board reads, self-contained and printable.

The template (``page.html``, shipped as package data) holds the layout and the CSS; this
module renders each section from the report's facts. Everything that came from the
evidence log (inspector notes above all, which anyone with an inspector's login can
write) is HTML-escaped here, and the charts are embedded as data URIs, so the page can
be mailed, archived and printed as one file.
"""

from __future__ import annotations

import base64
from datetime import datetime
from html import escape
from importlib import resources
from string import Template
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.report.checklist_section import checklist_section
from kent_ops.report.findings import Finding
from kent_ops.report.model import ReportData

__all__ = ["render_page"]

CHART_CAPTIONS = {
    "attendance.png": (
        "Attendance: the highest figure in each minute, against the permitted maximum at one "
        "time and the 500 persons above which a permit is needed. Shaded: periods a "
        "max-at-one-time or permit-required breach held. A figure can cross a line without a "
        "finding: a breach is found once it has held for the permit's pending time."
    ),
    "staffing.png": (
        "Registered nurses (above) and doctors (below) on duty, the fewest in each minute, "
        "against those the attendance required. Shaded: periods a nurse-ratio or "
        "doctor-on-duty breach held."
    ),
    "parking.png": (
        "Car spaces provided by the permit's lots against the spaces the attendance required "
        "(one per four persons), and the cars counted in the lots. Shaded: parking-ratio "
        "breaches."
    ),
}

_SEVERITY_ORDER = {"breach": 0, "warning": 1, "data": 2}


def _template() -> Template:
    text = resources.files("kent_ops.report").joinpath("page.html").read_text("utf-8")
    return Template(text)


class _Fmt:
    """Formats times and figures for the page, in the event's zone."""

    def __init__(self, data: ReportData) -> None:
        self.tz = data.permit.timezone

    def when(self, value: str | datetime | None) -> str:
        if value is None or value == "":
            return "—"
        t = datetime.fromisoformat(value) if isinstance(value, str) else value
        local = t.astimezone(self.tz)
        spec = "seconds" if local.microsecond == 0 else "milliseconds"
        return local.isoformat(sep=" ", timespec=spec)

    def day(self, value: datetime) -> str:
        local = value.astimezone(self.tz)
        return f"{local:%A %-d %B %Y, %H:%M} {local.tzname()}"


def duration(seconds: float) -> str:
    """``2 h 05 min 03 s``: a duration a board member reads at a glance."""
    whole = round(seconds)
    if abs(seconds - whole) > 0.0005:
        frac = f"{seconds - int(seconds):.3f}"[1:]
        whole = int(seconds)
    else:
        frac = ""
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = []
    if days:
        parts.append(f"{days} d")
    if days or hours:
        parts.append(f"{hours} h")
    if days or hours or minutes:
        parts.append(f"{minutes:02d} min" if (days or hours) else f"{minutes} min")
    parts.append(f"{secs:02d}{frac} s" if parts else f"{secs}{frac} s")
    return " ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def figures(values: dict[str, Any]) -> str:
    """``attendance 4,212; inside window yes``: a figure dict in words, escaped."""
    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            shown = "yes" if value else "no"
        elif isinstance(value, int):
            shown = f"{value:,}"
        elif isinstance(value, float) and key.startswith("share"):
            shown = f"{value:.0%}"
        elif isinstance(value, float):
            shown = f"{value:,.3g}"
        elif value is None:
            shown = "—"
        else:
            shown = str(value)
        out.append(f"{key.replace('_', ' ')} {shown}")
    return escape("; ".join(out)) if out else "—"


def _table(head: list[str], rows: list[str], numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    cells = "".join(
        f'<th class="num">{escape(h)}</th>' if i in numeric else f"<th>{escape(h)}</th>"
        for i, h in enumerate(head)
    )
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _verdict(data: ReportData, fmt: _Fmt) -> str:
    v = data.verdict
    items = [f"<li>{escape(v.reason)}.</li>"]
    breaches = [f for f in data.findings if f.is_breach]
    if breaches:
        items.append(
            f"<li>{len(breaches)} breach finding{'s' if len(breaches) != 1 else ''}, "
            f"{_count(sum(1 for f in data.findings if f.severity == 'warning'), 'warning')}, "
            f"{_count(sum(1 for f in data.findings if f.severity == 'data'), 'data finding')}."
            "</li>"
        )
    p = data.penalty
    if p.proven or p.uncertain:
        items.append(f"<li>Fine exposure: {escape(_penalty_line(data))}.</li>")
    cu = data.clean_up
    items.append(
        f"<li>Clean-up (permit:F): <b>{escape(cu.status)}</b>; deadline "
        f"{escape(fmt.day(cu.deadline))}.</li>"
    )
    warning = ""
    if not data.comparison.equal:
        warning = (
            '<div class="warning"><b>Warning:</b> the replayed findings differ from the alerts '
            "the live service published (see Data quality); the figures below are the "
            "replay's.</div>"
        )
    return (
        f'<div class="verdict {escape(v.word)}"><div class="word">{escape(v.word.upper())}</div>'
        f"<ul>{''.join(items)}</ul></div>{warning}"
    )


def _penalty_line(data: ReportData) -> str:
    p = data.penalty
    if p.proven:
        text = (
            f"{p.proven} violation{'s' if p.proven != 1 else ''}: "
            f"${p.low:,} to ${p.high:,} in fines"
        )
    else:
        text = "no proven violation"
    if p.uncertain:
        text += (
            f", and {p.uncertain} more while counts were uncertain "
            f"(up to ${p.high_with_uncertain:,} if proven)"
        )
    return text


def _permit_facts(data: ReportData, fmt: _Fmt) -> str:
    pm = data.permit
    windows = "<br>".join(
        f"{escape(fmt.day(w.start))} to {escape(fmt.day(w.end))}" for w in pm.windows
    )
    lots = ", ".join(f"{escape(k)} {v:,}" for k, v in pm.lots.items()) or "none"
    gates = ", ".join(
        escape(g) + (" (manual tally)" if g in pm.manual_gates else "") for g in pm.gates
    )
    agent = (
        f"{escape(pm.agent.name)}, {escape(pm.agent.address)} ({escape(pm.agent.county)} County)"
        if pm.agent
        else "none"
    )
    rows = [
        ("Event", f"{escape(pm.event_name)} <code>{escape(pm.event_id)}</code>"),
        ("Permit", f"{escape(pm.number or '—')}, status <b>{escape(pm.status)}</b>"),
        ("Applicant", f"{escape(pm.applicant_name)}; agent: {agent}"),
        ("Property", f"{escape(pm.property_address)} (owner {escape(pm.property_owner)})"),
        ("Permitted windows", windows),
        (
            "Maximum at one time / collectively",
            f"{pm.max_at_one_time:,} / {pm.max_collective:,} persons (permit:B(2))",
        ),
        (
            "Vehicles at one time / collectively",
            f"{pm.vehicles_at_one_time:,} / {pm.vehicles_collective:,}",
        ),
        (
            "Medical staff",
            f"at least {pm.doctors_min} doctor(s); 1 registered nurse per "
            f"{pm.persons_per_nurse:,} persons (permit:C(9))",
        ),
        ("Security guards declared", f"{pm.security_guards:,} (permit:B(8))"),
        (
            "Parking",
            f"{pm.spaces_provided:,} spaces: {lots}; 1 per {law.PERSONS_PER_CAR_SPACE} persons "
            "required (permit:C(6))",
        ),
        (
            "Overnight / housing",
            f"{'yes' if pm.overnight else 'no'} / {'declared' if pm.housing_declared else 'none'}",
        ),
        (
            "Insurance (permit:E)",
            f"bodily injury ${pm.insurance_bodily_injury_per_person:,} per person, "
            f"${pm.insurance_bodily_injury_per_occurrence:,} per occurrence; property damage "
            f"${pm.insurance_property_damage:,}; "
            f"{pm.insurance_cancellation_notice_days} days' cancellation notice",
        ),
        (
            "Clean-up bond (permit:F)",
            f"${pm.bond_amount:,}"
            + (
                f", posted {pm.bond_posted_on.isoformat()}" if pm.bond_posted_on else ", not posted"
            ),
        ),
        ("Fee", f"paid {pm.fee_paid_on.isoformat()}" if pm.fee_paid_on else "not paid"),
        ("Sensors", f"gates: {gates}; staff stations: {escape(', '.join(pm.staff_stations))}"),
    ]
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    out = [f'<table class="facts"><tbody>{body}</tbody></table>']
    out.append("<h3>Before the assembly (SPEC 5: what the permit file itself shows)</h3>")
    if data.pre_event:
        out.append(
            "<ul>"
            + "".join(
                f'<li><span class="tag {"breach" if f.severity == "breach" else "warning"}">'
                f"{escape(f.severity)}</span> <b>{escape(f.id)}</b> ({escape(f.cite)}): "
                f"{escape(f.message)}</li>"
                for f in data.pre_event
            )
            + "</ul>"
        )
    else:
        out.append("<p>None: the permit file meets every pre-event requirement.</p>")
    return "\n".join(out)


def _charts(data: ReportData) -> str:
    out = [
        "<p>Times in the event's zone. Shaded bands are breaches as found (section 3); the "
        "strip along each chart's top marks every one, widened so that a short breach "
        "still shows on a long chart.</p>"
    ]
    for name, caption in CHART_CAPTIONS.items():
        png = data.charts.get(name)
        if png is None:
            continue
        uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        out.append(
            f'<figure><img src="{uri}" alt="{escape(caption)}">'
            f"<figcaption>{escape(caption)} Also as <code>{escape(name)}</code>; minute "
            "figures in <code>timeline.csv</code>.</figcaption></figure>"
        )
    return "\n".join(out)


def _finding_row(f: Finding, fmt: _Fmt) -> str:
    css = (
        "uncertain"
        if f.is_breach and f.uncertain
        else ("breach" if f.is_breach else "warning-row" if f.severity == "warning" else "data")
    )
    tag = f'<span class="tag {escape(f.severity)}">{escape(f.severity)}</span>'
    if f.uncertain:
        tag += ' <span class="tag uncertain">uncertain</span>'
    acks = "<br>".join(
        f"{escape(str(a.get('by', '')))} at {escape(fmt.when(a.get('at')))}: "
        f"{escape(str(a.get('comment', '')))}"
        for a in f.acknowledged
    )
    end = fmt.when(f.end.isoformat()) if f.end else "still held when the log ends"
    subject = f"<br><span class='muted'>{escape(f.subject)}</span>" if f.subject else ""
    evidence = (
        f"record {f.evidence_record}<br><span class='hash'>{escape((f.evidence_hash or '')[:16])}"
        "…</span>"
        if f.evidence_record is not None
        else "—"
    )
    return (
        f'<tr class="{css}"><td>{escape(f.id)}</td><td><b>{escape(f.rule)}</b>{subject}'
        f"<br>{tag}</td><td>{escape(f.cite)}</td>"
        f"<td>{escape(fmt.when(f.start.isoformat()))}</td><td>{escape(end)}</td>"
        f'<td class="num">{escape(duration(f.duration_s))}</td>'
        f"<td>{figures(f.worst_observed)}</td><td>{figures(f.required)}</td>"
        f"<td>{acks or '—'}</td><td>{evidence}</td></tr>"
    )


def _findings(data: ReportData, fmt: _Fmt) -> str:
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
        _table(head, [_finding_row(f, fmt) for f in ordered], {5}),
    ]
    if data.breach_minutes:
        rows = []
        for rule, minutes in data.breach_minutes.items():
            these = [f for f in data.findings if f.rule == rule]
            total = sum(f.duration_s for f in these)
            rows.append(
                f"<tr><td>{escape(rule)}</td><td class='num'>{len(these)}</td>"
                f"<td class='num'>{escape(duration(total))}</td>"
                f"<td class='num'>{minutes:,}</td></tr>"
            )
        out.append("<h3>Breaches by rule</h3>")
        out.append(
            _table(["Rule", "Findings", "Total duration", "Minutes touched"], rows, {1, 2, 3})
        )
    return "\n".join(out)


def _penalties(data: ReportData) -> str:
    p = data.penalty
    lines = [
        f"<p>Each violation is punishable by a fine of ${law.FINE_MIN_USD:,} to "
        f"${law.FINE_MAX_USD:,}, or imprisonment of up to one year, or both "
        "(penalties:B). Each breach finding is counted as one violation"
        + (", and so is the failed clean-up" if data.clean_up.is_breach else "")
        + ".</p>",
        f"<p><b>{escape(_penalty_line(data))}.</b></p>",
    ]
    if p.uncertain:
        lines.append(
            '<p class="note">Findings marked uncertain arose while a gate counter was offline '
            "or stale: the attendance behind them may be wrong, so they are not counted as "
            "proven.</p>"
        )
    return "\n".join(lines)


def _clean_up(data: ReportData, fmt: _Fmt) -> str:
    cu = data.clean_up
    meaning = {
        "done": "done in time",
        "open": "open: the deadline has not passed when the log ends and no clean-up is "
        "recorded yet",
        "late": "late: recorded only after the deadline",
        "not done": "not done: the deadline passed with no clean-up recorded",
    }[cu.status]
    tag = "ok" if cu.status == "done" else "warning" if cu.status == "open" else "breach"
    out = [
        f'<p><span class="tag {tag}">{escape(cu.status)}</span> {escape(meaning)}.</p>',
        f"<p>The assembly's last window ended {escape(fmt.day(cu.assembly_end))}; trash and "
        f"waste must be removed within {law.CLEAN_UP_DAYS} days, by "
        f"<b>{escape(fmt.day(cu.deadline))}</b>. It is recorded by an inspector marking "
        "checklist item F ok, or by an inspector's note starting “CLEAN-UP OK”.</p>",
    ]
    if cu.satisfied_by:
        m = cu.satisfied_by
        out.append(
            f"<p>Recorded by {escape(str(m.get('by', '')))} at {escape(fmt.when(m.get('at')))} "
            f"({escape(m.get('source', ''))}, record {m.get('record')}).</p>"
        )
    if cu.marks:
        rows = [
            f"<tr><td>{escape(fmt.when(m.get('at')))}</td><td>{escape(str(m.get('by', '')))}</td>"
            f"<td>{escape(m.get('source', ''))}</td><td>{escape(str(m.get('result', '')))}</td>"
            f"<td>{escape(str(m.get('note') or m.get('text') or ''))}</td></tr>"
            for m in cu.marks
        ]
        out.append(_table(["At", "By", "From", "Result", "Text"], rows))
    return "\n".join(out)


def _inspectors(data: ReportData, fmt: _Fmt) -> str:
    acks = [(f, a) for f in data.findings for a in f.acknowledged]
    out = ["<h3>Acknowledgements</h3>"]
    if acks:
        rows = [
            f"<tr><td>{escape(fmt.when(a.get('at')))}</td><td>{escape(str(a.get('by', '')))}</td>"
            f"<td>{escape(f.id)} {escape(f.rule)}</td>"
            f"<td>{escape(str(a.get('comment', '')))}</td></tr>"
            for f, a in sorted(acks, key=lambda fa: str(fa[1].get("at")))
        ]
        out.append(_table(["At", "Inspector", "Alert", "Comment"], rows))
    else:
        out.append("<p>No alert was acknowledged.</p>")
    out.append("<h3>Inspector notes</h3>")
    notes = data.collector.notes
    if notes:
        rows = [
            f"<tr><td>{escape(fmt.when(n['at']))}</td><td>{escape(n['by'])}</td>"
            f"<td>{escape(str(n.get('alert') or '—'))}</td><td>{escape(n['text'])}</td>"
            f"<td class='num'>{n['record']}</td></tr>"
            for n in notes
        ]
        out.append(_table(["At", "Inspector", "About", "Note", "Record"], rows, {4}))
    else:
        out.append("<p>No inspector notes.</p>")
    return "\n".join(out)


def _data_quality(data: ReportData, fmt: _Fmt) -> str:
    c = data.collector
    r = data.replay
    out = []
    outages = [f for f in data.findings if f.rule == "sensor-offline"]
    out.append("<h3>Sensor outages</h3>")
    if outages:
        rows = [
            f"<tr><td>{escape(f.subject or '')}</td>"
            f"<td>{escape(fmt.when(f.start.isoformat()))}</td>"
            f"<td>{escape(fmt.when(f.end.isoformat()) if f.end else 'still out at the end')}</td>"
            f"<td class='num'>{escape(duration(f.duration_s))}</td>"
            f"<td>{figures(f.worst_observed)}</td></tr>"
            for f in outages
        ]
        out.append(_table(["Sensor", "From", "Until", "Duration", "Seen"], rows, {3}))
    else:
        out.append("<p>No sensor was offline or silent long enough to raise an alert.</p>")

    out.append("<h3>Rejected messages</h3>")
    if c.rejected:
        rows = [
            f"<tr><td>{escape(reason)}</td><td class='num'>{g.count:,}</td>"
            f"<td><code>{escape(g.topic)}</code><br>{escape(g.example)}</td>"
            f"<td>{escape(fmt.when(g.first_at))}<br>{escape(fmt.when(g.last_at))}</td></tr>"
            for reason, g in sorted(c.rejected.items(), key=lambda kv: -kv[1].count)
        ]
        out.append(
            f"<p>{_count(c.rejected_total, 'message')} rejected: each is stored in the log "
            "with its reason and changed no figure.</p>"
        )
        out.append(_table(["Reason", "Messages", "Example", "First / last"], rows, {1}))
    else:
        out.append("<p>No message was rejected.</p>")
    if c.repeats:
        total = sum(g.count for g in c.repeats.values())
        rows = [
            f"<tr><td>{escape(reason)}</td><td class='num'>{g.count:,}</td>"
            f"<td>{escape(g.example)}</td></tr>"
            for reason, g in sorted(c.repeats.items(), key=lambda kv: -kv[1].count)
        ]
        out.append(
            f"<p>{_count(total, 'accepted message')} changed nothing or were noted (repeats "
            "redelivered by the broker, restarts):</p>"
        )
        out.append(_table(["Note", "Messages", "Example"], rows, {1}))

    out.append("<h3>Counter restarts</h3>")
    resets = [f for f in data.findings if f.rule == "counter-reset"]
    if resets:
        rows = [
            f"<tr><td>{escape(f.subject or '')}</td>"
            f"<td>{escape(fmt.when(f.start.isoformat()))}</td>"
            f"<td>{escape(f.message)}</td></tr>"
            for f in resets
        ]
        out.append(_table(["Gate", "At", "What happened"], rows))
    else:
        out.append("<p>No gate counter restarted.</p>")

    out.append("<h3>Attendance adjustments</h3>")
    if data.adjustments:
        rows = [
            f"<tr><td>{escape(fmt.when(a.get('at')))}</td><td>{escape(str(a.get('by', '')))}</td>"
            f"<td class='num'>{int(a.get('attendance', 0)):,}</td>"
            f"<td class='num'>{int(a.get('offset', 0)):+,}</td>"
            f"<td>{escape(str(a.get('reason', '')))}</td></tr>"
            for a in data.adjustments
        ]
        out.append(_table(["At", "Inspector", "Set to", "Offset", "Why"], rows, {2, 3}))
    else:
        out.append("<p>No inspector adjusted the attendance.</p>")

    out.append("<h3>The service</h3>")
    events: dict[str, int] = {}
    for e in c.service_events:
        events[str(e.get("event"))] = events.get(str(e.get("event")), 0) + 1
    lines = [
        f"clock: <b>{escape(r.clock)}</b> ("
        + (
            "times are when messages were received"
            if r.clock == "wall"
            else "times are the sensors' own timestamps"
        )
        + ")",
        f"runs of the service: {events.get('started', 0)}; broker disconnections: "
        f"{events.get('broker-disconnected', 0)}; storage errors: {events.get('storage-error', 0)}",
    ]
    if events.get("permit-changed"):
        lines.append(
            f"the permit file changed while the log was kept ({events['permit-changed']} times)"
        )
    if data.log_permit_sha256 and data.log_permit_sha256 != data.permit_sha256:
        lines.append(
            "<b>the permit file given to this report differs from the one the log was opened "
            "with</b> (SHA-256 " + escape(data.log_permit_sha256[:16]) + "… in the log)"
        )
    if r.disagreements:
        lines.append(
            f"<b>{r.disagreements:,} messages were accepted or rejected differently on replay "
            "than live</b>"
        )
    out.append("<ul>" + "".join(f"<li>{line}</li>" for line in lines) + "</ul>")

    cmp = data.comparison
    out.append("<h3>Replay against the live alerts</h3>")
    if cmp.equal:
        out.append(
            f"<p>The {cmp.replay_count} replayed alerts equal the {cmp.live_count} the live "
            "service logged and published (id, rule, subject, since, raised, ended, cleared "
            "and state).</p>"
        )
    else:
        out.append(
            '<div class="warning"><b>The replay differs from what was published live:</b><ul>'
            + "".join(f"<li>{escape(p)}</li>" for p in cmp.problems)
            + "</ul></div>"
        )
    for note in cmp.notes:
        out.append(f'<p class="note">{escape(note)}</p>')
    return "\n".join(out)


def _evidence(data: ReportData, fmt: _Fmt) -> str:
    r = data.replay
    cps = data.checkpoints
    matched = sum(1 for c in cps if c.matched)
    rows = [
        ("File", f"<code>{escape(data.evidence_path.name)}</code>"),
        ("Records", f"{r.records:,} ({r.messages:,} messages received)"),
        ("Head hash", f"<span class='hash'>{escape(r.head_hash)}</span>"),
        (
            "Verification",
            "the whole hash chain was recomputed record by record and matches"
            if r.verified
            else "not verified",
        ),
        ("First record", escape(fmt.when(r.first_time))),
        ("Last record", escape(fmt.when(r.last_time))),
        ("Log ends (engine time)", escape(fmt.when(r.end))),
        (
            "Checkpoints",
            f"{matched} of {len(cps)} checkpoints the service published match the chain",
        ),
        ("Permit file SHA-256", f"<span class='hash'>{escape(data.permit_sha256)}</span>"),
    ]
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    out = [f'<table class="facts"><tbody>{body}</tbody></table>']
    bad = [c for c in cps if not c.matched]
    if bad:
        out.append(
            '<div class="warning"><b>Checkpoints that do not match:</b><ul>'
            + "".join(
                f"<li>record {c.checkpoint.record_id}: {escape(c.problem or '')}</li>" for c in bad
            )
            + "</ul></div>"
        )
    if cps:
        last = cps[-1].checkpoint
        out.append(
            f"<p class='muted'>Anyone who kept a checkpoint published on "
            f"<code>kent/{escape(data.permit.event_id)}/evidence/checkpoint</code> can compare "
            f"it with this chain. The last in the log: record {last.record:,}, hash "
            f"<span class='hash'>{escape(last.hash)}</span>, at {escape(fmt.when(last.at))}.</p>"
        )
    return "\n".join(out)


def render_page(data: ReportData) -> str:
    """The whole page as one HTML text."""
    fmt = _Fmt(data)
    pm = data.permit
    subtitle = (
        f"Post-event compliance report · permit {pm.number or '—'} · Town of Kent, "
        "“Assemblies, Mass” (Local Law No. 3 of 1971)"
    )
    footer = (
        f"Written by kent-ops {escape(data.version)} on "
        f"{escape(fmt.when(data.generated_at))} from the evidence log "
        f"<code>{escape(data.evidence_path.name)}</code> ({data.replay.records:,} records, head "
        f"<span class='hash'>{escape(data.replay.head_hash[:16])}…</span>), replayed through "
        "the same engine that ran live. Every file of the report is listed with its SHA-256 in "
        "<code>manifest.json</code>. Minute figures: the highest attendance and the fewest "
        "staff at any moment of the minute."
    )
    return _template().substitute(
        version=escape(data.version),
        title=escape(f"{pm.event_name}: compliance report ({data.verdict.word})"),
        event_name=escape(pm.event_name),
        subtitle=escape(subtitle),
        verdict=_verdict(data, fmt),
        permit_facts=_permit_facts(data, fmt),
        charts=_charts(data),
        findings=_findings(data, fmt),
        penalties=_penalties(data),
        clean_up=_clean_up(data, fmt),
        inspectors=_inspectors(data, fmt),
        checklist=checklist_section(
            pm, data.collector.inspections, data.findings, lambda at: fmt.when(at)
        ),
        data_quality=_data_quality(data, fmt),
        evidence=_evidence(data, fmt),
        footer=footer,
    )
