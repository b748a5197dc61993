"""``index.html``: the one page the Town Board reads, self-contained and printable.

The template (``page.html``, shipped as package data) holds the layout and the CSS; each
module here renders some of its sections from the report's facts:
:mod:`~kent_ops.report.page.summary` (the verdict, the permit, the charts),
:mod:`~kent_ops.report.page.findings` (findings, penalties, clean-up, inspectors),
:mod:`~kent_ops.report.page.checklist` (the facilities checklist) and
:mod:`~kent_ops.report.page.quality` (data quality and the evidence log), all writing
times and figures through :mod:`~kent_ops.report.page.fmt`. Everything that came from the
evidence log (inspector notes above all, which anyone with an inspector's login can
write) is HTML-escaped, and the charts are embedded as data URIs, so the page can be
mailed, archived and printed as one file.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from importlib import resources
from string import Template

from kent_ops.report.model import ReportData
from kent_ops.report.page.checklist import checklist_section
from kent_ops.report.page.findings import clean_up, findings, inspectors
from kent_ops.report.page.fmt import Fmt
from kent_ops.report.page.law import legend, what_the_law_provides
from kent_ops.report.page.permit import permit_history, pre_event, properties
from kent_ops.report.page.quality import data_quality, evidence
from kent_ops.report.page.summary import charts, permit_facts, verdict
from kent_ops.report.text import clean

__all__ = ["MissingPlaceholder", "css_string", "fill", "render_page"]


class MissingPlaceholder(LookupError):
    """``page.html`` has no place for a part of the page: it would be left out unsaid."""


def _template() -> Template:
    text = resources.files("kent_ops.report.page").joinpath("page.html").read_text("utf-8")
    return Template(text)


def fill(template: Template, values: dict[str, str]) -> str:
    """The template with every value in its place.

    ``string.Template`` passes over a value the template has no placeholder for, so a
    section whose ``$name`` went missing from ``page.html`` would silently drop out of
    the Board's page; here it is an error naming the placeholder (and a placeholder
    without a value is one too, as ``substitute`` has it).
    """
    places = set(template.get_identifiers())
    missing = [name for name in values if name not in places]
    if missing:
        names = ", ".join(f"${name}" for name in missing)
        raise MissingPlaceholder(f"page.html has no {names}: that part of the page would be lost")
    return template.substitute(values)


def css_string(text: str) -> str:
    """``text`` as a CSS string literal, for a printed page's header: every character that
    is not a plain letter, digit or space escaped, so nothing in it can end the string or
    the style sheet (an event's name is the organiser's to choose)."""
    out = []
    for ch in clean(text):
        if ch.isascii() and (ch.isalnum() or ch in " .,-"):
            out.append(ch)
        else:
            out.append(f"\\{ord(ch):06x} ")  # the space ends the escape and is dropped
    return '"' + "".join(out) + '"'


def _zone_span(data: ReportData) -> tuple[datetime, datetime]:
    """The first and last instants the page shows: the zone line covers them all."""
    pm = data.permit
    r = data.replay
    instants = [pm.first_start, pm.last_end]
    instants += [t for t in (r.end, data.clean_up.deadline) if t is not None]
    instants += [f.start for f in data.findings]
    return min(instants), max(instants)


def render_page(data: ReportData) -> str:
    """The whole page as one HTML text, with no control character in it."""
    fmt = Fmt(data.permit.timezone)
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
    sections = {
        "verdict": verdict(data, fmt),
        "permit_facts": permit_facts(data, fmt),
        "properties": properties(data, fmt),
        "permit_history": permit_history(data, fmt),
        "pre_event": pre_event(data),
        "charts": charts(data),
        "findings": findings(data, fmt),
        "the_law": what_the_law_provides(data, fmt),
        "clean_up": clean_up(data, fmt),
        "inspectors": inspectors(data, fmt),
        "checklist": checklist_section(pm, data.collector.inspections, data.findings, fmt,
                                       data.clean_up),
        "data_quality": data_quality(data, fmt),
        "evidence": evidence(data, fmt),
    }  # fmt: skip
    page = fill(
        _template(),
        {
            "print_header": css_string(f"{pm.event_name} · permit {pm.number or '—'}"),
            "print_verdict": css_string(f"Post-event report · {data.verdict.word}"),
            "version": escape(data.version),
            "title": escape(f"{pm.event_name}: compliance report ({data.verdict.word})"),
            "event_name": escape(pm.event_name),
            "subtitle": escape(subtitle),
            "zone": escape(fmt.zone_line(*_zone_span(data))),
            "legend": legend(subtitle + "".join(sections.values())),
            "footer": footer,
            **sections,
        },
    )
    return "\n".join(clean(line) for line in page.split("\n"))
