"""The facilities checklist as the inspector sees it: pure functions of the status.

The dashboard has no permit, so which items apply comes from the aggregator's status
(``checklist_items``: item, paragraph, text, cite, in the ordinance's order) and each
item's latest marking from its ``checklist`` (result, by, at, note). Nothing here
decides anything: an item is deficient because the aggregator says so, and its
``facility-deficient`` alert is the one the aggregator published (permit:C, D and F;
docs/protocol.md, "inspection"). The groups, the words and how they read are the
core's (:mod:`kent_ops.core.checklist_view`, which the inspector's page draws too);
here they become Rich text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dashboards.common.format import clean, event_zone, local_clock
from dashboards.common.tagged_text import TAG_STYLES, line_text, span_text
from kent_ops.core import wire
from kent_ops.core.checklist_view import (
    RESULT_MARK,
    ChecklistRow,
    applicable_items,
    checklist_counts,
    checklist_groups,
    checklist_summary,
    deficiency_alert,
    deficiency_line,
    result_mark,
)

__all__ = [
    "RESULT_MARK",
    "ChecklistEntry",
    "applicable_items",
    "checklist_counts",
    "checklist_entries",
    "checklist_summary",
    "deficiency_alert",
    "item_detail",
]

STATE_WIDTH = 11
ITEM_WIDTH = 8


@dataclass(frozen=True, slots=True)
class ChecklistEntry:
    """One line of the checklist: a paragraph heading, or an item with its state.

    ``key`` is ``group:<paragraph>`` for a heading (which cannot be chosen) and the
    item (``C(1)(h)``) otherwise.
    """

    key: str
    heading: Text | None = None
    state: Text | None = None
    item: Text | None = None
    text: Text | None = None
    who: Text | None = None
    note: Text | None = None

    @property
    def is_heading(self) -> bool:
        return self.heading is not None

    @property
    def signature(self) -> tuple[object, ...]:
        """Equal for two entries that draw the same, styles included."""
        parts = (self.heading, self.state, self.item, self.text, self.who, self.note)
        return (self.key, *((p.plain, str(p.style), tuple(p.spans)) if p else () for p in parts))

    def renderable(self) -> RenderableType:
        """A heading as it is; an item as state, id, text and who-when, its note under."""
        if self.heading is not None:
            return self.heading
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(width=STATE_WIDTH, no_wrap=True)
        grid.add_column(width=ITEM_WIDTH, no_wrap=True)
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis", min_width=16)
        grid.add_column(no_wrap=True, justify="right")
        grid.add_row(self.state, self.item, self.text, self.who)
        if self.note is not None:
            grid.add_row("", "", self.note, "")
        return grid


def _item_entry(row: ChecklistRow, waiting: str | None) -> ChecklistEntry:
    who = Text(row.who, style="dim") if row.who else Text("")
    if waiting is not None:
        who = Text(f"… sent: {waiting}", style="dark_orange")
    return ChecklistEntry(
        row.item,
        state=span_text(row.mark),
        item=Text(row.item, style="bold"),
        text=Text(row.text),
        who=who,
        note=span_text(row.note) if row.note is not None else None,
    )


def checklist_entries(
    status: wire.Status | None, waiting: Mapping[str, str] | None = None
) -> list[ChecklistEntry]:
    """Headings and items, grouped by paragraph in the ordinance's order.

    Args:
        status: the aggregator's status (items that apply, latest marks, time zone).
        waiting: items this inspector marked whose marking the status does not show yet,
            with the result sent; they read "… sent" until it does.
    """
    waiting = waiting or {}
    out: list[ChecklistEntry] = []
    for group in checklist_groups(status):
        heading = Text(group.paragraph, style="bold")
        if group.deficient:
            heading.append(f"  {group.deficient} deficient", style="bold red")
        out.append(ChecklistEntry(f"group:{group.paragraph}", heading=heading))
        out.extend(_item_entry(row, waiting.get(row.item)) for row in group.items)
    return out


def item_detail(
    item: str | None, status: wire.Status | None, alerts: Mapping[str, wire.Alert]
) -> RenderableType:
    """The chosen item in full: its requirement, its latest marking, its alert if deficient."""
    items = {it.item: it for it in applicable_items(status)}
    if not items:
        return Text(
            "Waiting for the aggregator's status, which lists the items that apply…",
            style="dim italic",
        )
    it = items.get(item or "")
    if it is None:
        return Text("Choose an item with ↑ ↓.", style="dim italic")
    zone = event_zone(status)
    head = Text()
    head.append(clean(it.item), style="bold")
    head.append(f"  {clean(it.text)}")
    head.append(f"  {clean(it.cite)}", style="cyan")
    mark = status.checklist.get(it.item) if status is not None else None
    state = Text()
    if mark is None:
        state.append("Not marked yet.", style="dim")
    else:
        mark_span = result_mark(mark.result)
        state.append(mark_span.text, style=TAG_STYLES[mark_span.tag])
        state.append(f"  marked by {clean(mark.by)} at {local_clock(mark.at, zone)}")
        if mark.note:
            deficient = mark.result == "deficient"
            state.append(f": “{clean(mark.note)}”", style="red" if deficient else "")
    lines: list[RenderableType] = [head, state]
    alert = deficiency_alert(it.item, alerts)
    if alert is not None:
        lines.append(line_text(deficiency_line(alert, zone)))
    return Group(*lines)
