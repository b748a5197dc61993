"""The bottom of the main screen and the alert's own screen: the alert list, one alert in full.

What each alert shows, and in which order, is the core's (:mod:`kent_ops.core.alert_view`,
which the inspector's page in a browser draws too); here it becomes Rich text, with the
flash of an unacknowledged breach, which only a terminal does.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import tzinfo

from rich.console import Group, OverflowMethod, RenderableType
from rich.table import Table
from rich.text import Text

from dashboards.common.format import event_zone, local_clock
from dashboards.common.rows import Item
from dashboards.common.tagged_text import TAG_STYLES, line_text, span_text
from kent_ops.core import wire
from kent_ops.core.alert_view import (
    SEVERITY_MARK,
    alert_body,
    alert_facts,
    alert_head,
    alert_history,
    alert_mark,
    alert_title,
    is_flashing,
    ordered_alerts,
    ordered_items,
    pending_head,
    pending_mark,
)
from kent_ops.core.tagged import plain

__all__ = [
    "SEVERITY_MARK",
    "alert_detail",
    "alert_history",
    "alert_item",
    "alert_items",
    "is_flashing",
    "ordered_alerts",
    "pending_item",
]


def alert_item(
    alert: wire.Alert, zone: tzinfo, *, flash_on: bool = False, key: str | None = None
) -> Item:
    """Severity in a column of its own; beside it id, rule, citation, since and
    acknowledgement, and under those the message (both wrap inside their column).

    ``key`` is the id in the alert's topic (what the app files it under, unique),
    which the payload's ``id`` should repeat but a bad publisher might not.
    """
    mark = span_text(alert_mark(alert))
    if is_flashing(alert):
        mark.style = "bold white on red" if flash_on else "bold red"
    head = line_text(alert_head(alert, zone))
    body = Text(alert_body(alert), style="dim" if alert.state == "cleared" else "")
    return Item(alert.id if key is None else key, mark, head, body)


def pending_item(key: str, pending: wire.PendingCondition, zone: tzinfo) -> Item:
    """A condition that holds but not yet for ``pending_s``: not an alert yet."""
    return Item(key, span_text(pending_mark()), line_text(pending_head(pending, zone)))


def alert_items(
    alerts: Mapping[str, wire.Alert], status: wire.Status | None, *, flash_on: bool = False
) -> list[Item]:
    """The alert list: active alerts, then pending conditions, then ended and cleared ones."""
    zone = event_zone(status)
    ordered = ordered_items(alerts)
    rows = [
        alert_item(a, zone, flash_on=flash_on, key=key) for key, a in ordered if a.state == "active"
    ]
    if status is not None:
        for index, p in enumerate(status.pending):
            rows.append(pending_item(f"pending:{index}:{p.rule}", p, zone))
    rows.extend(alert_item(a, zone, key=key) for key, a in ordered if a.state != "active")
    return rows


def _facts(alert: wire.Alert, zone: tzinfo) -> Table:
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="dim", no_wrap=True)
    facts.add_column()
    for fact in alert_facts(alert, zone):
        overflow: OverflowMethod | None = "fold" if fact.fold else None
        tags = {span.tag for line in fact.lines for span in line}
        if len(tags) == 1:  # one style: the Text's own, as a renderable has it
            words = "\n".join(plain(line) for line in fact.lines)
            text = Text(words, style=TAG_STYLES[tags.pop()], overflow=overflow)
        else:
            text = Text(overflow=overflow)
            for number, line in enumerate(fact.lines):
                if number:
                    text.append("\n")
                line_text(line, text)
        facts.add_row(fact.label, text)
    return facts


def alert_detail(alert: wire.Alert | None, status: wire.Status | None) -> RenderableType:
    """Everything about one alert: figures, evidence, acknowledgements and its history."""
    if alert is None:
        return Text("This alert is no longer published.", style="dim italic")
    zone = event_zone(status)
    history = Table.grid(padding=(0, 2))
    history.add_column(no_wrap=True, style="dim")
    history.add_column()
    for moment, what in alert_history(alert, status.notes if status is not None else ()):
        history.add_row(local_clock(moment, zone), Text(what))
    return Group(
        line_text(alert_title(alert)),
        Text(),
        _facts(alert, zone),
        Text(),
        Text("History", style="bold underline"),
        history,
    )
