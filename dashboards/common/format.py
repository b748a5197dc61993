"""Formatting shared by both dashboards: numbers, times in the event's zone, limit colours.

Every figure on screen goes through here, so "3,120", "14:03:05" and the red/amber
convention read the same on the inspector's laptop and the deputy's tablet. Pure
functions only: nothing here knows about Textual. The ones the deputy's page in a
browser needs too live in the core (:mod:`kent_ops.core.display`) and are re-exported
here, so both kinds of screen format alike.
"""

from __future__ import annotations

from datetime import datetime

from kent_ops.core.display import (
    NEAR_FRACTION,
    NONE_TEXT,
    Level,
    clean,
    event_zone,
    fmt_age,
    fmt_int,
    level,
    local_clock,
)
from kent_ops.core.sensor_kinds import kind_of

__all__ = [
    "LEVEL_STYLE",
    "NEAR_FRACTION",
    "NONE_TEXT",
    "Level",
    "clean",
    "event_zone",
    "fmt_age",
    "fmt_figure",
    "fmt_int",
    "fmt_share",
    "level",
    "local_clock",
    "parse_ts",
]

LEVEL_STYLE: dict[str, str] = {
    "ok": "",
    "near": "bold dark_orange",
    "breach": "bold red",
}
"""Rich styles for each level: breach red, near its limit amber, otherwise plain."""


def parse_ts(value: object) -> datetime | None:
    """An ISO 8601 string with an offset (or ``Z``) as an aware datetime; None if not one."""
    if not isinstance(value, str) or not value:
        return None
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment


def fmt_share(value: object) -> str:
    """A fraction as a whole percentage (``0.92`` → ``92%``); a dash if absent."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return NONE_TEXT
    return f"{value * 100:.0f}%"


SHARE_KEYS = ("share", "share_below")
"""Figure names that hold a fraction: a lot's share full and the share it must stay below."""


def fmt_figure(key: str, value: object) -> str:
    """One of a rule's figures as a person reads it: a share as ``95%``, a count as
    ``3,120``, anything else as plain text (it came from the aggregator: see :func:`clean`)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and key.endswith(SHARE_KEYS):
        return fmt_share(value)
    if number:
        return fmt_int(value)
    return clean(value)


FLAG_WORDS: dict[str, tuple[str, str]] = {
    "available": ("last said online", "said it is offline"),
    "stale": ("silent past its heartbeat", "heard on time"),
    "online": ("online", "offline"),
    "assembly_on": ("the assembly on", "the assembly over"),
    "within_rounding": ("within the rounding of the law's ratio", "beyond rounding"),
}
"""How a rule's yes-or-no figure reads (true, false): never ``stale True``."""


def figure_phrase(key: str, value: object) -> str:
    """One figure of an alert as words: ``attendance 3,120``, ``share full 98%``,
    ``a gate sensor``, ``silent past its heartbeat``, ``no availability message``."""
    if key == "kind" and isinstance(value, str):
        try:
            return f"a {kind_of(value).noun} sensor"
        except KeyError:
            return f"a {clean(value)} sensor"
    words = FLAG_WORDS.get(key)
    if words is not None and isinstance(value, bool):
        return words[0] if value else words[1]
    if key == "available" and value is None:
        return "no availability message"
    return f"{clean(key).replace('_', ' ')} {fmt_figure(key, value)}"
