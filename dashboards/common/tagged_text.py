"""The core's tagged text (:mod:`kent_ops.core.tagged`) as Rich text: a style per tag.

The views the core makes for every screen say how each piece of text reads (strong, a
warning, an alarm, a citation); a terminal draws them with these styles, a page in a
browser with its CSS classes. Only here does a tag become a colour on a terminal.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from kent_ops.core.tagged import Span, Tag

__all__ = ["TAG_STYLES", "line_text", "span_text"]

TAG_STYLES: dict[Tag, str] = {
    "": "",
    "strong": "bold",
    "dim": "dim",
    "italic": "italic",
    "good": "green",
    "warn": "bold dark_orange",
    "alarm": "bold red",
    "chip": "bold",
    "chip-near": "bold black on yellow",
    "chip-breach": "bold white on black",
    "cite": "cyan",
    "caution": "dark_orange",
    "caution-italic": "italic dark_orange",
    "data": "bold cyan",
    "dim-italic": "dim italic",
    "alarm-italic": "bold red italic",
    "alarm-soft": "red",
    "good-strong": "bold green",
    "banner": "bold white on red",
}
"""Each tag of the core's views as a Rich style."""


def span_text(span: Span) -> Text:
    """One span as a Text in its style."""
    return Text(span.text, style=TAG_STYLES[span.tag])


def line_text(line: Iterable[Span], text: Text | None = None) -> Text:
    """A line's spans appended to ``text`` (a new, plain Text by default), each in its style."""
    out = text if text is not None else Text()
    for span in line:
        out.append(span.text, style=TAG_STYLES[span.tag])
    return out
