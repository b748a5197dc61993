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

from rich.text import Text

__all__ = ["Cell", "Column", "Item", "Row", "cell"]


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
    """One entry of a list (an alert): a stable key and the text it shows."""

    key: str
    text: Text
