"""The facilities checklist as the inspector sees it: pure functions of the status.

The dashboard has no permit, so which items apply comes from the aggregator's status
(``checklist_items``: item, paragraph, text, cite, in the ordinance's order) and each
item's latest marking from its ``checklist`` (result, by, at, note). Nothing here
decides anything: an item is deficient because the aggregator says so, and its
``facility-deficient`` alert is the one the aggregator published (permit:C, D and F;
docs/protocol.md, "inspection").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dashboards.common.format import clean, event_zone, local_clock
from kent_ops.core import wire

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

RESULT_MARK: dict[str | None, tuple[str, str]] = {
    None: ("· unmarked", "dim"),
    "ok": ("✓ ok", "bold green"),
    "deficient": ("✗ DEFICIENT", "bold red"),
    "n/a": ("– n/a", "cyan"),
}
"""How each state reads in the list: the verdict first, so a narrow screen keeps it."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

STATE_WIDTH = 11
ITEM_WIDTH = 8


def applicable_items(status: wire.Status | None) -> list[wire.ChecklistItemInfo]:
    """The items that apply to this permit, as the aggregator lists them; [] until known."""
    return list(status.checklist_items) if status is not None else []


def _marks(status: wire.Status | None) -> Mapping[str, wire.ChecklistMark]:
    return status.checklist if status is not None else {}


def checklist_counts(status: wire.Status | None) -> dict[str | None, int]:
    """How many applicable items stand at each result (None: not marked yet)."""
    marks = _marks(status)
    counts: dict[str | None, int] = {None: 0, "ok": 0, "deficient": 0, "n/a": 0}
    for it in applicable_items(status):
        mark = marks.get(it.item)
        result = mark.result if mark is not None else None
        counts[result if result in counts else None] += 1
    return counts


def checklist_summary(status: wire.Status | None) -> str:
    """``Checklist: 20 items · 3 ok · 1 deficient · 0 n/a · 16 unmarked``."""
    items = applicable_items(status)
    if not items:
        return "Checklist"
    c = checklist_counts(status)
    return (
        f"Checklist: {len(items)} items · {c['ok']} ok · {c['deficient']} deficient · "
        f"{c['n/a']} n/a · {c[None]} unmarked"
    )


def deficiency_alert(item: str, alerts: Mapping[str, wire.Alert]) -> wire.Alert | None:
    """The newest ``facility-deficient`` alert about ``item`` that is not cleared yet."""
    found = [
        a
        for a in alerts.values()
        if a.rule == "facility-deficient" and a.subject == item and a.state == "active"
    ]
    if not found:
        return None
    return max(found, key=lambda a: a.since or _EPOCH)


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


def _who(mark: wire.ChecklistMark, zone: tzinfo) -> Text:
    return Text(f"{clean(mark.by) or '?'} {local_clock(mark.at, zone)}", style="dim")


def _item_entry(
    it: wire.ChecklistItemInfo, mark: wire.ChecklistMark | None, waiting: str | None, zone: tzinfo
) -> ChecklistEntry:
    result = mark.result if mark is not None else None
    words, style = RESULT_MARK.get(result, (clean(result), "bold"))
    who = _who(mark, zone) if mark is not None else Text("")
    if waiting is not None:
        who = Text(f"… sent: {waiting}", style="dark_orange")
    note = None
    if mark is not None and mark.note:
        note = Text(f"“{clean(mark.note)}”", style="red" if result == "deficient" else "italic")
    return ChecklistEntry(
        it.item,
        state=Text(words, style=style),
        item=Text(clean(it.item), style="bold"),
        text=Text(clean(it.text)),
        who=who,
        note=note,
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
    zone = event_zone(status)
    marks = _marks(status)
    waiting = waiting or {}
    groups: dict[str, list[wire.ChecklistItemInfo]] = {}
    seen: set[str] = set()
    for it in applicable_items(status):
        if it.item in seen or it.item.startswith("group:"):
            continue  # each item once, and never mistaken for a heading
        seen.add(it.item)
        groups.setdefault(it.paragraph or it.item, []).append(it)
    out: list[ChecklistEntry] = []
    for paragraph, items in groups.items():
        heading = Text(clean(paragraph), style="bold")
        deficient = sum(1 for it in items if _result(marks, it.item) == "deficient")
        if deficient:
            heading.append(f"  {deficient} deficient", style="bold red")
        out.append(ChecklistEntry(f"group:{paragraph}", heading=heading))
        out.extend(_item_entry(it, marks.get(it.item), waiting.get(it.item), zone) for it in items)
    return out


def _result(marks: Mapping[str, wire.ChecklistMark], item: str) -> str | None:
    mark = marks.get(item)
    return mark.result if mark is not None else None


def _alert_line(alert: wire.Alert, zone: tzinfo) -> Text:
    line = Text()
    line.append(f"{clean(alert.id)} facility-deficient", style="bold red")
    line.append(f"  {clean(alert.cite)}", style="cyan")
    line.append(f"  since {local_clock(alert.since, zone)}")
    if alert.ended_at is not None:
        line.append(f"  ended {local_clock(alert.ended_at, zone)}", style="dark_orange")
    else:
        line.append("  breach held until it is marked ok or n/a", style="dim")
    return line


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
    mark = _marks(status).get(it.item)
    state = Text()
    if mark is None:
        state.append("Not marked yet.", style="dim")
    else:
        words, style = RESULT_MARK.get(mark.result, (clean(mark.result), "bold"))
        state.append(words, style=style)
        state.append(f"  marked by {clean(mark.by)} at {local_clock(mark.at, zone)}")
        if mark.note:
            deficient = mark.result == "deficient"
            state.append(f": “{clean(mark.note)}”", style="red" if deficient else "")
    lines: list[RenderableType] = [head, state]
    alert = deficiency_alert(it.item, alerts)
    if alert is not None:
        lines.append(_alert_line(alert, zone))
    return Group(*lines)
