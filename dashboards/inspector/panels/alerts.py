"""The bottom of the main screen and the alert's own screen: the alert list, one alert in full."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dashboards.common.format import clean, event_zone, figure_phrase, local_clock
from dashboards.common.rows import Item
from kent_ops.core import wire
from kent_ops.core.checklist import BY_ITEM
from kent_ops.core.rules import RULES, shown_message

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

SEVERITY_RANK = {"breach": 0, "warning": 1, "data": 2}
SEVERITY_MARK = {
    "breach": ("● BREACH", "bold red"),
    "warning": ("▲ WARNING", "bold dark_orange"),
    "data": ("◆ DATA", "bold cyan"),
}


def is_flashing(alert: wire.Alert) -> bool:
    """A breach still active that nobody has acknowledged flashes (and rang the bell)."""
    return alert.severity == "breach" and alert.state == "active" and not alert.acknowledged


def _order(alert: wire.Alert) -> tuple[int, int, float]:
    """Active first, then ended (still active, no longer holding), then cleared."""
    if alert.state == "active" and alert.ended_at is None:
        group = 0
    elif alert.state == "active":
        group = 1
    else:
        group = 2
    moment = alert.since
    if group == 2:
        moment = alert.cleared_at or alert.since
    stamp = -moment.timestamp() if moment is not None else 0.0
    return (group, SEVERITY_RANK.get(alert.severity, 3), stamp)


def ordered_alerts(alerts: Mapping[str, wire.Alert]) -> list[wire.Alert]:
    """Active first, by severity, newest first within it; then ended; then cleared."""
    return sorted(alerts.values(), key=_order)


def _state_word(alert: wire.Alert) -> tuple[str, str]:
    if alert.state == "cleared":
        return "cleared", "dim"
    if alert.ended_at is not None:
        return "ended", "dark_orange"
    return "active", "bold"


def _subject(alert: wire.Alert | wire.PendingCondition) -> str:
    return f" [{clean(alert.subject)}]" if alert.subject else ""


def alert_item(
    alert: wire.Alert, zone: tzinfo, *, flash_on: bool = False, key: str | None = None
) -> Item:
    """Severity in a column of its own; beside it id, rule, citation, since and
    acknowledgement, and under those the message (both wrap inside their column).

    ``key`` is the id in the alert's topic (what the app files it under, unique),
    which the payload's ``id`` should repeat but a bad publisher might not.
    """
    severity = alert.severity or "data"
    word, mark_style = SEVERITY_MARK.get(severity, (severity.upper(), "bold"))
    state, state_style = _state_word(alert)
    cleared = state == "cleared"
    if is_flashing(alert):
        mark_style = "bold white on red" if flash_on else "bold red"
    mark = Text(word, style="dim" if cleared else mark_style)
    head = Text()
    head.append(f"{clean(alert.id) or '?'}  ", style="bold")
    head.append(clean(alert.rule or "?") + _subject(alert), style="dim" if cleared else "bold")
    head.append(f"  {clean(alert.cite)}", style="cyan")
    head.append(f"  since {local_clock(alert.since, zone)}")
    if state != "active":
        head.append(f"  {state}", style=state_style)
    acks = alert.acknowledged
    if acks:
        head.append(f"  ✓ {clean(acks[-1].by)}", style="green")
        if len(acks) > 1:
            head.append(f" +{len(acks) - 1}", style="green")
    elif not cleared:
        head.append("  ✗ not acked", style="bold red" if severity == "breach" else "dim")
    if alert.uncertain:
        head.append("  uncertain", style="dark_orange")
    body = Text(clean(_alert_body(alert)), style="dim" if cleared else "")
    return Item(alert.id if key is None else key, mark, head, body)


def _alert_body(alert: wire.Alert) -> str:
    """The message; for a deficient facility, the requirement and what was found.

    The id and citation are on the heading already; what the inspector needs under
    them is which requirement failed, in words, and the note that is the evidence.
    """
    if alert.rule == "facility-deficient" and alert.subject is not None:
        requirement = BY_ITEM.get(alert.subject)
        note = alert.observed.get("note")
        if requirement is not None:
            return requirement.text + (f" — found: “{note}”" if note else "")
    return shown_message(alert)


def pending_item(key: str, pending: wire.PendingCondition, zone: tzinfo) -> Item:
    """A condition that holds but not yet for ``pending_s``: not an alert yet."""
    mark = Text("… PENDING", style="italic dark_orange")
    head = Text()
    head.append(clean(pending.rule or "?") + _subject(pending), style="italic")
    rule = RULES.get(pending.rule)
    head.append(f"  {rule.cite_for(pending.subject) if rule else ''}", style="cyan")
    head.append(f"  since {local_clock(pending.since, zone)}  not yet raised", style="dim")
    return Item(key, mark, head)


def alert_items(
    alerts: Mapping[str, wire.Alert], status: wire.Status | None, *, flash_on: bool = False
) -> list[Item]:
    """The alert list: active alerts, then pending conditions, then ended and cleared ones."""
    zone = event_zone(status)
    ordered = sorted(alerts.items(), key=lambda item: _order(item[1]))
    rows = [
        alert_item(a, zone, flash_on=flash_on, key=key) for key, a in ordered if a.state == "active"
    ]
    if status is not None:
        for index, p in enumerate(status.pending):
            rows.append(pending_item(f"pending:{index}:{p.rule}", p, zone))
    rows.extend(alert_item(a, zone, key=key) for key, a in ordered if a.state != "active")
    return rows


def alert_history(
    alert: wire.Alert, notes: Sequence[wire.NoteEntry] = ()
) -> list[tuple[datetime, str]]:
    """What happened to an alert, in order: began, raised, acknowledged, noted, ended, cleared."""
    events: list[tuple[datetime, str]] = []

    def add(moment: datetime | None, what: str) -> None:
        if moment is not None:
            events.append((moment, what))

    add(alert.since, "condition began to hold")
    add(alert.raised_at, "alert raised")
    for ack in alert.acknowledged:
        comment = f": {clean(ack.comment)}" if ack.comment else ""
        add(ack.at, f"acknowledged by {clean(ack.by)}{comment}")
    for note in notes:
        if note.alert == alert.id:
            add(note.at, f"note by {clean(note.by)}: {clean(note.text)}")
    add(alert.ended_at, "condition ended")
    add(alert.cleared_at, "alert cleared")
    events.sort(key=lambda e: e[0])
    return events


def _figures(values: Mapping[str, Any]) -> str:
    """``occupied 590 · capacity 600 · share 98%``: counts grouped, shares as percentages,
    yes-or-no figures in words (``a gate sensor · silent past its heartbeat``)."""
    if not values:
        return "—"
    return " · ".join(figure_phrase(key, value) for key, value in values.items())


def _title(alert: wire.Alert) -> Text:
    severity = alert.severity
    mark, mark_style = SEVERITY_MARK.get(severity, (severity.upper(), "bold"))
    title = Text()
    title.append(f"{mark} ", style=mark_style)
    title.append(f"{clean(alert.id)}  {clean(alert.rule or '?')}{_subject(alert)}", style="bold")
    title.append(f"  {clean(alert.cite)}", style="cyan")
    return title


def _acknowledged(alert: wire.Alert, zone: tzinfo) -> Text:
    if not alert.acknowledged:
        return Text("no", style="bold red")
    lines = (
        f"{clean(a.by)} at {local_clock(a.at, zone)}: {clean(a.comment)}"
        for a in alert.acknowledged
    )
    return Text("\n".join(lines), style="green")


def _facts(alert: wire.Alert, zone: tzinfo) -> Table:
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="dim", no_wrap=True)
    facts.add_column()
    facts.add_row("Message", Text(clean(shown_message(alert))))
    rule = RULES.get(alert.rule)
    if rule is not None:
        facts.add_row("Rule", Text(rule.summary))
    requirement = BY_ITEM.get(alert.subject or "")
    if alert.rule == "facility-deficient" and requirement is not None:
        facts.add_row("Requirement", Text(f"{requirement.item}: {requirement.text}"))
    state, state_style = _state_word(alert)
    facts.add_row("State", Text(state, style=state_style))
    facts.add_row("Observed", Text(_figures(alert.observed)))
    facts.add_row("Required", Text(_figures(alert.required)))
    if alert.worst.observed:
        facts.add_row("Worst", Text(_figures(alert.worst.observed)))
    facts.add_row(
        "Times",
        Text(
            f"since {local_clock(alert.since, zone)} · raised "
            f"{local_clock(alert.raised_at, zone)} · ended "
            f"{local_clock(alert.ended_at, zone)} · cleared "
            f"{local_clock(alert.cleared_at, zone)}"
        ),
    )
    evidence = alert.evidence
    if evidence.record is not None or evidence.hash is not None:
        facts.add_row("Evidence", Text(f"record {evidence.record}"))
        facts.add_row("Hash", Text(clean(evidence.hash), overflow="fold"))
    if alert.uncertain:
        why = "; ".join(clean(r) for r in alert.stretches[-1].rests_on) or "a sensor in doubt"
        facts.add_row("Uncertain", Text(f"indeterminate now: {why}", style="dark_orange"))
    if any(x.basis != "measured" for x in alert.stretches):
        facts.add_row("Stretches", _stretches(alert, zone))
    facts.add_row("Acknowledged", _acknowledged(alert, zone))
    return facts


def _stretches(alert: wire.Alert, zone: tzinfo) -> Text:
    """Each part of the alert's time with what it rests on: only measured time is proven."""
    lines = []
    for x in alert.stretches:
        until = local_clock(x.end, zone) if x.end is not None else "now"
        rests = f": {'; '.join(clean(r) for r in x.rests_on)}" if x.rests_on else ""
        lines.append(f"{local_clock(x.start, zone)}–{until} {x.basis}{rests}")
    return Text("\n".join(lines))


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
        _title(alert),
        Text(),
        _facts(alert, zone),
        Text(),
        Text("History", style="bold underline"),
        history,
    )
