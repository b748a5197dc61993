"""The alert list: active first, by severity; new breaches flash until acknowledged."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import RenderableType
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from dashboards.common.rows import Item
from dashboards.inspector.panels import alert_items
from kent_ops.core import wire

__all__ = ["AlertList"]


def _unique(rows: Sequence[Item]) -> list[Item]:
    """Each key once: an option id must be unique, and keys come from topics on the wire."""
    seen: set[str] = set()
    out = []
    for row in rows:
        if row.key not in seen:
            seen.add(row.key)
            out.append(row)
    return out


NOTHING = "-none-"
"""The key of the placeholder shown when there is no alert, so the box is never blank."""


class AlertList(OptionList):
    """One two-line entry per alert (and pending condition); Enter opens the detail."""

    alerts: reactive[dict[str, wire.Alert]] = reactive(dict, always_update=True, repaint=False)
    """Every alert seen, by id, in its latest form."""
    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
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

    def item(self, key: str) -> Item | None:
        """The entry shown for ``key`` (an alert id), if it is shown."""
        return next((item for item in self._shown if item.key == key), None)

    def _redraw(self) -> None:
        self.show_rows(alert_items(self.alerts, self.status, flash_on=self.flash_on))

    def watch_alerts(self) -> None:
        self._redraw()

    def watch_status(self) -> None:
        self._redraw()

    def watch_flash_on(self) -> None:
        self._redraw()

    def _prompt(self, row: Item) -> RenderableType:
        """The entry's lines at the list's width (a grid until the list has one)."""
        width = self.scrollable_content_region.width
        return row.lines(width) if width > 0 else row.renderable()

    def on_resize(self) -> None:
        for index, row in enumerate(self._shown):
            self.replace_option_prompt_at_index(index, self._prompt(row))

    def show_rows(self, rows: Sequence[Item]) -> None:
        """Show ``rows``, keeping the highlight on the same alert.

        Every change rebuilds the options: in Textual 8.2 ``replace_option_prompt``
        keeps drawing the old prompt (the option caches its visual), so a flash or an
        acknowledgement would never reach the screen.
        """
        if not rows:
            rows = [Item(NOTHING, Text(""), Text("No alerts and nothing pending.", style="dim"))]
        rows = _unique(rows)
        signatures = [row.signature for row in rows]
        shown = [row.signature for row in self._shown]
        if signatures == shown:
            return
        keys = [row.key for row in rows]
        same_entries = keys == [row.key for row in self._shown]
        if same_entries:
            # The same alerts, some drawn anew (a flash, an acknowledgement): replace
            # those prompts alone; the list keeps its options, highlight and scroll.
            for index, (new, old) in enumerate(zip(signatures, shown, strict=True)):
                if new != old:
                    self.replace_option_prompt_at_index(index, self._prompt(rows[index]))
            self._shown = list(rows)
            return
        highlighted, scrolled = self.highlighted, self.scroll_y
        # Keep the inspector's choice; one who has not moved off the top stays on the
        # top entry, which is the most urgent one.
        selected = self.selected_alert if highlighted else None
        self.set_options(Option(self._prompt(row), id=row.key) for row in rows)
        self._shown = list(rows)
        if same_entries:  # the same alerts, one redrawn (a flash, an ack): stay put
            self.highlighted = highlighted
            self.scroll_to(y=scrolled, animate=False, immediate=True)
            return
        # From the top, then as far down as the kept selection needs: a new alert
        # above the selection must not leave the list scrolled half-way into an entry.
        self.scroll_to(y=0, animate=False, immediate=True)
        self.highlighted = keys.index(selected) if selected in keys else 0
