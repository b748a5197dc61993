"""A scrolling table that draws only the rows on screen, from panel rows.

Textual's DataTable refreshes itself once per changed cell and re-measures a whole
column whenever a cell gets narrower: with 200 gates changing ten times a second that
was most of a core. This view keeps the rows as given, measures the columns once per
update, and turns a row into segments only when it is on screen and has changed (the
line API, like Textual's own ``Log``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from dashboards.common.rows import Cell, Column, Row

__all__ = ["RowsTable", "fit"]


@lru_cache(maxsize=256)
def _style(spec: str) -> Style:
    return Style.parse(spec) if spec else Style()


def fit(text: str, width: int, *, right: bool) -> str:
    """``text`` padded (or cut, with an ellipsis) to exactly ``width`` cells."""
    length = cell_len(text)
    if length > width:
        # One crop, not a character at a time: an id from the wire may be 10 KB long.
        return set_cell_size(text, width - 1) + "…" if width > 0 else ""
    pad = " " * (width - length)
    return pad + text if right else text + pad


def _drawn_width(widths: Sequence[int]) -> int:
    """Cells a row takes: each shown column and the space before it."""
    return sum(w + 1 for w in widths if w)


class RowsTable(ScrollView, can_focus=True):
    """A header line and one line per row; each cell brings a one-space gap before it.

    Subclasses set ``COLUMNS``. A table wider than its box (a phone) first cuts the
    column named in ``GIVE_WAY`` (a name) with an ellipsis, down to ``NARROWEST``
    cells, then leaves out the columns in ``DROPPABLE``, in that order: a figure is
    shown whole or not at all. Scroll with the arrow keys when focused.
    """

    COLUMNS: ClassVar[Sequence[Column]] = ()
    GIVE_WAY: ClassVar[int | None] = None
    NARROWEST: ClassVar[int] = 6
    DROPPABLE: ClassVar[tuple[int, ...]] = ()

    DEFAULT_CSS = """
    RowsTable {
        background: $surface;
    }
    RowsTable > .rows-table--header {
        text-style: bold;
        background: $panel;
    }
    RowsTable > .rows-table--odd {
        background: $boost;
    }
    """

    COMPONENT_CLASSES = {"rows-table--header", "rows-table--odd"}

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: list[Row] = []
        self._natural = [cell_len(column.label) for column in self.COLUMNS]
        """Each column as wide as its widest cell."""
        self._widths = list(self._natural)
        """The columns as drawn: the natural widths, the give-way column cut to fit, 0
        for a column left out."""
        self._lines: dict[str, tuple[tuple[Cell, ...], bool, Strip]] = {}
        """Drawn rows by key, with the cells and stripe they were drawn with."""
        self._header: Strip | None = None
        self._styles: tuple[Style, Style] | None = None
        """The plain and the striped row's base style, until the styles change."""

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def rows(self) -> list[Row]:
        return list(self._rows)

    def set_rows(self, rows: Sequence[Row]) -> None:
        """Show ``rows``; a row whose cells did not change is not drawn again."""
        layout = len(rows) != len(self._rows)  # a table as tall as its rows grows
        self._rows = list(rows)
        widths = [cell_len(column.label) for column in self.COLUMNS]
        # A column at a time (200 gates × 7 cells ten times a second), and by ``len``
        # where the column is ASCII, as figures are: the same width, several times faster.
        for index, column in enumerate(zip(*(row.cells for row in self._rows), strict=False)):
            texts = [text for text, _ in column]
            measure = len if "".join(texts).isascii() else cell_len
            widths[index] = max(widths[index], max(map(measure, texts)))
        self._natural = widths
        self._fit()
        if len(self._lines) > len(self._rows):
            keys = {row.key for row in self._rows}
            for stale in [key for key in self._lines if key not in keys]:
                del self._lines[stale]
        self.refresh(layout=layout)

    def _fit(self) -> None:
        """The drawn widths for the box as it is now; drawn rows kept while they hold."""
        widths = list(self._natural)
        room = self.scrollable_content_region.width
        give = self.GIVE_WAY
        if give is not None and room > 0:
            over = _drawn_width(widths) - room
            if over > 0:
                widths[give] = max(min(self.NARROWEST, widths[give]), widths[give] - over)
            for index in self.DROPPABLE:
                if _drawn_width(widths) <= room:
                    break
                widths[index] = 0
        if widths != self._widths:
            self._widths = widths
            self._lines.clear()
            self._header = None
        self.virtual_size = Size(_drawn_width(self._widths), len(self._rows) + 1)

    def on_resize(self) -> None:
        self._fit()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()
        self._header = None
        self._styles = None

    def _base_styles(self) -> tuple[Style, Style]:
        """Computing ``rich_style`` walks the DOM: once per style change, not per line."""
        if self._styles is None:
            base = self.rich_style
            self._styles = (base, base + self.get_component_rich_style("rows-table--odd"))
        return self._styles

    def _line(self, cells: Sequence[Cell], base: Style) -> Strip:
        segments = []
        for column, width, (text, spec) in zip(self.COLUMNS, self._widths, cells, strict=False):
            if width:
                segments.append(Segment(" ", base))
                segments.append(
                    Segment(fit(text, width, right=column.numeric), base + _style(spec))
                )
        return Strip(segments, _drawn_width(self._widths))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base, striped = self._base_styles()
        if y == 0:
            if self._header is None:
                labels = [Cell(column.label) for column in self.COLUMNS]
                header = base + self.get_component_rich_style("rows-table--header")
                self._header = self._line(labels, header)
            return self._header.crop_extend(scroll_x, scroll_x + width, base)
        index = scroll_y + y - 1
        if index >= len(self._rows):
            return Strip.blank(width, base)
        row = self._rows[index]
        odd = bool(index % 2)
        cached = self._lines.get(row.key)
        if cached is None or cached[0] != row.cells or cached[1] != odd:
            strip = self._line(row.cells, striped if odd else base)
            self._lines[row.key] = (row.cells, odd, strip)
        else:
            strip = cached[2]
        return strip.crop_extend(scroll_x, scroll_x + width, base)
