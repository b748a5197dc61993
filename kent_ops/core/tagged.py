"""Text as every screen draws it: pieces of text, each with a tag saying how it reads.

The views the core makes for screens (the deputy's gate view, the inspector's page and
the panels of the terminal's dashboard) say *what* is shown and *how it reads*
(strong, dim, good, a warning, an alarm, a citation) but not in which colours: a
terminal maps each tag to a Rich style, a page to a CSS class. So a figure that is red
past its limit on a laptop is red on a phone, decided once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["TAGS", "Line", "Span", "Tag", "line_data", "plain"]

Tag = Literal[
    "",
    "strong",
    "dim",
    "italic",
    "good",
    "warn",
    "alarm",
    "chip",
    "chip-near",
    "chip-breach",
    "cite",
    "caution",
    "caution-italic",
    "data",
    "dim-italic",
    "alarm-italic",
    "alarm-soft",
    "good-strong",
    "banner",
]
"""How a span reads: plain, strong, dim, italic; good (green), warn (amber, bold), alarm
(red, bold); a figure drawn on a sign as a chip (plain, near its limit, past it); a
citation; caution (amber, not bold; in italics: a condition pending); data (a
data-quality mark); dim and italic (an unused tally); alarm in italics (a manual tally
down); a red note (what an inspector found deficient); good and strong (a verdict); a
banner (white on red: the permit is not issued)."""

TAGS: tuple[Tag, ...] = get_args(Tag)
"""Every tag, for a screen that maps each (a test checks that none is missing)."""


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of text and how it reads."""

    text: str
    tag: Tag = ""


Line = tuple[Span, ...]


def line_data(line: Line) -> list[list[str]]:
    """A line as JSON-ready data: a list of ``[text, tag]`` pairs."""
    return [[span.text, span.tag] for span in line]


def plain(line: Line) -> str:
    """A line's text without its tags (a test, a log line)."""
    return "".join(span.text for span in line)
