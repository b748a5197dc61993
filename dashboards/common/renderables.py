"""What the panels draw with: a limit bar, a time-binned trend line, cells in columns.

Drawing lives apart from the widgets (Textual's own habit: ``renderables/sparkline``
beside ``widgets/_sparkline``). The arithmetic is in pure functions (``bar_text``,
``bin_series``, ``spark``, ``trend_text``, ``columns_text``) so it is unit tested on
its own; the classes only learn their width from Rich at render time.

A panel redrawn ten times a second is drawn as plain lines of a known width
(``columns_text``, ``fit_text``) rather than as Rich tables: a table measures and pads
every cell through the console at each redraw, which made the attendance and staffing
panels most of the cost of a status.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from dashboards.common.format import LEVEL_STYLE, level

__all__ = [
    "LimitBar",
    "TrendLine",
    "bar_text",
    "bin_series",
    "columns_text",
    "fit_text",
    "lines_text",
    "spark",
    "text_width",
    "trend_peak",
    "trend_text",
]

_SPARK = "▁▂▃▄▅▆▇█"


def bar_text(value: int, limit: int, width: int, *, mark: int | None = None) -> Text:
    """A bar of ``value`` against ``limit``, coloured by how close it is, with ``mark`` as ┃.

    The scale is the limit (or the value, once past it), so the end of the bar is
    the permitted maximum and an overflow fills the bar red. Drawn as runs, not cell
    by cell: a bar is a handful of spans however wide it is.
    """
    width = max(1, width)
    scale = max(limit, value, 1)
    filled = round(width * max(value, 0) / scale)
    style = LEVEL_STYLE[level(value, limit)] or "green"
    mark_at = None
    if mark is not None and 0 < mark < scale:
        mark_at = min(width - 1, round(width * mark / scale))
    text = Text()

    def run(start: int, end: int) -> None:
        full, empty = max(0, min(end, filled) - start), max(0, end - max(start, filled))
        if full:
            text.append("█" * full, style=style)
        if empty:
            text.append("░" * empty, style="grey50")

    if mark_at is None:
        run(0, width)
    else:
        run(0, mark_at)
        text.append("┃", style="bold bright_white")
        run(mark_at + 1, width)
    return text


class LimitBar:
    """``bar_text`` at whatever width Rich gives it."""

    def __init__(self, value: int, limit: int, *, mark: int | None = None) -> None:
        self.value, self.limit, self.mark = value, limit, mark

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield bar_text(self.value, self.limit, options.max_width, mark=self.mark)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(8, options.max_width)


def bin_series(
    points: Sequence[tuple[float, int]], start: float, end: float, bins: int
) -> list[int | None]:
    """The highest value in each of ``bins`` equal slices of [start, end].

    Points are (epoch seconds, value). The peak, not the mean, because an inspector
    cares whether the limit was touched, not how long for. A slice with no point
    carries the last value before it (a figure holds until the next status says
    otherwise); slices before the first point are None.
    """
    if bins <= 0 or end <= start:
        return []
    out: list[int | None] = [None] * bins
    span = end - start
    for t, value in points:
        if t < start or t > end:
            continue
        index = min(bins - 1, int((t - start) / span * bins))
        current = out[index]
        out[index] = value if current is None else max(current, value)
    seen = [False] * bins
    for t, _ in points:
        if start <= t <= end:
            seen[min(bins - 1, int((t - start) / span * bins))] = True
    carried: int | None = None
    before = [v for t, v in points if t < start]
    if before:
        carried = before[-1]
    for index in range(bins):
        if seen[index]:
            carried = out[index]
        else:
            out[index] = carried
    return out


def spark(values: Sequence[int | None], top: int) -> str:
    """One character per value, ▁ to █ against ``top``; blank where there is no value."""
    top = max(top, 1)
    chars = []
    for value in values:
        if value is None:
            chars.append(" ")
        else:
            step = round(max(0, min(value, top)) / top * (len(_SPARK) - 1))
            chars.append(_SPARK[step])
    return "".join(chars)


@lru_cache(maxsize=8)
def _binned(
    points: tuple[tuple[float, int], ...], end: float, window_s: float, width: int
) -> tuple[int | None, ...]:
    """Binning an hour of points is the dear part: it changes once a second, when a
    point is added, not at every status (whose attendance only rescales the line)."""
    return tuple(bin_series(points, end - window_s, end, width))


@lru_cache(maxsize=8)
def trend_peak(points: tuple[tuple[float, int], ...]) -> int:
    """The highest value of ``points`` (0 for none), once per line, not at every status."""
    return max((value for _, value in points), default=0)


def trend_text(
    points: tuple[tuple[float, int], ...],
    end: float,
    width: int,
    *,
    window_s: float = 3600.0,
    top: int = 1,
    style: str = "cyan",
) -> Text:
    """The trend line ``width`` cells wide: the window ending at ``end``, scaled to ``top``."""
    width = max(1, width)
    return Text(spark(_binned(points, end, window_s, width), top), style=style)


def fit_text(text: Text, width: int, *, right: bool = False) -> Text:
    """``text`` cut with an ellipsis, or padded with plain spaces, to exactly ``width`` cells."""
    length = text.cell_len
    if width <= 0:
        return Text()
    if length > width:
        out = text.copy()
        out.truncate(width, overflow="ellipsis")
        return out
    out = Text(no_wrap=True)
    if right:
        out.append(" " * (width - length))
    out.append_text(text)
    if not right:
        out.append(" " * (width - length))
    return out


def lines_text(lines: Sequence[Text]) -> Text:
    """Lines as one text that is never wrapped (each already fits its width)."""
    return Text("\n", no_wrap=True, overflow="crop").join(lines)


def columns_text(
    rows: Sequence[Sequence[Text]],
    width: int,
    *,
    right: Sequence[bool] = (),
    give_way: Sequence[tuple[int, int]] = (),
    gap: int = 1,
) -> Text:
    """Rows of cells in columns as wide as their widest cell, one line a row, within ``width``.

    When the columns do not fit, those named in ``give_way`` as (column, narrowest)
    are narrowed in that order, each down to its narrowest, their cells cut with an
    ellipsis; a column narrowed to nothing is left out. A cell is right-aligned where
    ``right`` says so, and the last column is not padded. Lines, not a table: see the
    module's note.
    """
    count = max((len(row) for row in rows), default=0)
    widths = [0] * count
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], cell.cell_len)
    shown = [index for index in range(count) if widths[index]]
    over = sum(widths) + gap * max(0, len(shown) - 1) - width
    for index, narrowest in give_way:
        if over <= 0:
            break
        cut = min(over, max(0, widths[index] - narrowest))
        widths[index] -= cut
        over -= cut
        if widths[index] == 0 and index in shown:
            shown.remove(index)
            over -= gap
    aligned = [index < len(right) and right[index] for index in range(count)]
    last = shown[-1] if shown else -1
    lines = []
    for row in rows:
        cells = []
        for index in shown:
            cell = row[index] if index < len(row) else Text()
            if index == last and not aligned[index]:
                cells.append(_cut_only(cell, widths[index]))
            else:
                cells.append(fit_text(cell, widths[index], right=aligned[index]))
        lines.append(Text(" " * gap).join(cells))
    return lines_text(lines)


def _cut_only(text: Text, width: int) -> Text:
    """``text`` cut with an ellipsis to ``width`` cells, never padded."""
    return fit_text(text, width) if text.cell_len > width else text


def text_width(lines: Sequence[str]) -> int:
    """The widest of ``lines``, in cells."""
    return max((cell_len(line) for line in lines), default=0)


class TrendLine:
    """A sparkline of (epoch, value) points over a window ending at ``end``."""

    def __init__(
        self,
        points: Sequence[tuple[float, int]],
        end: float,
        *,
        window_s: float = 3600.0,
        top: int = 1,
        style: str = "cyan",
    ) -> None:
        self.points, self.end, self.window_s = points, end, window_s
        self.top, self.style = top, style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield trend_text(
            tuple(self.points),
            self.end,
            options.max_width,
            window_s=self.window_s,
            top=self.top,
            style=self.style,
        )

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(8, options.max_width)
