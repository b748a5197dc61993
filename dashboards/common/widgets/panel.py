"""A Static for panels of a fixed size: redrawn in place, and only when it changed."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.widgets import Static

from dashboards.common.rows import text_signature

__all__ = ["Panel"]


class Panel(Static):
    """Shows a panel function's output without asking for a new layout.

    ``Static.update`` re-lays the whole screen by default; at ten statuses a second
    that was most of the cost of a redraw. A panel's height is fixed by the app's
    stylesheet, so only its own lines need drawing, and identical text is skipped.
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._shown: RenderableType | None = None

    def show(self, renderable: RenderableType) -> None:
        """Draw ``renderable`` unless it is the same text as already shown."""
        if (
            isinstance(renderable, Text)
            and isinstance(self._shown, Text)
            and text_signature(renderable) == text_signature(self._shown)
        ):
            return
        self._shown = renderable
        self.update(renderable, layout=False)
