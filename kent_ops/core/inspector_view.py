"""What the inspector's page in a browser shows: one view of the event, for every phone.

``kent-ops serve`` feeds the inspectors' and the Clerk's phones from one hub
(:mod:`kent_ops.web.inspector_hub`), which makes this view once per change and sends
it, encoded once, to every page. The page draws it and decides nothing else. Each part
comes from the same pure functions the terminal's dashboard draws
(:mod:`kent_ops.core.glance_view`, :mod:`kent_ops.core.alert_view`,
:mod:`kent_ops.core.site_view`, :mod:`kent_ops.core.checklist_view`), so a phone and
a laptop say the same thing about the same status.

The view is JSON-ready data; a line of text is a list of ``[text, tag]`` pairs
(:mod:`kent_ops.core.tagged`). In the order of the first screen: the attendance figure
with ADMIT or HOLD, the permit's standing, the alerts (active breaches first), staffing
and parking against what is required; then the gates and the lots; then the checklist
and each alert in full (its figures, citation, evidence record and hash).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any

from kent_ops.core import wire
from kent_ops.core.alert_view import (
    alert_body,
    alert_facts,
    alert_head,
    alert_history,
    alert_mark,
    alert_title,
    is_flashing,
    ordered_items,
    pending_head,
    pending_mark,
)
from kent_ops.core.checklist_view import checklist_groups, checklist_summary, deficiency_alert
from kent_ops.core.connection import ConnectionState, connection_problem
from kent_ops.core.display import clean, event_zone, fmt_int, level, local_clock
from kent_ops.core.glance_view import (
    assembly_text,
    attendance_flags,
    compliance_title,
    order_word,
    outside_hours,
    permit_alarm,
    permit_words,
    property_lines,
    staffing_lines,
)
from kent_ops.core.site_view import (
    GATE_HEADINGS,
    LOT_HEADINGS,
    Heading,
    SiteRow,
    gate_site_rows,
    lot_site_rows,
)
from kent_ops.core.tagged import Line, Span, line_data

__all__ = [
    "CLEARED_SHOWN",
    "FORECAST_WITHIN_S",
    "attendance_bar",
    "forecast_text",
    "inspector_view",
]

CLEARED_SHOWN = 30
"""Cleared alerts listed on a phone, the newest first; the full dashboard lists all."""
FORECAST_WITHIN_S = 30 * 60
"""``HOLD in about N min`` is said when attendance reaches ``hold_at`` within this."""

Data = dict[str, Any]


def _span(span: Span | None) -> list[str] | None:
    return None if span is None else [span.text, span.tag]


def _line(line: Line | None) -> list[list[str]] | None:
    return None if line is None else line_data(line)


def attendance_bar(value: int, limit: int, mark: int | None = None) -> tuple[float, float | None]:
    """How much of the bar is filled and where the threshold's mark stands, as shares.

    The scale is the limit (or the value, once past it): the end of the bar is the
    permitted maximum and an overflow fills it (the terminal's bar is drawn the same way).
    """
    scale = max(limit, value, 1)
    fill = max(value, 0) / scale
    at = mark / scale if mark is not None and 0 < mark < scale else None
    return round(fill, 4), None if at is None else round(at, 4)


def forecast_text(hold_in_s: object) -> str | None:
    """``HOLD in about 12 min`` when attendance reaches ``hold_at`` within 30 minutes at
    its net rate (the status's ``hold_in_s``); advice, never an alert."""
    if isinstance(hold_in_s, bool) or not isinstance(hold_in_s, int | float):
        return None
    if not 0 <= hold_in_s < FORECAST_WITHIN_S:
        return None
    return f"HOLD in about {max(1, round(hold_in_s / 60))} min"


def _attendance(status: wire.Status) -> Data:
    att = status.attendance
    fill, mark = attendance_bar(att.current, att.max_at_one_time, att.threshold)
    return {
        "figure": fmt_int(att.current),
        "value": att.current,
        "level": level(att.current, att.max_at_one_time),
        "order": order_word(status),
        "limits": line_data(
            (
                Span(f"max {fmt_int(att.max_at_one_time)}"),
                Span(f" · threshold {fmt_int(att.threshold)}"),
                Span(f" · peak {fmt_int(att.peak)}"),
            )
        ),
        "bar": {"fill": fill, "mark": mark},
        "flags": line_data(attendance_flags(status)),
        "uncertain": att.uncertain,
        "forecast": forecast_text(getattr(att, "hold_in_s", None)),
    }


def _permit(status: wire.Status) -> Data:
    permit = status.permit
    return {
        "number": clean(permit.number, limit=40),
        "status": clean(permit.status, limit=32),
        "issued": permit.status == "issued",
        "words": line_data(permit_words(status)),
        "alarm": _line(permit_alarm(status)),
        "outside": _span(outside_hours(status)),
    }


def _alert_item(key: str, alert: wire.Alert, zone: tzinfo) -> Data:
    return {
        "key": key,
        "id": clean(alert.id),
        "severity": alert.severity,
        "state": alert.state,
        "active": alert.state == "active",
        "flashing": is_flashing(alert),
        "mark": _span(alert_mark(alert)),
        "head": line_data(alert_head(alert, zone)),
        "body": alert_body(alert),
    }


def _alert_detail(alert: wire.Alert, status: wire.Status | None, zone: tzinfo) -> Data:
    notes = status.notes if status is not None else ()
    return {
        "title": line_data(alert_title(alert)),
        "facts": [
            {"label": f.label, "lines": [line_data(line) for line in f.lines], "fold": f.fold}
            for f in alert_facts(alert, zone)
        ],
        "history": [[local_clock(at, zone), what] for at, what in alert_history(alert, notes)],
        "record": alert.evidence.record,
        "hash": clean(alert.evidence.hash) if alert.evidence.hash else None,
        "cite": clean(alert.cite),
    }


def _alerts(status: wire.Status | None, alerts: Mapping[str, wire.Alert], zone: tzinfo) -> Data:
    ordered = ordered_items(alerts)
    live = [(k, a) for k, a in ordered if a.state == "active"]
    cleared = [(k, a) for k, a in ordered if a.state != "active"]
    items = [_alert_item(k, a, zone) for k, a in live]
    pending = list(status.pending) if status is not None else []
    for index, p in enumerate(pending):
        items.append(
            {
                "key": f"pending:{index}:{clean(p.rule)}",
                "pending": True,
                "mark": _span(pending_mark()),
                "head": line_data(pending_head(p, zone)),
            }
        )
    shown = cleared[:CLEARED_SHOWN]
    items.extend(_alert_item(k, a, zone) for k, a in shown)
    details = {k: _alert_detail(a, status, zone) for k, a in (*live, *shown)}
    active = len(live)
    return {
        "title": f"Alerts ({active} active, {len(pending)} pending, {len(alerts)} in all)",
        "items": items,
        "details": details,
        "more": len(cleared) - len(shown),
    }


def _table(headings: tuple[Heading, ...], rows: list[SiteRow]) -> Data:
    return {
        "headings": [[h.label, h.numeric] for h in headings],
        "rows": [{"key": r.key, "cells": line_data(r.cells), "down": r.down} for r in rows],
    }


def _site(status: wire.Status | None) -> Data:
    gates = status.gates if status is not None else {}
    down = sum(1 for g in gates.values() if g.down())
    lots = status.lots if status is not None else {}
    return {
        "gates": {"title": f"Gates ({len(gates)}, {down} down)"}
        | _table(GATE_HEADINGS, gate_site_rows(status)),
        "lots": {"title": f"Lots ({len(lots)})"} | _table(LOT_HEADINGS, lot_site_rows(status)),
        "properties": [
            {"key": p.key, "name": p.name, "owner": p.owner, "persons": p.persons}
            for p in property_lines(status)
        ],
    }


def _staffing(status: wire.Status) -> Data:
    return {
        "title": compliance_title(status),
        "rows": [
            {"label": s.label, "have": fmt_int(s.have), "limit": s.limit(), "tag": s.tag}
            for s in staffing_lines(status)
        ],
    }


def _checklist(status: wire.Status | None, alerts: Mapping[str, wire.Alert]) -> Data:
    groups = []
    for group in checklist_groups(status):
        items = []
        for row in group.items:
            alert = deficiency_alert(row.item, alerts)
            items.append(
                {
                    "item": row.item,
                    "text": row.text,
                    "cite": row.cite,
                    "result": row.result,
                    "mark": _span(row.mark),
                    "who": row.who,
                    "note": _span(row.note),
                    "alert": clean(alert.id) if alert is not None else None,
                }
            )
        groups.append({"paragraph": group.paragraph, "deficient": group.deficient, "items": items})
    return {"summary": checklist_summary(status), "groups": groups}


def _notes(status: wire.Status, zone: tzinfo) -> list[Data]:
    """The latest notes the status carries, newest first."""
    return [
        {
            "by": clean(n.by),
            "at": local_clock(n.at, zone),
            "text": clean(n.text),
            "alert": clean(n.alert) if n.alert else None,
        }
        for n in reversed(status.notes)
    ]


def inspector_view(
    event_id: str,
    *,
    status: wire.Status | None,
    alerts: Mapping[str, wire.Alert],
    connection: ConnectionState,
    now: datetime,
    monotonic: float,
) -> Data:
    """The page's view now (``now`` on the event's clock, ``monotonic`` a monotonic
    clock's reading, for how long the link has been up).

    ``figures`` is False until a status has come; until then every section is empty
    and ``problem`` says what is awaited.
    """
    zone = event_zone(status)
    name = (clean(status.event_name, limit=60) if status is not None else "") or event_id
    view: Data = {
        "event": event_id,
        "name": name,
        "clock": local_clock(now, zone, with_zone=True, seconds=False),
        "timezone": str(getattr(zone, "key", "UTC")),
        "problem": connection_problem(connection, now, zone, monotonic=monotonic),
        "figures": status is not None,
        "alerts": _alerts(status, alerts, zone),
        "checklist": _checklist(status, alerts),
        **_site(status),
    }
    if status is not None:
        view |= {
            "attendance": _attendance(status),
            "permit": _permit(status),
            "staffing": _staffing(status),
            "assembly": assembly_text(status),
            "notes": _notes(status, zone),
        }
    return view
