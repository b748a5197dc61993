"""The facilities checklist (permit:C, permit:D, permit:F): the evidence for permit:G.

permit:G lets the Town Board revoke a permit when the applicant "has failed to provide
the facilities as specified". Counters cannot see that; inspectors walking the grounds
can, and each of their marks (``kent/{e}/inspector/{who}/inspection``) is a record of
the evidence log. This section states them so a hearing can rely on them: first each
deficiency (a ``facility-deficient`` finding) with its start, end and duration, who
observed it and what they wrote, and who found it put right; then every applicable
item with every mark it received. Item F (clean-up) is also shown against the
clean-up period of permit:F, which the clean-up finding decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from kent_ops.core.checklist import BY_ITEM, ChecklistItem, applicable_items
from kent_ops.core.permit import Permit
from kent_ops.report.cleanup import CleanUp
from kent_ops.report.collect import InspectionMark
from kent_ops.report.findings import Finding
from kent_ops.report.page.fmt import Fmt, duration

__all__ = ["checklist_section", "deficiency_marks"]

_RESULT_TAG = {"ok": "ok", "deficient": "breach", "n/a": "data"}

PERMIT_G = (
    "permit:G lets the Town Board revoke a permit when the applicant has failed to provide "
    "the facilities as specified."
)


def deficiency_marks(
    finding: Finding, inspections: Sequence[InspectionMark]
) -> tuple[list[InspectionMark], InspectionMark | None]:
    """The marks behind one deficiency: the deficient ones while it held, and the one ending it.

    The breach starts with the first ``deficient`` mark (pending 0) and ends with the
    ``ok`` or ``n/a`` mark that puts it right, so both are found by time on the item.
    """
    marks = [m for m in inspections if m.item == finding.subject]
    observed = [
        m
        for m in marks
        if m.result == "deficient"
        and finding.start <= m.at
        and (finding.end is None or m.at <= finding.end)
    ]
    resolved = None
    if finding.end is not None:
        resolved = next((m for m in marks if m.result != "deficient" and m.at == finding.end), None)
    return observed, resolved


def _tag(result: str | None) -> str:
    if not result:
        return '<span class="muted">not inspected</span>'
    return f'<span class="tag {_RESULT_TAG.get(result, "data")}">{escape(result)}</span>'


def _mark_line(mark: InspectionMark, fmt: Fmt, *, bold: bool) -> str:
    result = escape(mark.result)
    line = f"{escape(fmt.action(mark.made, mark.at))} <b>{escape(mark.by)}</b>: "
    line += f"<b>{result}</b>" if bold else result
    if mark.note:
        line += f" — “{escape(mark.note)}”"
    return line + f' <span class="muted">(record {mark.record})</span>'


def _observed(f: Finding, observed: list[InspectionMark], fmt: Fmt) -> str:
    """Who saw the deficiency and what they wrote, then who acknowledged or noted it."""
    seen = "<br>".join(_mark_line(m, fmt, bold=False) for m in observed) or "—"
    for ack in f.acknowledged:
        seen += (
            f"<br>acknowledged by {escape(ack.by)} at "
            f"{escape(fmt.when(ack.at))}: {escape(ack.comment)}"
        )
    for note in f.notes:
        seen += f"<br>note by {escape(note.by)} at {escape(fmt.when(note.at))}: {escape(note.text)}"
    return seen


def _deficiency_row(f: Finding, inspections: Sequence[InspectionMark], fmt: Fmt) -> str:
    observed, resolved = deficiency_marks(f, inspections)
    item = BY_ITEM.get(f.subject or "")
    requirement = (
        f"<b>{escape(f.subject or '')}</b> {escape(item.text) if item else ''}"
        f'<br><span class="muted">{escape(f.cite)}</span>'
    )
    if f.end is None:
        until = "<b>still deficient</b> when the log ends"
        lasted = f"{escape(duration(f.duration_s))} (to the log's end)"
    else:
        until = escape(fmt.when(f.end))
        lasted = escape(duration(f.duration_s))
    put_right = _mark_line(resolved, fmt, bold=True) if resolved else "—"
    tags = '<span class="tag breach">permit:G evidence</span>'
    if f.uncertain:
        tags += ' <span class="tag uncertain">uncertain</span>'
    return (
        f'<tr class="breach"><td><span class="id">{escape(f.id)}</span><br>{tags}</td>'
        f"<td>{requirement}</td>"
        f"<td>{escape(fmt.when(f.start))}</td><td>{until}</td>"
        f"<td class='num'>{lasted}</td><td>{_observed(f, observed, fmt)}</td>"
        f"<td>{put_right}</td>"
        f"<td class='num'>{f.evidence_record if f.evidence_record is not None else '—'}</td>"
        "</tr>"
    )


def _deficiencies(
    findings: list[Finding], inspections: Sequence[InspectionMark], fmt: Fmt
) -> list[str]:
    deficient = [f for f in findings if f.rule == "facility-deficient"]
    out = ["<h3>Deficiencies: the evidence for permit:G</h3>"]
    out.append(
        f'<p class="note">{escape(PERMIT_G)} Each deficiency below was observed on site by the '
        "inspector named, recorded in the evidence log at the record shown, and held as a "
        "breach from the first deficient mark until an inspector marked the item ok or "
        "n/a.</p>"
    )
    if not deficient:
        out.append("<p>No item was marked deficient.</p>")
        return out
    out.append(
        "<table><thead><tr><th>Finding</th><th>Requirement</th><th>Start</th><th>End</th>"
        "<th class='num'>Duration</th><th>Observed by (and what they wrote)</th>"
        "<th>Put right</th><th class='num'>Evidence record</th></tr></thead><tbody>"
        + "".join(_deficiency_row(f, inspections, fmt) for f in deficient)
        + "</tbody></table>"
    )
    return out


def _item_rows(
    items: Sequence[ChecklistItem],
    by_item: dict[str, list[InspectionMark]],
    deficient_items: set[str | None],
    clean_up: CleanUp,
    fmt: Fmt,
) -> list[str]:
    """A row per applicable item: its requirement, its last result and every mark."""
    rows = []
    for it in items:
        marks = by_item.get(it.item, [])
        lines = []
        for m in marks:
            line = _mark_line(m, fmt, bold=True)
            if it.item == "F":
                line += f' <span class="muted">— {escape(clean_up.counts(m))}</span>'
            lines.append(line)
        cls = ' class="breach"' if it.item in deficient_items else ""
        rows.append(
            f"<tr{cls}><td><b>{escape(it.item)}</b></td><td>{escape(it.text)}"
            f'<br><span class="muted">{escape(it.cite)}</span></td>'
            f"<td>{_tag(marks[-1].result if marks else None)}</td>"
            f"<td>{'<br>'.join(lines) or '—'}</td></tr>"
        )
    return rows


def checklist_section(
    permit: Permit,
    inspections: list[InspectionMark],
    findings: list[Finding],
    fmt: Fmt,
    clean_up: CleanUp,
) -> str:
    """HTML for the checklist: the deficiencies as permit:G evidence, then every item's marks.

    Args:
        permit: the permit (which items apply: housing only overnight, food if served).
        inspections: accepted inspection marks in log order.
        findings: the report's findings (``facility-deficient`` ones are listed here).
        fmt: writes times in the event's zone.
        clean_up: the clean-up finding (whether an item-F mark counts for it).
    """
    by_item: dict[str, list[InspectionMark]] = {}
    for mark in inspections:
        by_item.setdefault(mark.item, []).append(mark)
    items = applicable_items(permit)
    marked = sum(1 for it in items if it.item in by_item)
    deficient_items = {f.subject for f in findings if f.rule == "facility-deficient"}
    out = [
        f"<p>{marked} of {len(items)} applicable items were marked by an inspector; "
        f"{len(inspections)} mark{'s' if len(inspections) != 1 else ''} in all; "
        f"{len(deficient_items)} item{'s' if len(deficient_items) != 1 else ''} found "
        "deficient.</p>",
        *_deficiencies(findings, inspections, fmt),
        "<h3>Every item and its marks</h3>",
        "<table><thead><tr><th>Item</th><th>Requirement</th><th>Last result</th>"
        "<th>Marks (when made, who, result, what was found)</th></tr></thead><tbody>"
        + "".join(_item_rows(items, by_item, deficient_items, clean_up, fmt))
        + "</tbody></table>",
        '<p class="muted">Item F (clean-up) counts when marked ok after the assembly ended '
        "and by the end of the fifth day after the date it ended; the clean-up section "
        "gives the status.</p>",
    ]
    unknown = sorted(set(by_item) - {it.item for it in items})
    if unknown:
        out.append(
            '<p class="note">Marks for items that do not apply to this permit: '
            + ", ".join(escape(u) for u in unknown)
            + "</p>"
        )
    return "\n".join(out)
