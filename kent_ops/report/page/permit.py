"""The permit beyond its terms: its properties, its status over time, the pre-event checks.

The law reaches each owner who lets property be used for "any part or portion" of the
assembly (permit:A), so each property is named with its owner, tenant or lessee, and the
persons the live status showed on it. The Board may revoke the permit through its Clerk
(permit:G); the table of its status over time shows each change with its resolution and
the instant it took effect. The pre-event checks are what ``kent-ops permit check`` runs
on the permit file, each listed with what it found.
"""

from __future__ import annotations

from html import escape

from kent_ops.core.precheck import NO_PERMIT_NEEDED
from kent_ops.report.findings import plural
from kent_ops.report.model import ReportData
from kent_ops.report.page.fmt import Fmt, cites, table

__all__ = ["permit_history", "pre_event", "properties"]


def properties(data: ReportData, fmt: Fmt) -> str:
    """Each property, its owner, tenant or lessee, and the persons on it (highest, at the end)."""
    rows = []
    for p in data.properties:
        who = f"owner {escape(p.owner)}"
        if p.tenant:
            who += f"<br>tenant or lessee {escape(p.tenant)}"
        authorised = "yes" if p.inspection_authorized else "<b>no</b>"
        if p.tenant:
            authorised += f"; tenant: {'yes' if p.tenant_authorized else '<b>no</b>'}"
        highest = f"{p.highest:,}"
        if p.highest_at is not None:
            highest += f"<br><span class='muted'>at {escape(fmt.when(p.highest_at))}</span>"
        rows.append(
            f"<tr><td><b>{escape(p.id)}</b></td><td>{who}</td><td>{escape(p.address)}</td>"
            f"<td>{authorised}</td><td class='num'>{highest}</td>"
            f"<td class='num'>{p.at_end:,}</td></tr>"
        )
    head = [
        "Property", "Owner, tenant or lessee", "Address", "Inspection authorized (permit:D)",
        "Most persons on it", "Persons on it when the log ends",
    ]  # fmt: skip
    note = (
        "<p>Persons on a property are those counted through its gates, as the live status "
        "showed them (an inspector's correction of the total is not split by property). "
        "The law's limits apply to the whole assembly, over all its properties (permit:A, "
        "“… in the aggregate …”). Which of the persons named answers for what is for the "
        "prosecutor and the court.</p>"
    )
    return note + table(head, rows, {4, 5})


def permit_history(data: ReportData, fmt: Fmt) -> str:
    """The permit's status over time: as the file gives it, then each change."""
    rows = []
    for e in data.permit_history:
        at = "from the start" if e.at is None else escape(fmt.when(e.at))
        cls = ' class="breach"' if e.status != "issued" else ""
        rows.append(
            f"<tr{cls}><td>{at}</td><td><b>{escape(e.word)}</b></td>"
            f"<td>{escape(e.resolution) or '—'}</td><td>{escape(e.by) or '—'}</td>"
            f"<td>{escape(e.reason) or '—'}</td></tr>"
        )
    lead = (
        "<p>The Town Board may revoke a permit through its Clerk (permit:G). From the instant "
        "a revocation takes effect the permit counts as not issued; a reinstatement issues it "
        "again from its instant. Each change below is in the evidence log.</p>"
    )
    if len(data.permit_history) == 1:
        lead += "<p>The permit's status did not change while the log was kept.</p>"
    return lead + table(["From", "Status", "Resolution", "By", "Reason given"], rows)


def pre_event(data: ReportData) -> str:
    """Every pre-event check and what it found; "meets every requirement" only if all ran clean."""
    checks = data.pre_event_checks
    if not data.permit.regulated:
        return f"<p>{escape(NO_PERMIT_NEEDED.format(n=data.permit.max_at_one_time))}.</p>"
    rows = []
    for c in checks:
        if c.clean:
            result = '<span class="tag ok">clean</span>'
        else:
            result = "<br>".join(
                f'<span class="tag {"breach" if f.severity == "breach" else "warning"}">'
                f"{escape(f.severity)}{' to the Board' if f.to_board else ''}</span> "
                f"{escape(f.message)}" + (f" ({escape(f.cite)})" if f.cite != c.cite else "")
                for f in c.findings
            )
        cls = ' class="breach"' if any(f.severity == "breach" for f in c.findings) else ""
        rows.append(
            f"<tr{cls}><td><b>{escape(c.id)}</b></td><td>{escape(c.what)}</td>"
            f"<td>{cites(c.cite)}</td><td>{result}</td></tr>"
        )
    breaches = sum(1 for c in checks for f in c.findings if f.severity == "breach")
    warnings = sum(1 for c in checks for f in c.findings if f.severity == "warning")
    board = sum(1 for c in checks for f in c.findings if f.to_board)
    if all(c.clean for c in checks):
        lead = (
            f"<p>All {len(checks)} checks below ran clean: none of them found anything in the "
            "permit file.</p>"
        )
    else:
        lead = (
            f"<p>{len(checks)} checks of the permit file, as <code>kent-ops permit check</code> "
            f"runs them: {plural(breaches, 'breach')} by the applicant or owner, "
            f"{plural(board, 'warning')} addressed to the Board and "
            f"{plural(warnings - board, 'other warning')}. A condition of issuing the permit "
            "(“No permit shall be issued unless …”) that the file does not show is the "
            "applicant's breach while the permit is not issued; once the Board has issued it, "
            "it is a warning addressed to the Board, which issued the permit though the "
            "condition was not shown, never a breach by the applicant. The other warnings are "
            "the Town's own duties and what its file leaves out, for the Board to cure, and "
            "questions to ask. Only a pre-event breach counts in the verdict.</p>"
        )
    return lead + table(["Check", "What it looks at", "Cite", "Result"], rows)
