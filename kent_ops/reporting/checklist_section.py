"""The facilities checklist section of the report (SPEC 4a; issue 8 extends it).

What sensors cannot see, inspectors mark on site: each applicable item of permit:C, D
and F with every mark it received (who, when, what result, what was found) and the
result it ended with, then the deficiencies as findings. Inspection records are
``message`` records on ``kent/{e}/inspector/{who}/inspection``, collected during the
replay. The section is one function of the report's facts, so it can be replaced or
extended on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from kent_ops.checklist import applicable_items
from kent_ops.permit import Permit
from kent_ops.reporting.findings import Finding

__all__ = ["checklist_section"]

_RESULT_TAG = {"ok": "ok", "deficient": "breach", "n/a": "data"}


def checklist_section(
    permit: Permit,
    inspections: list[dict[str, Any]],
    findings: list[Finding],
    when: Callable[[str | None], str],
) -> str:
    """HTML for the checklist: every item's history and the deficiency findings.

    Args:
        permit: the permit (which items apply: housing only overnight, food if served).
        inspections: accepted inspection marks in log order (``by``, ``at``, ``item``,
            ``result``, ``note``, ``record``).
        findings: the report's findings (``facility-deficient`` ones are listed here).
        when: formats an ISO time for the page (the event's zone).
    """
    by_item: dict[str, list[dict[str, Any]]] = {}
    for mark in inspections:
        by_item.setdefault(mark["item"], []).append(mark)
    items = applicable_items(permit)
    marked = sum(1 for it in items if it.item in by_item)
    out = [
        f"<p>{marked} of {len(items)} applicable items were marked by an inspector; "
        f"{len(inspections)} mark{'s' if len(inspections) != 1 else ''} in all.</p>"
    ]
    rows = []
    for it in items:
        marks = by_item.get(it.item, [])
        final = marks[-1]["result"] if marks else None
        tag = (
            f'<span class="tag {_RESULT_TAG.get(final, "data")}">{escape(final)}</span>'
            if final
            else '<span class="muted">not inspected</span>'
        )
        history = "<br>".join(
            f"{escape(when(m['at']))} {escape(m['by'])}: <b>{escape(m['result'])}</b>"
            + (f" — {escape(m['note'])}" if m.get("note") else "")
            + f' <span class="muted">(record {m["record"]})</span>'
            for m in marks
        )
        rows.append(
            f"<tr><td><b>{escape(it.item)}</b></td><td>{escape(it.text)}"
            f'<br><span class="muted">{escape(it.cite)}</span></td><td>{tag}</td>'
            f"<td>{history or '—'}</td></tr>"
        )
    out.append(
        "<table><thead><tr><th>Item</th><th>Requirement</th><th>Result</th>"
        "<th>Marks</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )
    unknown = sorted(set(by_item) - {it.item for it in items})
    if unknown:
        out.append(
            '<p class="note">Marks for items that do not apply to this permit: '
            + ", ".join(escape(u) for u in unknown)
            + "</p>"
        )
    deficient = [f for f in findings if f.rule == "facility-deficient"]
    out.append("<h3>Deficiencies</h3>")
    if not deficient:
        out.append("<p>No item was marked deficient.</p>")
    else:
        out.append(
            "<table><thead><tr><th>Finding</th><th>Item</th><th>Found</th><th>From</th>"
            "<th>Until</th></tr></thead><tbody>"
            + "".join(
                f'<tr class="breach"><td>{escape(f.id)}</td><td>{escape(f.subject or "")}</td>'
                f"<td>{escape(str(f.worst_observed.get('note', '')))}</td>"
                f"<td>{escape(when(f.start.isoformat()))}</td>"
                f"<td>{escape(when(f.end.isoformat()) if f.end else 'still deficient')}</td></tr>"
                for f in deficient
            )
            + "</tbody></table>"
        )
    return "\n".join(out)
