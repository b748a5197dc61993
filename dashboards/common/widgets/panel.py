"""Panels: redrawn in place, and only when they changed.

:class:`Panel` shows a panel function's renderable in a box of a fixed size;
:class:`FittedPanel` draws its panel function's lines at whatever width the box has
(a terminal, a tablet, a phone) and is as tall as they are.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.geometry import Region, Size
from textual.widget import Widget
from textual.widgets import Static

from dashboards.common.rows import text_signature

__all__ = ["FittedPanel", "Panel", "set_border_title"]


def set_border_title(widget: Widget, title: str) -> None:
    """Set a border title only when it changes: setting one repaints the whole widget
    (a table of 200 gates, the alert list) even when the words are the same."""
    if getattr(widget, "_title_shown", None) != title:
        widget._title_shown = title  # type: ignore[attr-defined]
        widget.border_title = title


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


def _line_count(text: Text) -> int:
    return text.plain.count("\n") + 1


def _lines(text: Text) -> list[tuple[object, ...]]:
    """Each line's look (its characters and styles), to tell which lines changed."""
    return [text_signature(line) for line in text.split("\n", allow_blank=True)]


class FittedPanel(Widget):
    """A panel drawn by a pure function of its inputs and a width, as tall as its lines.

    Subclasses say how in :meth:`draw` and call :meth:`redraw` when an input changes.
    Textual asks for the lines at layout time (``get_content_height``) and at render
    time, at the width the box has, so the first layout is right at any screen size
    and a resize needs nothing from the subclass. A redraw that gives the same text
    draws nothing; one with as many lines repaints the panel alone; only a change in
    the number of lines lays the screen out again.
    """

    DEFAULT_CSS = """
    FittedPanel {
        height: auto;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._texts: dict[int, Text] = {}
        """The lines drawn at each width asked for since the inputs last changed."""

    def draw(self, width: int) -> Text:
        """The panel's lines at ``width`` cells (each line no wider): each panel's own
        (a Textual widget cannot also be an ``ABC``, so a panel without it fails here)."""
        raise NotImplementedError(f"{type(self).__name__} does not say how it draws")

    def fitted(self, width: int) -> Text:
        """The lines at ``width``, drawn once per change of the inputs."""
        text = self._texts.get(width)
        if text is None:
            if len(self._texts) >= 4:  # a window being dragged wider: keep a few
                self._texts.clear()
            text = self._texts[width] = self.draw(max(1, width))
        return text

    @property
    def content(self) -> Text:
        """What the panel shows now (at 80 cells before its first layout)."""
        return self.fitted(self.content_size.width or 80)

    def redraw(self) -> None:
        """The inputs changed: draw again, and lay out again only if the height changed.

        Only the lines that changed are repainted: each line repainted costs Textual its
        styles and the compositor its work, a dozen lines per panel ten times a second.
        """
        width = self.content_size.width
        old = self._texts.get(width)
        self._texts.clear()
        if width <= 0 or old is None:
            self.refresh(layout=True)
            return
        new = self.fitted(width)
        before, after = _lines(old), _lines(new)
        if len(before) != len(after):
            self.refresh(layout=True)
            return
        changed = [y for y, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        if changed:
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return _line_count(self.fitted(width))

    def render(self) -> Text:
        return self.fitted(self.content_size.width)
