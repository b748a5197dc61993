"""The top of the main screen: the header line, attendance, staffing and parking."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dashboards.common.bigtext import big_number
from dashboards.common.format import LEVEL_STYLE, clean, event_zone, fmt_int, level, local_clock
from dashboards.common.renderables import LimitBar, TrendLine
from dashboards.inspector.panels.law import assembly_text
from kent_ops.core import wire

__all__ = ["attendance_panel", "compliance_panel", "compliance_title", "header_text"]


def header_text(
    status: wire.Status | None, event_id: str, inspector: str, now: datetime | None
) -> Text:
    """The event's local time, who is signed in, the event, its permit and its status,
    and whether it is outside its permitted hours (amber while the assembly is on)."""
    zone = event_zone(status)
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(local_clock(now, zone, with_zone=True), style="bold")
    text.append(f"  {inspector}", style="dim")
    name = clean(status.event_name, limit=60) if status is not None else ""
    text.append(f"  {name or event_id}", style="bold")
    if status is None:
        return text
    permit = status.permit
    number = clean(permit.number, limit=32) or "no permit number"
    state = clean(permit.status, limit=32) or "unknown"
    text.append(f"  {number} ")
    text.append(state, style="bold green" if state == "issued" else "bold red")
    if not status.window.inside:
        on = status.assembly.on
        text.append("  outside permitted hours", style="bold dark_orange" if on else "dim")
    return text


def compliance_title(status: wire.Status | None) -> str:
    """The staffing panel's title says whether its duties bind now: they bind the
    assembly (doctor, nurses, parking, docs/law.md), so only while it is on."""
    if status is None:
        return "Staffing & parking"
    return f"Staffing & parking · {assembly_text(status)}"


# -- attendance --------------------------------------------------------------------------


def attendance_panel(
    status: wire.Status | None,
    trend: Sequence[tuple[float, int]] = (),
    *,
    window_s: float = 3600.0,
) -> RenderableType:
    """Attendance large, against the permitted maximum and the 500 threshold; bar; trend."""
    if status is None:
        return Text("Waiting for the aggregator's first status…", style="dim italic")
    att = status.attendance
    current, maximum, threshold = att.current, att.max_at_one_time, att.threshold
    style = LEVEL_STYLE[level(current, maximum)] or "bold"
    figure = Text("\n".join(big_number(fmt_int(current))), style=style)

    details = Text(no_wrap=True, overflow="ellipsis")
    if status.admit:
        details.append(" ADMIT ", style="bold black on green")
    else:
        details.append(" HOLD ", style="bold white on red")
    details.append(f" max {fmt_int(maximum)}\n")
    details.append("┃", style="bold bright_white")
    details.append(f" threshold {fmt_int(threshold)}\n")
    details.append(f"peak {fmt_int(att.peak)}")

    top = Table.grid(padding=(0, 2))
    top.add_column(no_wrap=True)
    top.add_column(ratio=1)
    top.add_row(figure, details)

    parts: list[RenderableType] = [top, LimitBar(current, maximum, mark=threshold)]
    if status.ts is not None:
        # The line ends at the newest point, not the status time, so it moves once a
        # second (when a point is added) rather than at every status.
        end = trend[-1][0] if trend else status.ts.timestamp()
        line = Table.grid(padding=(0, 1))
        line.add_column(no_wrap=True)
        line.add_column(ratio=1)
        peak = max(maximum, current, max((v for _, v in trend), default=0))
        line.add_row(
            Text("last hour", style="dim"),
            TrendLine(trend, end, window_s=window_s, top=peak),
        )
        parts.append(line)
    parts.append(_attendance_flags(status))
    return Group(*parts)


def _attendance_flags(status: wire.Status) -> Text:
    """Why attendance may be low (a counter down) and the last inspector's adjustment."""
    flags = Text(no_wrap=True, overflow="ellipsis")
    if status.attendance.uncertain:
        down = [clean(gate, limit=32) for gate, g in sorted(status.gates.items()) if not g.online]
        which = f": {', '.join(down)} down" if down else ": a counter is down or stale"
        flags.append(f"UNCERTAIN{which}", style="bold dark_orange")
    if status.adjustments:
        last = status.adjustments[-1]
        if flags:
            flags.append(" · ")
        flags.append(
            f"adjusted to {fmt_int(last.attendance)} (offset {last.offset:+,}) "
            f"by {clean(last.by)} at {local_clock(last.at, event_zone(status))}",
            style="italic",
        )
    if not flags:
        flags.append("all gate counters reporting", style="dim")
    return flags


# -- staffing and parking ----------------------------------------------------------------

_Line = tuple[str, int, int, str, str]
"""label, have, need, the word after "of {need}", and how to judge it (min, max, exits)."""


def _compliance_lines(status: wire.Status) -> list[_Line]:
    medical, security, parking = status.medical, status.security, status.parking
    att = status.attendance
    lines: list[_Line] = [
        ("Doctors", medical.doctors_on_duty, medical.doctors_required, "required", "min"),
        ("Nurses", medical.nurses_on_duty, medical.nurses_required, "required", "min"),
        ("Security", security.on_duty, security.declared, "declared", "min"),
        ("Car spaces", parking.spaces_provided, parking.spaces_required, "required", "min"),
        ("Cars", parking.occupied, parking.vehicles_at_one_time, "allowed", "max"),
    ]
    if att.max_collective > 0:  # a permit always sets it; 0 is an aggregator that did not say
        lines.append(("Entries", att.entries, att.max_collective, "allowed", "max"))
    else:
        lines.append(("Entries", att.entries, att.exits, "", "exits"))
    return lines


def compliance_panel(status: wire.Status | None) -> RenderableType:
    """Medical, security and parking figures against what the permit requires."""
    if status is None:
        return Text("—", style="dim")
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(justify="right", no_wrap=True)
    table.add_column(no_wrap=True)
    for label, have, need, word, kind in _compliance_lines(status):
        if kind == "exits":
            table.add_row(
                Text(label),
                Text(fmt_int(have), style="bold"),
                Text(f"exits {fmt_int(need)}", style="dim"),
            )
            continue
        # A minimum is a limit on the demand: judge what is required against what is there.
        lvl = level(need, have) if kind == "min" else level(have, need)
        style = LEVEL_STYLE[lvl]
        table.add_row(
            Text(label, style=style or ""),
            Text(fmt_int(have), style=style or "bold"),
            Text(f"of {fmt_int(need)} {word}", style=style or "dim"),
        )
    return table
