"""The inspector's panels, each a pure function of the status snapshot (and the alerts).

Status dict in, Rich renderable or table rows out: Dolphie's ``create_panel`` habit.
Nothing here counts or judges: every figure and every limit comes from the
aggregator's status (SPEC 3). The only judgement made here is the colour: a figure
past its limit is red, within 10% of it amber.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dashboards.common.bigtext import big_number
from dashboards.common.format import (
    LEVEL_STYLE,
    event_zone,
    fmt_age,
    fmt_int,
    fmt_share,
    level,
    local_clock,
    local_time,
    parse_ts,
)
from dashboards.common.renderables import LimitBar, TrendLine
from dashboards.common.rows import Cell, Column, Item, Row
from kent_ops.core.checklist import BY_ITEM
from kent_ops.core.ordinance import RULES

__all__ = [
    "GATE_COLUMNS",
    "LOT_COLUMNS",
    "LOT_FULL_SHARE",
    "alert_detail",
    "alert_history",
    "alert_items",
    "attendance_panel",
    "compliance_panel",
    "gate_rows",
    "header_text",
    "is_flashing",
    "lot_rows",
    "ordered_alerts",
    "rules_table",
]

Status = Mapping[str, Any]
Alert = Mapping[str, Any]

LOT_FULL_SHARE = 0.95
"""The share at which the ``lot-full`` rule holds (SPEC 4); used here only for colour."""

SEVERITY_RANK = {"breach": 0, "warning": 1, "data": 2}
SEVERITY_MARK = {
    "breach": ("● BREACH", "bold red"),
    "warning": ("▲ WARNING", "bold dark_orange"),
    "data": ("◆ DATA", "bold cyan"),
}


def _section(status: Status | None, name: str) -> Mapping[str, Any]:
    value = status.get(name) if status else None
    return value if isinstance(value, Mapping) else {}


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


# -- header ------------------------------------------------------------------------------


def header_text(status: Status | None, event_id: str, inspector: str, now: datetime | None) -> Text:
    """The event's local time, the event, its permit and its status, who is signed in."""
    zone = event_zone(status)
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(local_clock(now, zone, with_zone=True), style="bold")
    text.append(f"  {inspector}", style="dim")
    name = status.get("event_name") if status else None
    text.append(f"  {name or event_id}", style="bold")
    permit = _section(status, "permit")
    if permit:
        number = permit.get("number") or "no permit number"
        state = str(permit.get("status") or "unknown")
        text.append(f"  {number} ")
        text.append(state, style="bold green" if state == "issued" else "bold red")
    window = _section(status, "window")
    if window and window.get("inside") is False:
        text.append("  outside permitted hours", style="bold dark_orange")
    return text


# -- attendance --------------------------------------------------------------------------


def attendance_panel(
    status: Status | None,
    trend: Sequence[tuple[float, int]] = (),
    *,
    window_s: float = 3600.0,
) -> RenderableType:
    """Attendance large, against the permitted maximum and the 500 threshold; bar; trend."""
    att = _section(status, "attendance")
    if not att:
        return Text("Waiting for the aggregator's first status…", style="dim italic")
    current = _int(att.get("current")) or 0
    maximum = _int(att.get("max_at_one_time")) or 0
    threshold = _int(att.get("threshold"))
    style = LEVEL_STYLE[level(current, maximum)] or "bold"
    figure = Text("\n".join(big_number(fmt_int(current))), style=style)

    details = Text(no_wrap=True, overflow="ellipsis")
    admit = status.get("admit") if status else None
    if admit is True:
        details.append(" ADMIT ", style="bold black on green")
    elif admit is False:
        details.append(" HOLD ", style="bold white on red")
    details.append(f" max {fmt_int(maximum)}\n")
    details.append("┃", style="bold bright_white")
    details.append(f" threshold {fmt_int(threshold)}\n")
    details.append(f"peak {fmt_int(att.get('peak'))}")

    top = Table.grid(padding=(0, 2))
    top.add_column(no_wrap=True)
    top.add_column(ratio=1)
    top.add_row(figure, details)

    parts: list[RenderableType] = [top, LimitBar(current, maximum, mark=threshold)]
    ts = parse_ts(status.get("ts")) if status else None
    if ts is not None:
        # The line ends at the newest point, not the status time, so it moves once a
        # second (when a point is added) rather than at every status.
        end = trend[-1][0] if trend else ts.timestamp()
        line = Table.grid(padding=(0, 1))
        line.add_column(no_wrap=True)
        line.add_column(ratio=1)
        peak = max(maximum, current, max((v for _, v in trend), default=0))
        line.add_row(
            Text("last hour", style="dim"),
            TrendLine(trend, end, window_s=window_s, top=peak),
        )
        parts.append(line)
    parts.append(_attendance_flags(status, att))
    return Group(*parts)


