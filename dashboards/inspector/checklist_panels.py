"""The facilities checklist as the inspector sees it: pure functions of the status.

The dashboard has no permit, so which items apply comes from the aggregator's status
(``checklist_items``: item, paragraph, text, cite, in the ordinance's order) and each
item's latest marking from its ``checklist`` (result, by, at, note). Nothing here
decides anything: an item is deficient because the aggregator says so, and its
``facility-deficient`` alert is the one the aggregator published (SPEC 4a).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dashboards.common.format import event_zone, local_time, parse_ts

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

Status = Mapping[str, Any]
Alerts = Mapping[str, Mapping[str, Any]]

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


def applicable_items(status: Status | None) -> list[Mapping[str, Any]]:
    """The items that apply to this permit, as the aggregator lists them; [] until known."""
    items = status.get("checklist_items") if status else None
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, Mapping) and isinstance(i.get("item"), str)]


def _marks(status: Status | None) -> Mapping[str, Mapping[str, Any]]:
    marks = status.get("checklist") if status else None
    if not isinstance(marks, Mapping):
        return {}
    return {k: v for k, v in marks.items() if isinstance(v, Mapping)}


def checklist_counts(status: Status | None) -> dict[str | None, int]:
    """How many applicable items stand at each result (None: not marked yet)."""
    marks = _marks(status)
    counts: dict[str | None, int] = {None: 0, "ok": 0, "deficient": 0, "n/a": 0}
    for it in applicable_items(status):
        result = marks.get(it["item"], {}).get("result")
        key = result if result in counts else None
        counts[key] += 1
    return counts


def checklist_summary(status: Status | None) -> str:
    """``Checklist: 20 items · 3 ok · 1 deficient · 0 n/a · 16 unmarked``."""
    items = applicable_items(status)
    if not items:
        return "Checklist"
    c = checklist_counts(status)
    return (
        f"Checklist: {len(items)} items · {c['ok']} ok · {c['deficient']} deficient · "
        f"{c['n/a']} n/a · {c[None]} unmarked"
    )


def deficiency_alert(item: str, alerts: Alerts) -> Mapping[str, Any] | None:
    """The newest ``facility-deficient`` alert about ``item`` that is not cleared yet."""
    found = [
        a
        for a in alerts.values()
        if isinstance(a, Mapping)
        and a.get("rule") == "facility-deficient"
        and a.get("subject") == item
        and a.get("state") == "active"
    ]
    if not found:
        return None
    return max(found, key=lambda a: parse_ts(a.get("since")) or _EPOCH)


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


def _who(mark: Mapping[str, Any], zone: tzinfo) -> Text:
    return Text(f"{mark.get('by') or '?'} {local_time(mark.get('at'), zone)}", style="dim")


def checklist_entries(
    status: Status | None, waiting: Mapping[str, str] | None = None
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
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for it in applicable_items(status):
        groups.setdefault(str(it.get("paragraph") or it["item"]), []).append(it)
    out: list[ChecklistEntry] = []
    for paragraph, items in groups.items():
        heading = Text(paragraph, style="bold")
        deficient = sum(1 for it in items if marks.get(it["item"], {}).get("result") == "deficient")
        if deficient:
            heading.append(f"  {deficient} deficient", style="bold red")
        out.append(ChecklistEntry(f"group:{paragraph}", heading=heading))
        for it in items:
            item = it["item"]
            mark = marks.get(item, {})
            result = mark.get("result")
            words, style = RESULT_MARK.get(result, (str(result), "bold"))
            who = _who(mark, zone) if mark else Text("")
            if item in waiting:
                who = Text(f"… sent: {waiting[item]}", style="dark_orange")
            note_text = str(mark.get("note") or "")
            note = None
            if note_text:
                note = Text(f"“{note_text}”", style="red" if result == "deficient" else "italic")
            out.append(
                ChecklistEntry(
                    item,
                    state=Text(words, style=style),
                    item=Text(item, style="bold"),
                    text=Text(str(it.get("text") or "")),
                    who=who,
                    note=note,
                )
            )
    return out


def item_detail(item: str | None, status: Status | None, alerts: Alerts) -> RenderableType:
    """The chosen item in full: its requirement, its latest marking, its alert if deficient."""
    items = {it["item"]: it for it in applicable_items(status)}
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
    head.append(it["item"], style="bold")
    head.append(f"  {it.get('text') or ''}")
    head.append(f"  {it.get('cite') or ''}", style="cyan")
    mark = _marks(status).get(it["item"])
    state = Text()
    if mark is None:
        state.append("Not marked yet.", style="dim")
    else:
        result = mark.get("result")
        words, style = RESULT_MARK.get(result, (str(result), "bold"))
        state.append(words, style=style)
        state.append(f"  marked by {mark.get('by')} at {local_time(mark.get('at'), zone)}")
        if mark.get("note"):
            state.append(f": “{mark.get('note')}”", style="red" if result == "deficient" else "")
    lines: list[RenderableType] = [head, state]
    alert = deficiency_alert(it["item"], alerts)
    if alert is not None:
        line = Text()
        line.append(f"{alert.get('id')} facility-deficient", style="bold red")
        line.append(f"  {alert.get('cite') or ''}", style="cyan")
        line.append(f"  since {local_time(alert.get('since'), zone)}")
        if alert.get("ended_at"):
            line.append(f"  ended {local_time(alert.get('ended_at'), zone)}", style="dark_orange")
        else:
            line.append("  breach held until it is marked ok or n/a", style="dim")
        lines.append(line)
    return Group(*lines)
