"""The gate and lot tables: rows from the panel functions, diffed into a DataTable."""

from __future__ import annotations

from typing import Any

from textual.reactive import reactive

from dashboards.common.widgets.rows_table import RowsTable
from dashboards.inspector.panels import GATE_COLUMNS, LOT_COLUMNS, gate_rows, lot_rows

__all__ = ["GatesTable", "LotsTable"]


class GatesTable(RowsTable):
    """Each gate counter: in, out, net, persons a minute, last seen, online."""

    COLUMNS = GATE_COLUMNS

    status: reactive[dict[str, Any] | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""

    def watch_status(self, status: dict[str, Any] | None) -> None:
        self.set_rows(gate_rows(status))


class LotsTable(RowsTable):
    """Each parking lot: capacity, cars, free spaces, share full."""

    COLUMNS = LOT_COLUMNS

    status: reactive[dict[str, Any] | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""

    def watch_status(self, status: dict[str, Any] | None) -> None:
        self.set_rows(lot_rows(status))
