"""The top of the main screen: the header line, attendance, staffing and parking.

What they say (the permit's standing, the order, each figure against its limit and how
it reads, why attendance may be low) is the core's (:mod:`kent_ops.core.glance_view`,
which the inspector's page in a browser draws too); here it is laid out in a
terminal's cells: the large digits, the bar, the trend line, the columns.
"""

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
from dashboards.common.tagged_text import TAG_STYLES, line_text, span_text
from kent_ops.core import wire
from kent_ops.core.foresight import hold_words
from kent_ops.core.glance_view import (
    attendance_flags,
    compliance_title,
    order_word,
    outside_hours,
    permit_words,
    staffing_lines,
)

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
        line_text(permit_words(status), permit)
        hours = outside_hours(status)
        if hours is not None:
            outside = span_text(hours)
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


# -- attendance --------------------------------------------------------------------------


ORDER_STYLES = {"ADMIT": "bold black on green", "HOLD": "bold white on red"}
"""The order beside the figure, as a terminal shows it."""

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
    narrow even for the large digits shows the figure in plain bold. While admitting,
    a HOLD fewer than 30 minutes away is said beside the order ("HOLD in about 12 min",
    core/foresight.py): the command post can open the overflow lot or slow the gates.
    """
    if status is None:
        return Text("Waiting for the aggregator's first status…", style="dim italic")
    width = max(1, width)
    att = status.attendance
    current, maximum, threshold = att.current, att.max_at_one_time, att.threshold
    style = LEVEL_STYLE[level(current, maximum)] or "bold"
    word = order_word(status)
    order = Text(f" {word} ", style=ORDER_STYLES[word])
    limit = Text(f" max {fmt_int(maximum)}")
    coming = hold_words(att.hold_in_s) if status.admit else None
    ahead = Text()
    if coming is not None:
        ahead.append("  ")
        ahead.append(coming, style="bold black on yellow")
    mark = Text()
    mark.append("┃", style="bold bright_white")
    mark.append(f" threshold {fmt_int(threshold)}")
    peak = Text(f"peak {fmt_int(att.peak)}")

    figure = big_number(fmt_int(current))
    figure_width = text_width(figure)
    details = [_joined(order, limit, ahead), mark, peak]
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
        if details[0].cell_len <= width or not ahead:
            lines.append(_cut(details[0], width))
        else:  # the warning on a line of its own rather than cut
            lines.append(_cut(_joined(order, limit), width))
            lines.append(_cut(ahead[2:], width))
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
    return line_text(attendance_flags(status), Text(no_wrap=True, overflow="ellipsis"))


# -- staffing and parking ----------------------------------------------------------------


def compliance_panel(status: wire.Status | None, *, width: int) -> Text:
    """Medical, security and parking figures against what the permit requires, in
    columns within ``width`` cells. On a narrow screen the word after each limit goes
    first ("of 7", not "of 7 required"), then the labels are cut; the figures stay
    whole down to the narrowest of phones."""
    if status is None:
        return Text("—", style="dim")
    lines = staffing_lines(status)
    for words in (True, False):
        rows = []
        for line in lines:
            if line.kind == "exits":
                rest = Text(line.limit(), style="dim")
                rows.append((Text(line.label), Text(fmt_int(line.have), style="bold"), rest))
                continue
            style = TAG_STYLES[line.tag]
            rows.append(
                (
                    Text(line.label, style=style or ""),
                    Text(fmt_int(line.have), style=style or "bold"),
                    Text(line.limit(words=words), style=style or "dim"),
                )
            )
        natural = [max(row[i].cell_len for row in rows) for i in range(3)]
        if sum(natural) + 2 <= width:
            break
    return columns_text(rows, width, right=(False, True, False), give_way=((0, 4), (2, 1)))
