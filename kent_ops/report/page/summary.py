"""The top of the page: the verdict, the permit's facts and the charts (sections 1 and 2)."""

from __future__ import annotations

import base64
from html import escape

from kent_ops.core import ordinance as law
from kent_ops.report.model import ReportData
from kent_ops.report.page.fmt import Fmt, count

__all__ = ["CHART_CAPTIONS", "charts", "penalty_line", "permit_facts", "verdict"]

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


def verdict(data: ReportData, fmt: Fmt) -> str:
    """The boxed verdict the page opens with, and why, with the fine range and clean-up."""
    v = data.verdict
    items = [f"<li>{escape(v.reason)}.</li>"]
    breaches = [f for f in data.findings if f.is_breach]
    if breaches:
        items.append(
            f"<li>{len(breaches)} breach finding{'s' if len(breaches) != 1 else ''}, "
            f"{count(sum(1 for f in data.findings if f.severity == 'warning'), 'warning')}, "
            f"{count(sum(1 for f in data.findings if f.severity == 'data'), 'data finding')}."
            "</li>"
        )
    p = data.penalty
    if p.proven or p.uncertain:
        items.append(f"<li>Fine exposure: {escape(penalty_line(data))}.</li>")
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


def penalty_line(data: ReportData) -> str:
    """``7 violations: $700 to $3,500 in fines`` (penalties:B), uncertain ones apart."""
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


def _facts(data: ReportData, fmt: Fmt) -> list[tuple[str, str]]:
    """The permit's terms, row by row, as the Board granted them."""
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
    bond = ", posted " + pm.bond_posted_on.isoformat() if pm.bond_posted_on else ", not posted"
    return [
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
        ("Clean-up bond (permit:F)", f"${pm.bond_amount:,}{bond}"),
        ("Fee", f"paid {pm.fee_paid_on.isoformat()}" if pm.fee_paid_on else "not paid"),
        ("Sensors", f"gates: {gates}; staff stations: {escape(', '.join(pm.staff_stations))}"),
    ]


def _pre_event(data: ReportData) -> list[str]:
    """What the permit file itself shows before the assembly (``kent-ops permit check``)."""
    out = ["<h3>Before the assembly (what the permit file itself shows)</h3>"]
    if not data.pre_event:
        out.append("<p>None: the permit file meets every pre-event requirement.</p>")
        return out
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
    return out


def permit_facts(data: ReportData, fmt: Fmt) -> str:
    """Section 1: the permit's terms, then the pre-event findings."""
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in _facts(data, fmt))
    out = [f'<table class="facts"><tbody>{body}</tbody></table>', *_pre_event(data)]
    return "\n".join(out)


def charts(data: ReportData) -> str:
    """Section 2: the three charts, embedded as data URIs so the page stands alone."""
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
