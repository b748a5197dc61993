"""The facilities checklist section of the report (SPEC 4a): the evidence for permit:G.

permit:G lets the Town Board revoke a permit when the applicant "has failed to provide
the facilities as specified". Counters cannot see that; inspectors walking the grounds
can, and each of their marks (``kent/{e}/inspector/{who}/inspection``) is a record of
the evidence log. This section states them so a hearing can rely on them: first each
deficiency (a ``facility-deficient`` finding) with its start, end and duration, who
observed it and what they wrote, and who found it put right; then every applicable
item with every mark it received. Item F (clean-up) is also shown against the five
days of permit:F, which section 5 decides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from html import escape
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core.checklist import BY_ITEM, applicable_items
from kent_ops.core.permit import Permit
from kent_ops.report.findings import Finding

__all__ = ["checklist_section", "deficiency_marks"]

_RESULT_TAG = {"ok": "ok", "deficient": "breach", "n/a": "data"}

PERMIT_G = (
    "permit:G lets the Town Board revoke a permit when the applicant has failed to provide "
    "the facilities as specified."
)


def _at(mark: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(mark["at"])


def deficiency_marks(
    finding: Finding, inspections: Sequence[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The marks behind one deficiency: the deficient ones while it held, and the one ending it.

    The breach starts with the first ``deficient`` mark (pending 0) and ends with the
    ``ok`` or ``n/a`` mark that puts it right, so both are found by time on the item.
    """
    marks = [m for m in inspections if m.get("item") == finding.subject]
    observed = [
        m
        for m in marks
        if m.get("result") == "deficient"
        and finding.start <= _at(m)
        and (finding.end is None or _at(m) <= finding.end)
    ]
    resolved = None
    if finding.end is not None:
        resolved = next(
            (m for m in marks if m.get("result") != "deficient" and _at(m) == finding.end), None
        )
    return observed, resolved


def _tag(result: str | None) -> str:
    if not result:
        return '<span class="muted">not inspected</span>'
    return f'<span class="tag {_RESULT_TAG.get(result, "data")}">{escape(result)}</span>'


def _mark_line(mark: dict[str, Any], when: Callable[[str | None], str], *, bold: bool) -> str:
    result = escape(str(mark.get("result", "")))
    line = f"{escape(when(mark['at']))} <b>{escape(str(mark.get('by', '')))}</b>: "
    line += f"<b>{result}</b>" if bold else result
    if mark.get("note"):
        line += f" — “{escape(str(mark['note']))}”"
    return line + f' <span class="muted">(record {mark.get("record")})</span>'


