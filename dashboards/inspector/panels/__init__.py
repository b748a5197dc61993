"""The inspector's panels, each a pure function of the status snapshot (and the alerts).

A typed :class:`~kent_ops.core.wire.Status` in, a Rich renderable or table rows out:
Dolphie's ``create_panel`` habit. Nothing here counts or judges: every figure and every
limit comes from the aggregator's status (docs/protocol.md). The only judgement made
here is the colour: a figure past its limit is red, within 10% of it amber.

One module per region of the main screen, like the widgets that show them:
:mod:`.glance` (header, attendance, staffing and parking), :mod:`.tables` (gates and
lots), :mod:`.alerts` (the alert list and one alert in full), :mod:`.law` (the
permit's standing, the assembly, the properties) and :mod:`.help` (the rules). The
checklist screen's panels are :mod:`dashboards.inspector.checklist_panels`.
"""

from __future__ import annotations

from dashboards.inspector.panels.alerts import (
    SEVERITY_MARK,
    alert_detail,
    alert_history,
    alert_item,
    alert_items,
    is_flashing,
    ordered_alerts,
    pending_item,
)
from dashboards.inspector.panels.glance import (
    attendance_panel,
    compliance_panel,
    compliance_title,
    header_text,
)
from dashboards.inspector.panels.help import rules_table
from dashboards.inspector.panels.law import (
    PROPERTY_COLUMNS,
    assembly_text,
    permit_alarm,
    property_rows,
)
from dashboards.inspector.panels.tables import GATE_COLUMNS, LOT_COLUMNS, gate_rows, lot_rows

__all__ = [
    "GATE_COLUMNS",
    "LOT_COLUMNS",
    "PROPERTY_COLUMNS",
    "SEVERITY_MARK",
    "alert_detail",
    "alert_history",
    "alert_item",
    "alert_items",
    "assembly_text",
    "attendance_panel",
    "compliance_panel",
    "compliance_title",
    "gate_rows",
    "header_text",
    "is_flashing",
    "lot_rows",
    "ordered_alerts",
    "pending_item",
    "permit_alarm",
    "property_rows",
    "rules_table",
]