def _attendance_flags(status: Status | None, att: Mapping[str, Any]) -> Text:
    flags = Text(no_wrap=True, overflow="ellipsis")
    if att.get("uncertain"):
        down = [
            gate
            for gate, g in sorted(_section(status, "gates").items())
            if isinstance(g, Mapping) and g.get("online") is False
        ]
        which = f": {', '.join(down)} down" if down else ": a counter is down or stale"
        flags.append(f"UNCERTAIN{which}", style="bold dark_orange")
    adjustments = status.get("adjustments") if status else None
    if isinstance(adjustments, list) and adjustments:
        last = adjustments[-1]
        if isinstance(last, Mapping):
            zone = event_zone(status)
            if flags:
                flags.append(" · ")
            offset = _int(last.get("offset"))
            shift = f" (offset {offset:+,})" if offset is not None else ""
            flags.append(
                f"adjusted to {fmt_int(last.get('attendance'))}{shift} by {last.get('by')} "
                f"at {local_time(last.get('at'), zone)}",
                style="italic",
            )
    if not flags:
        flags.append("all gate counters reporting", style="dim")
    return flags


# -- staffing and parking ----------------------------------------------------------------


def compliance_panel(status: Status | None) -> RenderableType:
    """Medical, security and parking figures against what the permit requires."""
    if not status:
        return Text("—", style="dim")
    medical = _section(status, "medical")
    security = _section(status, "security")
    parking = _section(status, "parking")
    att = _section(status, "attendance")
    rows: list[tuple[str, object, object, str, str]] = [
        # label, have, need, "of … <need_word>", level computed from need vs have
        (
            "Doctors",
            medical.get("doctors_on_duty"),
            medical.get("doctors_required"),
            "required",
            "min",
        ),
        (
            "Nurses",
            medical.get("nurses_on_duty"),
            medical.get("nurses_required"),
            "required",
            "min",
        ),
        ("Security", security.get("on_duty"), security.get("declared"), "declared", "min"),
        (
            "Car spaces",
            parking.get("spaces_provided"),
            parking.get("spaces_required"),
            "required",
            "min",
        ),
        (
            "Cars",
            parking.get("occupied"),
            parking.get("vehicles_at_one_time"),
            "allowed",
            "max",
        ),
    ]
    if att.get("max_collective") is not None:
        rows.append(("Entries", att.get("entries"), att.get("max_collective"), "allowed", "max"))
    elif att:
        rows.append(("Entries", att.get("entries"), att.get("exits"), "", "exits"))
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(justify="right", no_wrap=True)
    table.add_column(no_wrap=True)
    for label, have, need, word, kind in rows:
        if kind == "exits":
            table.add_row(
                Text(label),
                Text(fmt_int(have), style="bold"),
                Text(f"exits {fmt_int(need)}", style="dim"),
            )
            continue
        lvl = level(need, have) if kind == "min" else level(have, need)
        style = LEVEL_STYLE[lvl]
        table.add_row(
            Text(label, style=style or ""),
            Text(fmt_int(have), style=style or "bold"),
            Text(f"of {fmt_int(need)} {word}", style=style or "dim"),
        )
    return table


# -- gates and lots ----------------------------------------------------------------------

GATE_COLUMNS: tuple[Column, ...] = (
    Column("state", ""),
    Column("gate", "Gate"),
    Column("in", "In", numeric=True),
    Column("out", "Out", numeric=True),
    Column("net", "Net", numeric=True),
    Column("rate", "/min", numeric=True),
    Column("seen", "Seen", numeric=True),
)

_ONLINE = Cell("●", "green")
_OFFLINE = Cell("✗", "bold red")


