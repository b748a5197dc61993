"""A notice at the foot of the main screen: whole when it fits the width, else its first line.

The demo uses it to show its broker and the commands that attach a gate view or another
dashboard. Commands are for copying, so a line is never wrapped or cut: a terminal too
narrow for them shows the first line only (which points to the help screen, where the
commands wrap).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

__all__ = ["NoticeBar", "fitting_lines"]


def fitting_lines(lines: Sequence[str], width: int) -> list[str]:
    """All of ``lines`` if every one fits in ``width`` cells, else the first alone."""
    if all(cell_len(line) <= width for line in lines):
        return list(lines)
    return list(lines[:1])


class NoticeBar(Widget):
    """Lines of text, all of them or the first; hidden when there are none."""

    DEFAULT_CSS = """
    NoticeBar {
        height: auto;
        padding: 0 1;
    }
    """

    def __init__(self, lines: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines = tuple(lines)
        self.display = bool(self.lines)

    def show(self, lines: Sequence[str]) -> None:
        """Show ``lines`` instead (the demo adds one when its simulated day is over)."""
        self.lines = tuple(lines)
        self.display = bool(self.lines)
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(fitting_lines(self.lines, width))

    def render(self) -> Text:
        shown = fitting_lines(self.lines, self.content_region.width)
        text = Text(no_wrap=True, overflow="ellipsis")
        for index, line in enumerate(shown):
            if index:
                text.append("\n")
            text.append(line, style="bold" if index == 0 else "")
        return text
