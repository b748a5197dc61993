"""The gate and lot tables: rows from the panel functions, drawn by a RowsTable."""

from __future__ import annotations

from textual.reactive import reactive

from dashboards.common.widgets.rows_table import RowsTable
from dashboards.inspector.panels import GATE_COLUMNS, LOT_COLUMNS, gate_rows, lot_rows
from kent_ops.core import wire

__all__ = ["GatesTable", "LotsTable"]


class GatesTable(RowsTable):
    """Each gate counter: in, out, net, persons a minute, last seen, online."""

    COLUMNS = GATE_COLUMNS

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""

    def watch_status(self, status: wire.Status | None) -> None:
        self.set_rows(gate_rows(status))


class LotsTable(RowsTable):
    """Each parking lot: capacity, cars, free spaces, share full."""

    COLUMNS = LOT_COLUMNS

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""

    def watch_status(self, status: wire.Status | None) -> None:
        self.set_rows(lot_rows(status))
