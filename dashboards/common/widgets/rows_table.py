"""A DataTable that shows panel rows and touches only the cells that changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.widgets import DataTable

from dashboards.common.rows import Column, Row

__all__ = ["RowsTable"]


class RowsTable(DataTable[Text]):
    """Rows in, cells out: same keys in the same order update in place; else rebuild.

    Subclasses set ``COLUMNS``. The cursor stays on the same key across a rebuild, so
    a new alert arriving does not move the inspector's selection.
    """

    COLUMNS: ClassVar[Sequence[Column]] = ()

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(
            id=id, classes=classes, cursor_type="row", zebra_stripes=True, cell_padding=0
        )
        self.show_cursor = False
        self._keys: list[str] = []
        self._cells: dict[str, tuple[Text, ...]] = {}
        self._waiting: Sequence[Row] | None = None

    def on_mount(self) -> None:
        for column in self.COLUMNS:
            label = Text(f" {column.label}", justify="right" if column.numeric else "left")
            self.add_column(label, width=column.width, key=column.key)
        if self._waiting is not None:
            rows, self._waiting = self._waiting, None
            self.set_rows(rows)

    def on_focus(self) -> None:
        self.show_cursor = True

    def on_blur(self) -> None:
        # An unfocused table has no selection to show: a highlighted gate reads as an alarm.
        self.show_cursor = False

    @property
    def selected_key(self) -> str | None:
        """The key of the row under the cursor, if any."""
        if not self._keys or not 0 <= self.cursor_row < len(self._keys):
            return None
        return self._keys[self.cursor_row]

    def set_rows(self, rows: Sequence[Row]) -> None:
        """Show ``rows``: update changed cells in place, or rebuild when the keys differ."""
        if not self.columns:  # not mounted yet: show them once the columns exist
            self._waiting = rows
            return
        keys = [row.key for row in rows]
        if keys != self._keys:
            self._rebuild(rows, keys)
            return
        column_keys = [column.key for column in self.COLUMNS]
        for row in rows:
            old = self._cells[row.key]
            if old == row.cells:
                continue
            for column_key, before, after in zip(column_keys, old, row.cells, strict=True):
                if before != after:
                    self.update_cell(row.key, column_key, after, update_width=True)
            self._cells[row.key] = row.cells

    def _rebuild(self, rows: Sequence[Row], keys: list[str]) -> None:
        selected = self.selected_key
        self.clear()
        for row in rows:
            self.add_row(*row.cells, key=row.key)
        self._keys = keys
        self._cells = {row.key: row.cells for row in rows}
        if selected in self._cells:
            self.move_cursor(row=keys.index(selected), animate=False)
