"""The alert list: active first, by severity; new breaches flash until acknowledged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from dashboards.common.rows import Item
from dashboards.inspector.panels import alert_items

__all__ = ["AlertList"]

NOTHING = "-none-"
"""The key of the placeholder shown when there is no alert, so the box is never blank."""


class AlertList(OptionList):
    """One two-line entry per alert (and pending condition); Enter opens the detail."""

    alerts: reactive[dict[str, dict[str, Any]]] = reactive(dict, always_update=True, repaint=False)
    """Every alert seen, by id, in its latest form."""
    status: reactive[dict[str, Any] | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot (pending conditions, the event's time zone)."""
    flash_on: reactive[bool] = reactive(False, repaint=False)
    """Which half of the flash unacknowledged breaches are in."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: list[Item] = []

    @property
    def selected_alert(self) -> str | None:
        """The id of the highlighted alert; None for nothing or a pending condition."""
        option = self.highlighted_option
        if option is None or option.id is None or option.id.startswith(("pending:", NOTHING)):
            return None
        return option.id

    def _redraw(self) -> None:
        self.show_rows(alert_items(self.alerts, self.status, flash_on=self.flash_on))

    def watch_alerts(self) -> None:
        self._redraw()

    def watch_status(self) -> None:
        self._redraw()

    def watch_flash_on(self) -> None:
        self._redraw()

    def show_rows(self, rows: Sequence[Item]) -> None:
        """Replace changed entries in place; rebuild (keeping the highlight) when ids change."""
        if not rows:
            rows = [Item(NOTHING, Text("No alerts and nothing pending.", style="dim italic"))]
        if [r.key for r in rows] == [r.key for r in self._shown]:
            for index, (old, new) in enumerate(zip(self._shown, rows, strict=True)):
                if old.text != new.text:
                    self.replace_option_prompt_at_index(index, new.text)
            self._shown = list(rows)
            return
        selected = self.selected_alert
        self.set_options(Option(row.text, id=row.key) for row in rows)
        self._shown = list(rows)
        keys = [row.key for row in rows]
        if selected in keys:
            self.highlighted = keys.index(selected)
        elif rows:
            self.highlighted = 0
