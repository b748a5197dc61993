"""The checklist list: paragraph headings, and under each the items with their state."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from dashboards.inspector.checklist_panels import ChecklistEntry, checklist_entries
from kent_ops.core import wire

__all__ = ["ChecklistList"]

WAITING = "-waiting-"
"""The key of the placeholder shown before the status says which items apply."""


class ChecklistList(OptionList):
    """One entry per applicable item, grouped by paragraph; headings cannot be chosen."""

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot (items that apply, their latest marks, the time zone)."""
    waiting: reactive[dict[str, str]] = reactive(dict, always_update=True, repaint=False)
    """Items this inspector marked that the status does not show yet, with the result."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: list[ChecklistEntry] = []

    @property
    def selected_item(self) -> str | None:
        """The highlighted item (``C(1)(h)``); None for a heading or nothing."""
        option = self.highlighted_option
        if option is None or option.id is None or option.id.startswith(("group:", WAITING)):
            return None
        return option.id

    def entry(self, item: str) -> ChecklistEntry | None:
        """The entry shown for ``item``, if it is shown (for tests and the screen)."""
        return next((e for e in self._shown if e.key == item), None)

    def watch_status(self) -> None:
        self._redraw()

    def watch_waiting(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        self.show_entries(checklist_entries(self.status, self.waiting))

    def show_entries(self, entries: Sequence[ChecklistEntry]) -> None:
        """Show ``entries``, keeping the highlight on the same item.

        A status arrives several times a second but the checklist changes only when
        someone marks an item, so an unchanged list is not rebuilt.
        """
        if not entries:
            placeholder = Text(
                "Waiting for the aggregator's status, which lists the items that apply…",
                style="dim italic",
            )
            self._set(
                [ChecklistEntry(WAITING, heading=placeholder)], [Option(placeholder, id=WAITING)]
            )
            return
        if [e.signature for e in entries] == [e.signature for e in self._shown]:
            return
        selected = self.selected_item
        scrolled = self.scroll_y
        same_keys = [e.key for e in entries] == [e.key for e in self._shown]
        options = [Option(e.renderable(), id=e.key, disabled=e.is_heading) for e in entries]
        self._set(list(entries), options)
        keys = [e.key for e in entries]
        if selected in keys:
            self.highlighted = keys.index(selected)
        else:
            self.highlighted = next(i for i, e in enumerate(entries) if not e.is_heading)
        if same_keys:  # one item redrawn: do not jump
            self.scroll_to(y=scrolled, animate=False, immediate=True)

    def _set(self, entries: list[ChecklistEntry], options: list[Option]) -> None:
        if [e.signature for e in entries] == [e.signature for e in self._shown]:
            return
        self.set_options(options)
        self._shown = entries
