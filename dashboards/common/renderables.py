"""Rich renderables the panels draw with: a limit bar and a time-binned trend line.

Drawing lives apart from the widgets (Textual's own habit: ``renderables/sparkline``
beside ``widgets/_sparkline``). The arithmetic is in pure functions (``bar_text``,
``bin_series``, ``spark``) so it is unit tested on its own; the classes only learn
their width from Rich at render time.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from dashboards.common.format import LEVEL_STYLE, level

__all__ = ["LimitBar", "TrendLine", "bar_text", "bin_series", "spark"]

_SPARK = "▁▂▃▄▅▆▇█"


def bar_text(value: int, limit: int, width: int, *, mark: int | None = None) -> Text:
    """A bar of ``value`` against ``limit``, coloured by how close it is, with ``mark`` as ┃.

    The scale is the limit (or the value, once past it), so the end of the bar is
    the permitted maximum and an overflow fills the bar red.
    """
    width = max(1, width)
    scale = max(limit, value, 1)
    filled = round(width * max(value, 0) / scale)
    style = LEVEL_STYLE[level(value, limit)] or "green"
    cells = ["█"] * filled + ["░"] * (width - filled)
    text = Text()
    mark_at = None
    if mark is not None and 0 < mark < scale:
        mark_at = min(width - 1, round(width * mark / scale))
    for index, cell in enumerate(cells):
        if index == mark_at:
            text.append("┃", style="bold bright_white")
        else:
            text.append(cell, style=style if cell == "█" else "grey50")
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
def _trend_line(
    points: tuple[tuple[float, int], ...], end: float, window_s: float, width: int, top: int
) -> str:
    """Binning an hour of points is the dear part; redraws between two points reuse it."""
    return spark(bin_series(points, end - window_s, end, width), top)


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
        width = max(1, options.max_width)
        points = tuple(self.points)
        yield Text(_trend_line(points, self.end, self.window_s, width, self.top), style=self.style)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(8, options.max_width)