def _deficiencies(
    findings: list[Finding],
    inspections: Sequence[dict[str, Any]],
    when: Callable[[str | None], str],
    how_long: Callable[[float], str],
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
    rows = []
    for f in deficient:
        observed, resolved = deficiency_marks(f, inspections)
        item = BY_ITEM.get(f.subject or "")
        requirement = (
            f"<b>{escape(f.subject or '')}</b> {escape(item.text) if item else ''}"
            f'<br><span class="muted">{escape(f.cite)}</span>'
        )
        seen = "<br>".join(_mark_line(m, when, bold=False) for m in observed) or "—"
        for ack in f.acknowledged:
            seen += (
                f"<br>acknowledged by {escape(str(ack.get('by', '')))} at "
                f"{escape(when(ack.get('at')))}: {escape(str(ack.get('comment', '')))}"
            )
        for note in f.notes:
            seen += (
                f"<br>note by {escape(str(note.get('by', '')))} at "
                f"{escape(when(note.get('at')))}: {escape(str(note.get('text', '')))}"
            )
        if f.end is None:
            until = "<b>still deficient</b> when the log ends"
            lasted = f"{escape(how_long(f.duration_s))} (to the log's end)"
        else:
            until = escape(when(f.end.isoformat()))
            lasted = escape(how_long(f.duration_s))
        put_right = _mark_line(resolved, when, bold=True) if resolved else "—"
        tags = '<span class="tag breach">permit:G evidence</span>'
        if f.uncertain:
            tags += ' <span class="tag uncertain">uncertain</span>'
        rows.append(
            f'<tr class="breach"><td>{escape(f.id)}<br>{tags}</td><td>{requirement}</td>'
            f"<td>{escape(when(f.start.isoformat()))}</td><td>{until}</td>"
            f"<td class='num'>{lasted}</td><td>{seen}</td><td>{put_right}</td>"
            f"<td class='num'>{f.evidence_record if f.evidence_record is not None else '—'}</td>"
            "</tr>"
        )
    out.append(
        "<table><thead><tr><th>Finding</th><th>Requirement</th><th>Start</th><th>End</th>"
        "<th class='num'>Duration</th><th>Observed by (and what they wrote)</th>"
        "<th>Put right</th><th class='num'>Evidence record</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )
    return out


def _clean_up_word(mark: dict[str, Any], permit: Permit) -> str:
    """Whether one item-F mark counts for clean-up: after the assembly, within the 5 days."""
    end = permit.last_end
    deadline = end + timedelta(days=law.CLEAN_UP_DAYS)
    at = _at(mark)
    if at < end:
        return "made while the assembly was on: does not count for clean-up"
    if at > deadline:
        return "after the clean-up deadline (permit:F)"
    if mark.get("result") == "ok":
        return "within 5 days of the last window: satisfies clean-up (permit:F)"
    return "within the 5 days of permit:F, not ok"


def checklist_section(
    permit: Permit,
    inspections: list[dict[str, Any]],
    findings: list[Finding],
    when: Callable[[str | None], str],
) -> str:
    """HTML for the checklist: the deficiencies as permit:G evidence, then every item's marks.

    Args:
        permit: the permit (which items apply: housing only overnight, food if served).
        inspections: accepted inspection marks in log order (``by``, ``at``, ``item``,
            ``result``, ``note``, ``record``).
        findings: the report's findings (``facility-deficient`` ones are listed here).
        when: formats an ISO time for the page (the event's zone).
    """
    # The page module imports this one; its duration format is shared, so fetched late.
    from kent_ops.report.page import duration

    by_item: dict[str, list[dict[str, Any]]] = {}
    for mark in inspections:
        by_item.setdefault(mark["item"], []).append(mark)
    items = applicable_items(permit)
    marked = sum(1 for it in items if it.item in by_item)
    deficient_items = {f.subject for f in findings if f.rule == "facility-deficient"}
    out = [
        f"<p>{marked} of {len(items)} applicable items were marked by an inspector; "
        f"{len(inspections)} mark{'s' if len(inspections) != 1 else ''} in all; "
        f"{len(deficient_items)} item{'s' if len(deficient_items) != 1 else ''} found "
        "deficient.</p>"
    ]
    out.extend(_deficiencies(findings, inspections, when, duration))

    out.append("<h3>Every item and its marks</h3>")
    rows = []
    for it in items:
        marks = by_item.get(it.item, [])
        lines = []
        for m in marks:
            line = _mark_line(m, when, bold=True)
            if it.item == "F":
                line += f' <span class="muted">— {escape(_clean_up_word(m, permit))}</span>'
            lines.append(line)
        cls = ' class="breach"' if it.item in deficient_items else ""
        rows.append(
            f"<tr{cls}><td><b>{escape(it.item)}</b></td><td>{escape(it.text)}"
            f'<br><span class="muted">{escape(it.cite)}</span></td>'
            f"<td>{_tag(marks[-1]['result'] if marks else None)}</td>"
            f"<td>{'<br>'.join(lines) or '—'}</td></tr>"
        )
    out.append(
        "<table><thead><tr><th>Item</th><th>Requirement</th><th>Last result</th>"
        "<th>Marks (when, who, result, what was found)</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )
    out.append(
        '<p class="muted">Item F (clean-up) counts when marked ok within '
        f"{law.CLEAN_UP_DAYS} days after the last window ends; section 5 gives the "
        "clean-up status.</p>"
    )
    unknown = sorted(set(by_item) - {it.item for it in items})
    if unknown:
        out.append(
            '<p class="note">Marks for items that do not apply to this permit: '
            + ", ".join(escape(u) for u in unknown)
            + "</p>"
        )
    return "\n".join(out)
