"""The gate, lot and property tables: rows from the panel functions, drawn by a RowsTable."""

from __future__ import annotations

from textual.reactive import reactive

from dashboards.common.widgets.rows_table import RowsTable
from dashboards.inspector.panels import (
    GATE_COLUMNS,
    LOT_COLUMNS,
    PROPERTY_COLUMNS,
    gate_rows,
    lot_rows,
    property_rows,
)
from kent_ops.core import wire

__all__ = ["GatesTable", "LotsTable", "PropertiesTable"]


class GatesTable(RowsTable):
    """Each gate counter: in, out, net, persons a minute, last seen, online."""

    COLUMNS = GATE_COLUMNS
    GIVE_WAY = 1  # the gate's name
    DROPPABLE = (5, 3)  # on a phone: persons a minute, then out (in less net)

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""

    def watch_status(self, status: wire.Status | None) -> None:
        self.set_rows(gate_rows(status))


class LotsTable(RowsTable):
    """Each parking lot: capacity, cars, free spaces, share full."""

    COLUMNS = LOT_COLUMNS
    GIVE_WAY = 0  # the lot's name

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""

    def watch_status(self, status: wire.Status | None) -> None:
        self.set_rows(lot_rows(status))


class PropertiesTable(RowsTable):
    """Each property of the assembly: its owner and the persons on it (shown only when
    there is more than one: with one, its figure is the attendance above)."""

    COLUMNS = PROPERTY_COLUMNS

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""

    def watch_status(self, status: wire.Status | None) -> None:
        rows = property_rows(status)
        self.set_class(bool(rows), "-shown")
        self.set_rows(rows)