def _rate(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "—"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def gate_rows(status: Status | None) -> list[Row]:
    """A row per gate counter: online (● or ✗), in, out, net, persons a minute, last seen.

    A manual tally (a deputy's ``+``/``-``) is in italics; an offline counter is red.
    """
    gates = _section(status, "gates")
    now = parse_ts(status.get("ts")) if status else None
    rows = []
    for gate_id in sorted(gates):
        g = gates[gate_id]
        if not isinstance(g, Mapping):
            continue
        online = g.get("online") is not False
        seen_at = parse_ts(g.get("last_seen"))
        seen = "never" if seen_at is None else "—"
        if seen_at is not None and now is not None:
            seen = fmt_age((now - seen_at).total_seconds())
        if online:
            name = Cell(gate_id, "italic" if g.get("manual") else "")
        else:
            name = Cell(gate_id, "bold red italic" if g.get("manual") else "bold red")
        rows.append(
            Row(
                gate_id,
                (
                    _ONLINE if online else _OFFLINE,
                    name,
                    Cell(fmt_int(g.get("in"))),
                    Cell(fmt_int(g.get("out"))),
                    Cell(fmt_int(g.get("net")), "bold"),
                    Cell(_rate(g.get("per_minute"))),
                    Cell(seen) if online else Cell(f"OFF {seen}", "bold red"),
                ),
            )
        )
    return rows


LOT_COLUMNS: tuple[Column, ...] = (
    Column("lot", "Lot"),
    Column("capacity", "Cap", numeric=True),
    Column("occupied", "Cars", numeric=True),
    Column("free", "Free", numeric=True),
    Column("share", "Full", numeric=True),
)


def lot_rows(status: Status | None) -> list[Row]:
    """A row per parking lot: capacity, cars in it, spaces free, share full."""
    lots = _section(status, "lots")
    rows = []
    for lot_id in sorted(lots):
        lot = lots[lot_id]
        if not isinstance(lot, Mapping):
            continue
        online = lot.get("online") is not False
        share = lot.get("share")
        lvl = "ok"
        if isinstance(share, int | float) and not isinstance(share, bool):
            lvl = "breach" if share >= LOT_FULL_SHARE else level(share, LOT_FULL_SHARE)
        style = LEVEL_STYLE[lvl]
        rows.append(
            Row(
                lot_id,
                (
                    Cell(lot_id) if online else Cell(f"✗ {lot_id}", "bold red"),
                    Cell(fmt_int(lot.get("capacity"))),
                    Cell(fmt_int(lot.get("occupied")), style),
                    Cell(fmt_int(lot.get("free")), style),
                    Cell(fmt_share(share), style or "bold"),
                ),
            )
        )
    return rows


# -- alerts ------------------------------------------------------------------------------


def is_flashing(alert: Alert) -> bool:
    """A breach still active that nobody has acknowledged flashes (and rang the bell)."""
    return (
        alert.get("severity") == "breach"
        and alert.get("state") == "active"
        and not alert.get("acknowledged")
    )


def ordered_alerts(alerts: Mapping[str, Alert]) -> list[Alert]:
    """Active first, by severity, newest first within it; then ended; then cleared."""

    def key(alert: Alert) -> tuple[int, int, float]:
        state = alert.get("state")
        if state == "active" and not alert.get("ended_at"):
            group = 0
        elif state == "active":
            group = 1
        else:
            group = 2
        since = parse_ts(alert.get("since"))
        stamp = -since.timestamp() if since else 0.0
        if group == 2:
            cleared = parse_ts(alert.get("cleared_at")) or since
            stamp = -cleared.timestamp() if cleared else 0.0
        return (group, SEVERITY_RANK.get(str(alert.get("severity")), 3), stamp)

    return sorted((a for a in alerts.values() if isinstance(a, Mapping)), key=key)


def _state_word(alert: Alert) -> tuple[str, str]:
    if alert.get("state") == "cleared":
        return "cleared", "dim"
    if alert.get("ended_at"):
        return "ended", "dark_orange"
    return "active", "bold"


def alert_item(alert: Alert, zone: tzinfo, *, flash_on: bool = False) -> Item:
    """Severity in a column of its own; beside it id, rule, citation, since and
    acknowledgement, and under those the message (both wrap inside their column)."""
    key = str(alert.get("id"))
    severity = str(alert.get("severity") or "data")
    word, mark_style = SEVERITY_MARK.get(severity, (severity.upper(), "bold"))
    state, state_style = _state_word(alert)
    cleared = state == "cleared"
    if is_flashing(alert):
        mark_style = "bold white on red" if flash_on else "bold red"
    mark = Text(word, style="dim" if cleared else mark_style)
    head = Text()
    head.append(f"{alert.get('id', '?')}  ", style="bold")
    rule = str(alert.get("rule") or "?")
    subject = alert.get("subject")
    head.append(rule + (f" [{subject}]" if subject else ""), style="dim" if cleared else "bold")
    head.append(f"  {alert.get('cite') or ''}", style="cyan")
    head.append(f"  since {local_time(alert.get('since'), zone)}")
    if state != "active":
        head.append(f"  {state}", style=state_style)
    acks = [a for a in alert.get("acknowledged") or [] if isinstance(a, Mapping)]
    if acks:
        head.append(f"  ✓ {acks[-1].get('by')}", style="green")
        if len(acks) > 1:
            head.append(f" +{len(acks) - 1}", style="green")
    elif not cleared:
        head.append("  ✗ not acked", style="bold red" if severity == "breach" else "dim")
    if alert.get("uncertain"):
        head.append("  uncertain", style="dark_orange")
    body = Text(_alert_body(alert), style="dim" if cleared else "")
    return Item(key, mark, head, body)


def _alert_body(alert: Alert) -> str:
    """The message; for a deficient facility, the requirement and what was found.

    The id and citation are on the heading already; what the inspector needs under
    them is which requirement failed, in words, and the note that is the evidence.
    """
    subject = alert.get("subject")
    if alert.get("rule") == "facility-deficient" and isinstance(subject, str):
        requirement = BY_ITEM.get(subject)
        observed = alert.get("observed")
        note = observed.get("note") if isinstance(observed, Mapping) else None
        if requirement is not None:
            return requirement.text + (f" — found: “{note}”" if note else "")
    return str(alert.get("message") or "")


def pending_item(key: str, pending: Mapping[str, Any], zone: tzinfo) -> Item:
    """A condition that holds but not yet for ``pending_s``: not an alert yet."""
    mark = Text("… PENDING", style="italic dark_orange")
    head = Text()
    rule = str(pending.get("rule") or "?")
    subject = pending.get("subject")
    head.append(f"{rule}" + (f" [{subject}]" if subject else ""), style="italic")
    cite = RULES[rule].cite if rule in RULES else ""
    head.append(f"  {cite}", style="cyan")
    head.append(f"  since {local_time(pending.get('since'), zone)}  not yet raised", style="dim")
    return Item(key, mark, head)


def alert_items(
    alerts: Mapping[str, Alert], status: Status | None, *, flash_on: bool = False
) -> list[Item]:
    """The alert list: active alerts, then pending conditions, then ended and cleared ones."""
    zone = event_zone(status)
    ordered = ordered_alerts(alerts)
    active = [a for a in ordered if a.get("state") == "active"]
    rest = [a for a in ordered if a.get("state") != "active"]
    rows = [alert_item(a, zone, flash_on=flash_on) for a in active]
    pending = status.get("pending") if status else None
    if isinstance(pending, list):
        for index, p in enumerate(pending):
            if isinstance(p, Mapping):
                rows.append(pending_item(f"pending:{index}:{p.get('rule')}", p, zone))
    rows.extend(alert_item(a, zone) for a in rest)
    return rows


def alert_history(
    alert: Alert, notes: Sequence[Mapping[str, Any]] = ()
) -> list[tuple[datetime, str]]:
    """What happened to an alert, in order: began, raised, acknowledged, noted, ended, cleared."""
    events: list[tuple[datetime, str]] = []

    def add(value: object, what: str) -> None:
        moment = parse_ts(value)
        if moment is not None:
            events.append((moment, what))

    add(alert.get("since"), "condition began to hold")
    add(alert.get("raised_at"), "alert raised")
    for ack in alert.get("acknowledged") or []:
        if isinstance(ack, Mapping):
            comment = f": {ack.get('comment')}" if ack.get("comment") else ""
            add(ack.get("at"), f"acknowledged by {ack.get('by')}{comment}")
    for note in notes:
        if isinstance(note, Mapping) and note.get("alert") == alert.get("id"):
            add(note.get("at"), f"note by {note.get('by')}: {note.get('text')}")
    add(alert.get("ended_at"), "condition ended")
    add(alert.get("cleared_at"), "alert cleared")
    events.sort(key=lambda e: e[0])
    return events


def _figures(values: object) -> str:
    if not isinstance(values, Mapping) or not values:
        return "—"
    parts = []
    for key, value in values.items():
        shown = fmt_int(value) if isinstance(value, int | float) else str(value)
        parts.append(f"{key.replace('_', ' ')} {shown}")
    return " · ".join(parts)


def alert_detail(alert: Alert | None, status: Status | None) -> RenderableType:
    """Everything about one alert: figures, evidence, acknowledgements and its history."""
    if alert is None:
        return Text("This alert is no longer published.", style="dim italic")
    zone = event_zone(status)
    rule_name = str(alert.get("rule") or "?")
    rule = RULES.get(rule_name)
    severity = str(alert.get("severity") or "")
    mark, mark_style = SEVERITY_MARK.get(severity, (severity.upper(), "bold"))
    title = Text()
    title.append(f"{mark} ", style=mark_style)
    title.append(f"{alert.get('id')}  {rule_name}", style="bold")
    if alert.get("subject"):
        title.append(f" [{alert.get('subject')}]", style="bold")
    title.append(f"  {alert.get('cite') or ''}", style="cyan")

    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="dim", no_wrap=True)
    facts.add_column()
    facts.add_row("Message", Text(str(alert.get("message") or "")))
    if rule is not None:
        facts.add_row("Rule", rule.summary)
    requirement = BY_ITEM.get(str(alert.get("subject")))
    if rule_name == "facility-deficient" and requirement is not None:
        facts.add_row("Requirement", f"{requirement.item}: {requirement.text}")
    state, state_style = _state_word(alert)
    facts.add_row("State", Text(state, style=state_style))
    facts.add_row("Observed", _figures(alert.get("observed")))
    facts.add_row("Required", _figures(alert.get("required")))
    worst = alert.get("worst")
    if isinstance(worst, Mapping) and isinstance(worst.get("observed"), Mapping):
        worst = worst["observed"]  # the engine's shape: {"observed": …, "required": …}
    if isinstance(worst, Mapping) and worst:
        facts.add_row("Worst", _figures(worst))
    facts.add_row(
        "Times",
        f"since {local_time(alert.get('since'), zone)} · raised "
        f"{local_time(alert.get('raised_at'), zone)} · ended "
        f"{local_time(alert.get('ended_at'), zone)} · cleared "
        f"{local_time(alert.get('cleared_at'), zone)}",
    )
    evidence = alert.get("evidence")
    if isinstance(evidence, Mapping):
        facts.add_row("Evidence", f"record {evidence.get('record')}")
        facts.add_row("Hash", Text(str(evidence.get("hash")), overflow="fold"))
    if alert.get("uncertain"):
        facts.add_row(
            "Uncertain",
            Text("raised while a gate counter was down: indeterminate", style="dark_orange"),
        )
    acks = [a for a in alert.get("acknowledged") or [] if isinstance(a, Mapping)]
    facts.add_row(
        "Acknowledged",
        Text("no", style="bold red")
        if not acks
        else Text(
            "\n".join(
                f"{a.get('by')} at {local_time(a.get('at'), zone)}: {a.get('comment') or ''}"
                for a in acks
            ),
            style="green",
        ),
    )

    notes_value = status.get("notes") if status else None
    notes = notes_value if isinstance(notes_value, list) else []
    history = Table.grid(padding=(0, 2))
    history.add_column(no_wrap=True, style="dim")
    history.add_column()
    for moment, what in alert_history(alert, notes):
        history.add_row(local_clock(moment, zone), what)
    return Group(title, Text(), facts, Text(), Text("History", style="bold underline"), history)


# -- help --------------------------------------------------------------------------------


def rules_table() -> Table:
    """Each live rule in one line with its severity and citation (kent_ops.core.ordinance.RULES).

    The name and its citation stack in the first column so the explanation keeps
    most of an 80-column screen.
    """
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    for rule in RULES.values():
        _, style = SEVERITY_MARK.get(rule.severity, ("", ""))
        name = Text(rule.name, style=style)
        name.append(f"\n{rule.cite}", style="cyan")
        table.add_row(name, f"{rule.summary}\n")
    return table
