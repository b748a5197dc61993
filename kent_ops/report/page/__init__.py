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

from html import escape
from importlib import resources
from string import Template

from kent_ops.report.model import ReportData
from kent_ops.report.page.checklist import checklist_section
from kent_ops.report.page.findings import clean_up, findings, inspectors, penalties
from kent_ops.report.page.fmt import Fmt
from kent_ops.report.page.quality import data_quality, evidence
from kent_ops.report.page.summary import charts, permit_facts, verdict

__all__ = ["render_page"]


def _template() -> Template:
    text = resources.files("kent_ops.report.page").joinpath("page.html").read_text("utf-8")
    return Template(text)


def render_page(data: ReportData) -> str:
    """The whole page as one HTML text."""
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
    return _template().substitute(
        version=escape(data.version),
        title=escape(f"{pm.event_name}: compliance report ({data.verdict.word})"),
        event_name=escape(pm.event_name),
        subtitle=escape(subtitle),
        verdict=verdict(data, fmt),
        permit_facts=permit_facts(data, fmt),
        charts=charts(data),
        findings=findings(data, fmt),
        penalties=penalties(data),
        clean_up=clean_up(data, fmt),
        inspectors=inspectors(data, fmt),
        checklist=checklist_section(pm, data.collector.inspections, data.findings, fmt),
        data_quality=data_quality(data, fmt),
        evidence=evidence(data, fmt),
        footer=footer,
    )
