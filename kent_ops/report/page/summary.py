"""The top of the page: the verdict (and a notice if the record is incomplete), the permit's
facts and the charts."""

from __future__ import annotations

import base64
from html import escape

from kent_ops.core import ordinance as law
from kent_ops.core.permit import Permit
from kent_ops.core.sensor_kinds import SENSOR_KINDS
from kent_ops.report.findings import BREACHED, plural
from kent_ops.report.model import ReportData
from kent_ops.report.page.fmt import Fmt, count

__all__ = ["CHART_CAPTIONS", "charts", "permit_facts", "verdict"]

CHART_CAPTIONS = {
    "attendance.png": (
        "Attendance: the highest figure in each minute, against the permitted maximum at one "
        "time and the 500 persons above which a permit is needed. Shaded: while an "
        "“Attendance above the permitted maximum” (max-at-one-time) or an “Assembly without a "
        "permit” (permit-required) breach was in progress. A figure can cross a line without "
        "a finding: a breach is found once it has held for the permit's pending time."
    ),
    "staffing.png": (
        "Registered nurses (above) and doctors (below): on duty, the fewest in each minute "
        "(solid blue and purple), against those the attendance required (dashed black). "
        "Shaded: while a “Registered nurses per persons present” (nurse-ratio) or “Doctor on "
        "duty” (doctor-on-duty) breach was in progress."
    ),
    "parking.png": (
        "Car spaces provided by the permit's lots against the spaces the attendance required "
        "(one per four persons), and the cars counted in the lots. Shaded: while a “Car "
        "spaces per persons present” (parking-ratio) breach was in progress."
    ),
}


def _not_watched(data: ReportData) -> str:
    """What the record does not show was watched, right under the verdict's word."""
    parts = data.unwatched.parts(data.permit.timezone)
    if len(parts) == 1:
        body = escape(parts[0][:1].upper() + parts[0][1:]) + "."
        return f'<div class="not-watched"><b>Not watched:</b> {body}</div>'
    rows = "".join(f"<li>{escape(p[:1].upper() + p[1:])}.</li>" for p in parts)
    return f'<div class="not-watched"><b>Not watched:</b><ul>{rows}</ul></div>'


def _verdict_items(data: ReportData, fmt: Fmt) -> list[str]:
    v = data.verdict
    items = [f"<li>{escape(v.reason[:1].upper() + v.reason[1:])}.</li>"]
    breaches = [f for f in data.findings if f.is_breach]
    if data.findings:
        unsure = sum(1 for f in breaches if not f.proven)
        warnings = sum(1 for f in data.findings if f.severity == "warning")
        notes = sum(1 for f in data.findings if f.severity == "data")
        items.append(
            f"<li>Findings: {count(len(breaches), 'breach finding')}"
            + (f" (of which {unsure} not proven)" if unsure else "")
            + f", {count(warnings, 'warning')}, {count(notes, 'data finding')}.</li>"
        )
    before = sum(1 for p in data.pre_event if p.severity == "breach")
    board = sum(1 for p in data.pre_event if p.to_board)
    checks = len(data.pre_event_checks)
    if data.permit.regulated:
        to_board = (
            f"; {count(board, 'warning')} addressed to the Board, which issued the permit "
            "though a condition of issuing it was not shown"
            if board
            else ""
        )
        items.append(
            f"<li>Before the assembly: {plural(before, 'breach')} by the applicant or owner "
            f"shown by the permit file ({checks} checks){to_board}.</li>"
        )
    else:
        items.append(
            f"<li>Before the assembly: no permit is needed for at most "
            f"{data.permit.max_at_one_time:,} persons at one time (permit:A).</li>"
        )
    cu = data.clean_up
    deadline = (
        f"; deadline {fmt.midnight_ending(cu.deadline)}"
        if cu.deadline and cu.status != "not done"  # its sentence names the deadline
        else ""
    )
    said = cu.sentence(fmt.when, fmt.midnight_ending).removeprefix(cu.word + ": ")
    items.append(
        f"<li>Clean-up (permit:F): <b>{escape(cu.word)}</b>{escape(deadline)} "
        f"({escape(said)}).</li>"
    )
    return items


def verdict(data: ReportData, fmt: Fmt) -> str:
    """The boxed verdict the page opens with and why; then any notice the Board must not miss."""
    v = data.verdict
    watched = _not_watched(data)
    out = [
        f'<div class="verdict {escape(v.key)}"><div class="word">{escape(v.word)}</div>'
        + (watched if v.word != BREACHED else "")
        + f"<ul>{''.join(_verdict_items(data, fmt))}</ul>"
        + (watched if v.word == BREACHED else "")
        + "</div>"
    ]
    if data.incomplete:
        ends = f"at {fmt.when(data.log_end)}" if data.log_end else "with no messages"
        out.append(
            '<div class="incomplete"><div class="word">The record is incomplete</div>'
            f"<p>The evidence log ends {escape(ends)}, so it may not show the whole "
            "assembly:</p><ul>"
            + "".join(f"<li>{escape(why)}</li>" for why in data.incomplete)
            + "</ul><p>Nothing after the log's end is in this report: a breach still in "
            "progress lasted at least as long as shown, and the verdict holds only for the "
            "time the log covers.</p></div>"
        )
    if not data.comparison.equal:
        out.append(
            '<div class="warning"><b>Warning:</b> the replayed findings differ from the alerts '
            "the live service published (see Data quality); the figures below are the "
            "replay's.</div>"
        )
    return "".join(out)


