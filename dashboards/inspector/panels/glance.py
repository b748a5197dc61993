"""The top of the main screen: the header line, attendance, staffing and parking."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.text import Text

from dashboards.common.bigtext import big_number
from dashboards.common.format import LEVEL_STYLE, clean, event_zone, fmt_int, level, local_clock
from dashboards.common.renderables import (
    bar_text,
    columns_text,
    lines_text,
    text_width,
    trend_peak,
    trend_text,
)
from dashboards.inspector.panels.law import assembly_text
from kent_ops.core import wire

__all__ = ["attendance_panel", "compliance_panel", "compliance_title", "header_text"]


PHONE_WIDTH = 60
"""Below this many cells a header is on a phone: its clock shows minutes."""


def header_text(
    status: wire.Status | None,
    event_id: str,
    inspector: str,
    now: datetime | None,
    *,
    width: int | None = None,
) -> Text:
    """The event's local time, who is signed in, the event, its permit and its status,
    and whether it is outside its permitted hours (amber while the assembly is on).

    One line; where that line is wider than ``width``, two: the time and the permit's
    standing first, the event and the inspector under them, each cut to fit. On a
    phone (narrower than :data:`PHONE_WIDTH`) the time is to the minute: the line is
    then drawn again once a minute, not every second, which a command post serving
    dozens of phones notices (and the phone shows the seconds itself).
    """
    zone = event_zone(status)
    phone = width is not None and width < PHONE_WIDTH
    clock = Text(local_clock(now, zone, with_zone=True, seconds=not phone), style="bold")
    who = Text(inspector, style="dim")
    name = clean(status.event_name, limit=60) if status is not None else ""
    event = Text(name or event_id, style="bold")
    permit = Text()
    outside = Text()
    if status is not None:
        number = clean(status.permit.number, limit=32) or "no permit number"
        state = clean(status.permit.status, limit=32) or "unknown"
        permit.append(f"{number} ")
        permit.append(state, style="bold green" if state == "issued" else "bold red")
        if not status.window.inside:
            on = status.assembly.on
            outside.append("outside permitted hours", style="bold dark_orange" if on else "dim")
    line = _spaced([clock, who, event, permit, outside])
    if width is None or line.cell_len <= width:
        return line
    first, second = _spaced([clock, permit]), _spaced([event, outside, who])
    return lines_text([_cut(first, width), _cut(second, width)])


def _spaced(parts: Sequence[Text]) -> Text:
    """The non-empty parts, two spaces apart, on one line cut with an ellipsis."""
    line = Text(no_wrap=True, overflow="ellipsis")
    for part in parts:
        if part:
            if line:
                line.append("  ")
            line.append_text(part)
    return line


def _joined(*parts: Text) -> Text:
    """The parts side by side, each keeping its own style (``+`` would lend the first
    part's style to the rest)."""
    line = Text(no_wrap=True, overflow="ellipsis")
    for part in parts:
        line.append_text(part)
    return line


def _cut(text: Text, width: int) -> Text:
    """``text`` cut with an ellipsis to ``width`` cells (never padded)."""
    text.truncate(max(1, width), overflow="ellipsis")
    return text


def compliance_title(status: wire.Status | None) -> str:
    """The staffing panel's title says whether its duties bind now: they bind the
    assembly (doctor, nurses, parking, docs/law.md), so only while it is on."""
    if status is None:
        return "Staffing & parking"
    return f"Staffing & parking · {assembly_text(status)}"


# -- attendance --------------------------------------------------------------------------


FIGURE_GAP = 2
"""Cells between the large figure and the order beside it."""


def attendance_panel(
    status: wire.Status | None,
    trend: tuple[tuple[float, int], ...] = (),
    *,
    width: int,
    window_s: float = 3600.0,
) -> Text:
    """Attendance large, the order, against the permitted maximum and the 500 threshold;
    bar; trend; why it may be low. Lines ``width`` cells wide.

    The order (ADMIT or HOLD) and the limits stand beside the figure where they fit,
    under it where they do not (a phone, or a figure in the millions); a screen too
    narrow even for the large digits shows the figure in plain bold.
    """
    if status is None:
        return Text("Waiting for the aggregator's first status…", style="dim italic")
    width = max(1, width)
    att = status.attendance
    current, maximum, threshold = att.current, att.max_at_one_time, att.threshold
    style = LEVEL_STYLE[level(current, maximum)] or "bold"
    order = Text(" ADMIT ", style="bold black on green")
    if not status.admit:
        order = Text(" HOLD ", style="bold white on red")
    limit = Text(f" max {fmt_int(maximum)}")
    mark = Text()
    mark.append("┃", style="bold bright_white")
    mark.append(f" threshold {fmt_int(threshold)}")
    peak = Text(f"peak {fmt_int(att.peak)}")

    figure = big_number(fmt_int(current))
    figure_width = text_width(figure)
    details = [_joined(order, limit), mark, peak]
    beside = width - figure_width - FIGURE_GAP
    lines: list[Text]
    if beside >= max(d.cell_len for d in details):
        lines = [
            _joined(Text(line, style=style), Text(" " * FIGURE_GAP), d)
            for line, d in zip(figure, details, strict=True)
        ]
    else:
        # The order first, whole: it is what a gate is told.
        big = [Text(line, style=style) for line in figure] if figure_width <= width else []
        lines = big or [Text(fmt_int(current), style=style)]
        lines.append(_cut(details[0], width))
        lines.append(_cut(_joined(mark, Text("  "), peak), width))
    lines.append(bar_text(current, maximum, width, mark=threshold))
    if status.ts is not None:
        # The line ends at the newest point, not the status time, so it moves once a
        # second (when a point is added) rather than at every status.
        end = trend[-1][0] if trend else status.ts.timestamp()
        top = max(maximum, current, trend_peak(trend))
        label = _joined(Text("last hour", style="dim"), Text(" ")) if width >= 20 else Text()
        line = trend_text(trend, end, width - label.cell_len, window_s=window_s, top=top)
        lines.append(_joined(label, line))
    lines.append(_cut(_attendance_flags(status), width))
    return lines_text(lines)


def _attendance_flags(status: wire.Status) -> Text:
    """Why attendance may be low (a counter down) and the last inspector's adjustment."""
    flags = Text(no_wrap=True, overflow="ellipsis")
    if status.attendance.uncertain:
        down = [clean(gate, limit=32) for gate, g in sorted(status.gates.items()) if g.down()]
        parts = [f"{', '.join(down)} down"] if down else []
        for gate, g in sorted(status.gates.items()):  # heard, yet in doubt
            sensor = status.sensors.get(gate)
            if not g.down() and not g.manual and sensor is not None and sensor.doubt:
                parts.append(f"{clean(gate, limit=32)} {sensor.doubt}")
        which = f": {'; '.join(parts)}" if parts else ": a counter is down or stale"
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
    doubt = "?" if medical.uncertain else ""  # a staff station's roster unknown now
    lines: list[_Line] = [
        (f"Doctors{doubt}", medical.doctors_on_duty, medical.doctors_required, "required", "min"),
        (f"Nurses{doubt}", medical.nurses_on_duty, medical.nurses_required, "required", "min"),
        ("Security", security.on_duty, security.declared, "declared", "min"),
        ("Car spaces", parking.spaces_provided, parking.spaces_required, "required", "min"),
        ("Cars", parking.occupied, parking.vehicles_at_one_time, "allowed", "max"),
    ]
    if att.max_collective > 0:  # a permit always sets it; 0 is an aggregator that did not say
        lines.append(("Entries", att.entries, att.max_collective, "allowed", "max"))
    else:
        lines.append(("Entries", att.entries, att.exits, "", "exits"))
    return lines


def compliance_panel(status: wire.Status | None, *, width: int) -> Text:
    """Medical, security and parking figures against what the permit requires, in
    columns within ``width`` cells. On a narrow screen the word after each limit goes
    first ("of 7", not "of 7 required"), then the labels are cut; the figures stay
    whole down to the narrowest of phones."""
    if status is None:
        return Text("—", style="dim")
    for words in (True, False):
        rows = []
        for label, have, need, word, kind in _compliance_lines(status):
            if kind == "exits":
                rest = Text(f"exits {fmt_int(need)}", style="dim")
                rows.append((Text(label), Text(fmt_int(have), style="bold"), rest))
                continue
            # A minimum is a limit on the demand: judge what is required against what is there.
            lvl = level(need, have) if kind == "min" else level(have, need)
            style = LEVEL_STYLE[lvl]
            limit = f"of {fmt_int(need)} {word}" if words else f"of {fmt_int(need)}"
            rows.append(
                (
                    Text(label, style=style or ""),
                    Text(fmt_int(have), style=style or "bold"),
                    Text(limit, style=style or "dim"),
                )
            )
        natural = [max(row[i].cell_len for row in rows) for i in range(3)]
        if sum(natural) + 2 <= width:
            break
    return columns_text(rows, width, right=(False, True, False), give_way=((0, 4), (2, 1)))
