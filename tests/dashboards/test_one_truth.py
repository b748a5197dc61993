"""One truth: the terminal's dashboard and the inspector's page show the same things.

Both draw the core's pure view functions; the terminal only lays them out in cells and
colours them with Rich, the page with CSS. So for the same status and alerts the
gates, the lots, the alert list, each alert's detail, the staffing lines and the
checklist read the same, word for word, on both.
"""

from __future__ import annotations

import json
from typing import Any

import dashboard_samples as samples
import msgspec
from rich.console import Console

from dashboards.inspector.checklist_panels import checklist_entries
from dashboards.inspector.panels import (
    alert_detail,
    alert_items,
    compliance_panel,
    gate_rows,
    lot_rows,
)
from kent_ops.core import wire
from kent_ops.core.connection import ConnectionState
from kent_ops.core.inspector_view import inspector_view


def page(status: wire.Status, alerts: dict[str, wire.Alert]) -> dict[str, Any]:
    view = inspector_view(
        samples.EVENT, status=status, alerts=alerts,
        connection=ConnectionState(link="up", status_ts=status.ts, aggregator_online=True),
        now=samples.NOW, monotonic=0.0,
    )  # fmt: skip
    return json.loads(msgspec.json.encode(view))


def text(line: list[list[str]]) -> str:
    return "".join(piece for piece, _ in line)


def rendered(renderable: object, width: int = 160) -> str:
    console = Console(width=width, color_system=None, legacy_windows=False)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get()


def test_the_gates_and_lots_are_the_same_rows_on_both() -> None:
    status = samples.status()
    view = page(status, {})
    for table, rows in (("gates", gate_rows(status)), ("lots", lot_rows(status))):
        terminal = [[cell.text for cell in row.cells] for row in rows]
        assert terminal == [[text([c]) for c in row["cells"]] for row in view[table]["rows"]]


def test_the_alert_list_and_each_alert_in_full_read_the_same_on_both() -> None:
    status = samples.status()
    alerts = {a.id: a for a in samples.alerts()}
    view = page(status, alerts)
    terminal = [(i.mark.plain, i.head.plain, i.body.plain if i.body else None)
                for i in alert_items(alerts, status)]  # fmt: skip
    shown = [(text([i["mark"]]), text(i["head"]), i.get("body")) for i in view["alerts"]["items"]]
    assert terminal == shown
    for alert_id, alert in alerts.items():
        detail = rendered(alert_detail(alert, status))
        for fact in view["alerts"]["details"][alert_id]["facts"]:
            assert fact["label"] in detail
            for line in fact["lines"]:
                assert text(line)[:40] in " ".join(detail.split()), (alert_id, fact)


CHECKLIST = {
    "checklist_items": [
        {"item": "C(1)(a)", "paragraph": "C(1) Drinking water", "text": "Water for all",
         "cite": "permit:C(1)(a)"},
        {"item": "C(2)(a)", "paragraph": "C(2) Toilets", "text": "Toilets clean",
         "cite": "permit:C(2)(a)"},
        {"item": "D", "paragraph": "D Inspection", "text": "Inspectors let in", "cite": "permit:D"},
    ],
    "checklist": {
        "C(2)(a)": {"result": "deficient", "by": "insp-1", "at": samples.iso(samples.NOW),
                    "note": "two locked"},
        "D": {"result": "ok", "by": "insp-2", "at": samples.iso(samples.NOW)},
    },
}  # fmt: skip


def test_staffing_and_the_checklist_say_the_same_on_both() -> None:
    status = samples.status(**CHECKLIST)
    view = page(status, {})
    terminal = " ".join(rendered(compliance_panel(status, width=120)).split())
    for row in view["staffing"]["rows"]:
        assert f"{row['label']} {row['have']} {row['limit']}" in terminal
    entries = [e for e in checklist_entries(status) if not e.is_heading]
    items = [i for g in view["checklist"]["groups"] for i in g["items"]]
    terminal = [(e.key, e.state.plain if e.state else "", e.note.plain if e.note else None)
                for e in entries]  # fmt: skip
    assert terminal == [(i["item"], i["mark"][0], i["note"] and i["note"][0]) for i in items]
    assert [result for _, result, _ in terminal] == ["· unmarked", "✗ DEFICIENT", "✓ ok"]