def _facts(data: ReportData, fmt: Fmt) -> list[tuple[str, str]]:
    """The permit's terms, row by row, as the Board granted them."""
    pm = data.permit
    windows = "<br>".join(
        f"{escape(fmt.day(w.start))} to {escape(fmt.day(w.end))}" for w in pm.windows
    )
    lots = ", ".join(f"{escape(k)} {v:,}" for k, v in pm.lots.items()) or "none"
    agent = (
        f"{escape(pm.agent.name)}, {escape(pm.agent.address)} ({escape(pm.agent.county)} County)"
        if pm.agent
        else "none"
    )
    bond = ", posted " + pm.bond_posted_on.isoformat() if pm.bond_posted_on else ", not posted"
    return [
        ("Event", f"{escape(pm.event_name)} <code>{escape(pm.event_id)}</code>"),
        ("Permit", f"{escape(pm.number or '—')}; {_status(data, fmt)}"),
        ("Applicant", f"{escape(pm.applicant_name)}; agent: {agent}"),
        ("Properties", _owners(data)),
        ("Permitted windows", windows),
        (
            "Maximum at one time / collectively",
            f"{pm.max_at_one_time:,} / {pm.max_collective:,} persons (permit:B(2))",
        ),
        (
            "Vehicles at one time / collectively",
            f"{pm.vehicles_at_one_time:,} / {pm.vehicles_collective:,}",
        ),
        ("Medical staff", _medical(pm)),
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
        ("Clean-up bond (permit:F)", f"${pm.bond_amount:,}{bond}"),
        ("Fee", f"paid {pm.fee_paid_on.isoformat()}" if pm.fee_paid_on else "not paid"),
        ("Sensors", _sensors(pm)),
    ]


def _sensors(pm: Permit) -> str:
    """Each kind's sensors (core/sensor_kinds/table.py), a flavour such as a manual tally named."""
    rows = []
    sensors = pm.sensors
    for kind in SENSOR_KINDS:
        if kind.in_sensors_row:
            ids = [s for s, name in sensors.items() if name == kind.name]
            flavours = [pm.sensor_kind(s).flavour for s in ids]
            named = (
                escape(s) + (f" ({f})" if f else "") for s, f in zip(ids, flavours, strict=True)
            )
            rows.append(f"{kind.plural}: {', '.join(named)}")
    return "; ".join(rows)


def _medical(pm: Permit) -> str:
    """The law's medical minimums, and the application's where it asks more (permit:G)."""
    text = (
        f"the law: at least {law.DOCTORS_MIN} doctor and 1 registered nurse per "
        f"{law.PERSONS_PER_NURSE} persons (permit:C(9))"
    )
    if pm.doctors_min > law.DOCTORS_MIN or pm.persons_per_nurse < law.PERSONS_PER_NURSE:
        text += (
            f"; the application: {pm.doctors_min} doctor{'s' if pm.doctors_min != 1 else ''} "
            f"and 1 per {pm.persons_per_nurse:,} persons (short of it: permit:G)"
        )
    return text


def _status(data: ReportData, fmt: Fmt) -> str:
    """The permit's status at the log's end, with the change that set it."""
    last = data.permit_history[-1]
    text = f"status <b>{escape(last.word)}</b>"
    if last.at is not None:
        text += f" from {escape(fmt.when(last.at))}"
        if last.resolution:
            text += f" (resolution {escape(last.resolution)})"
    elif len(data.permit_history) == 1:
        text += " throughout the log"
    return text + " (see the permit's status over time below)"


def _owners(data: ReportData) -> str:
    names = []
    for p in data.properties:
        line = f"{escape(p.id)}: {escape(p.address)}, owner {escape(p.owner)}"
        if p.tenant:
            line += f", tenant or lessee {escape(p.tenant)}"
        names.append(line)
    return "<br>".join(names) or "none"


def permit_facts(data: ReportData, fmt: Fmt) -> str:
    """The permit's terms, as the Board granted them."""
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in _facts(data, fmt))
    return f'<table class="facts"><tbody>{body}</tbody></table>'


def charts(data: ReportData) -> str:
    """The three charts, embedded as data URIs so the page stands alone."""
    out = [
        "<p>Times in the event's zone. Shaded bands are breaches in progress, as listed "
        "under Findings; the strip along each chart's top marks every one, widened so "
        "that a short breach still shows on a long chart. Attendance is the persons the "
        "gates counted: staff who enter elsewhere are not counted as persons.</p>"
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
