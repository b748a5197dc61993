"""Table rows as plain data: what a panel function returns and a table widget shows.

A panel builds rows from a status snapshot; the widget only compares them with what
it shows and draws the rows on screen. Cells are plain (text, style) pairs, not Rich
objects: 200 gates ten times a second is 12,000 cells a second, and a tuple of two
strings costs a fraction of a ``Text``. It is also what lets the panels be tested
without Textual.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["Cell", "Column", "Item", "Row", "cell", "text_signature"]

_CONSOLE = Console(width=200, color_system=None, legacy_windows=False, file=None)
"""Only for wrapping text to a width (``Text.wrap`` asks a console how wide a tab is)."""


def text_signature(text: Text | None) -> tuple[object, ...]:
    """What a Text looks like, styles included (``Text.__eq__`` ignores its base style)."""
    if text is None:
        return ()
    return (text.plain, str(text.style), tuple(text.spans))


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its key, its heading, and whether it holds figures (right-aligned)."""

    key: str
    label: str
    numeric: bool = False


class Cell(NamedTuple):
    """One cell: its text and a Rich style string ("" for plain)."""

    text: str
    style: str = ""


def cell(text: str, style: str = "") -> Cell:
    """A cell (a name for the constructor that reads well in panel code)."""
    return Cell(text, style)


@dataclass(frozen=True, slots=True)
class Row:
    """One row: a stable key (the gate, the lot) and its cells, in column order."""

    key: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of a list (an alert): a stable key, a mark in a column of its own,
    a heading beside it and, under the heading, an optional body."""

    key: str
    mark: Text
    head: Text
    body: Text | None = None

    @property
    def signature(self) -> tuple[object, ...]:
        """Equal for two items that draw the same, styles included."""
        return (
            self.key,
            text_signature(self.mark),
            text_signature(self.head),
            text_signature(self.body),
        )

    @property
    def text(self) -> Text:
        """All of it as one text (for tests and for a narrow console)."""
        out = Text()
        out.append_text(self.mark)
        out.append("  ")
        out.append_text(self.head)
        if self.body is not None:
            out.append("\n")
            out.append_text(self.body)
        return out

    def lines(self, width: int, mark_width: int = 9) -> Text:
        """Mark, heading and body as lines ``width`` cells wide, drawn as ``renderable``
        draws them: wrapped lines stay under their heading.

        Plain lines, not a grid: a list redrawn twice a second (a flashing breach)
        measured and padded each entry's table through the console at every redraw.
        """
        indent = mark_width + 1
        room = max(1, width - indent)
        out: list[Text] = []
        for first, part in ((self.mark, self.head), (None, self.body)):
            if part is None:
                continue
            for number, line in enumerate(part.wrap(_CONSOLE, room)):
                start = Text()
                if number == 0 and first is not None:
                    mark = first.copy()
                    mark.truncate(mark_width, overflow="crop", pad=True)  # in its style
                    start.append_text(mark)
                start.append(" " * (indent - start.cell_len))  # the gap, plain
                start.append_text(line)
                out.append(start)
        return Text("\n", no_wrap=True, overflow="crop").join(out)

    def renderable(self, mark_width: int = 9) -> Table:
        """Mark, heading and body in a grid: wrapped lines stay under their heading."""
        grid = Table.grid(padding=(0, 1), expand=True)
        grid.add_column(width=mark_width, no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_row(self.mark, self.head)
        if self.body is not None:
            grid.add_row("", self.body)
        return grid
