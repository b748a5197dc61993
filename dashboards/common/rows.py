"""Table rows as plain data: what a panel function returns and a table widget shows.

A panel builds rows from a status snapshot; the widget only diffs them against what
it already shows. Keeping the two apart is what lets 200 gates update ten times a
second (only changed cells are touched) and the panels be tested without Textual.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

__all__ = ["Column", "Row", "cell", "num_cell"]


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its key, its heading and, for a fixed layout, its width."""

    key: str
    label: str
    width: int | None = None
    numeric: bool = False


@dataclass(frozen=True, slots=True)
class Row:
    """One row: a stable key (the gate, the lot, the alert id) and its cells, in order."""

    key: str
    cells: tuple[Text, ...]


def cell(text: str | Text, style: str = "") -> Text:
    """A left-aligned cell, with the one space that separates it from the one before.

    Tables are drawn without cell padding (two columns' worth of padding is what
    pushed the last gate column off an 80-column screen); each cell brings its own gap.
    """
    body = Text(text, style=style) if isinstance(text, str) else text
    out = Text(" ", no_wrap=True, overflow="ellipsis")
    out.append_text(body)
    return out


def num_cell(text: str, style: str = "") -> Text:
    """A right-aligned cell, for figures, with its leading gap."""
    return Text(f" {text}", style=style, justify="right", no_wrap=True)
