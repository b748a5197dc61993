"""How a figure, a time or a piece of outside text reads on every screen, written once.

The terminal dashboards (``dashboards/``) and the pages in a browser (``kent-ops
serve``: the deputy's gate view, the inspector's page) show the same numbers the same
way: "3,120", "14:03:05" in the event's zone, a dash for a figure not known yet, amber
within 10% of a limit and red past it. Pure functions of their arguments: nothing here
reads a clock.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kent_ops.core import wire
from kent_ops.core.sensor_kinds import kind_of

__all__ = [
    "FLAG_WORDS",
    "NEAR_FRACTION",
    "NONE_TEXT",
    "SHARE_KEYS",
    "Level",
    "clean",
    "event_zone",
    "figure_phrase",
    "fmt_age",
    "fmt_figure",
    "fmt_int",
    "fmt_share",
    "level",
    "local_clock",
]

NONE_TEXT = "—"
"""What a figure the status does not have yet looks like: a dash, never a blank."""

NEAR_FRACTION = 0.9
"""A figure within 10% of its limit is shown amber: the warning before a breach."""

Level = Literal["ok", "near", "breach"]


def event_zone(status: wire.Status | None) -> tzinfo:
    """The event's time zone from the status (``timezone``), UTC when absent or unknown."""
    return _zone(status.timezone) if status is not None else UTC


_ZONE_NAME = re.compile(r"[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+){0,3}")
"""What an IANA zone name looks like (America/New_York, Etc/GMT+5): anything else from
the wire is not looked up at all (ZoneInfo imports a module named after it)."""


@lru_cache(maxsize=8)
def _zone(name: str) -> tzinfo:
    if not name or len(name) > 64 or not _ZONE_NAME.fullmatch(name):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return UTC


def local_clock(
    moment: datetime | None, zone: tzinfo, *, with_zone: bool = False, seconds: bool = True
) -> str:
    """``14:03:05`` (optionally ``14:03:05 EDT``, or ``14:03``) in the event's zone; a
    dash for None."""
    if moment is None:
        return NONE_TEXT
    local = moment.astimezone(zone)
    text = local.strftime("%H:%M:%S" if seconds else "%H:%M")
    if with_zone:
        text = f"{text} {local.strftime('%Z')}"
    return text


def fmt_int(value: object) -> str:
    """``3,120``; a dash for a missing figure, so a gap never reads as zero."""
    if type(value) is int:  # nearly always: a table of 200 gates asks 600 times a status
        return f"{value:,}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return NONE_TEXT
    return f"{round(value):,}"


def fmt_age(seconds: float | None) -> str:
    """A short age for a human: ``4 s``, ``3 min``, ``2 h 05 min``."""
    if seconds is None:
        return NONE_TEXT
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def level(used: object, limit: object, *, near: float = NEAR_FRACTION) -> Level:
    """How close a demand is to its limit: ``breach`` above it, ``near`` within 10%.

    Works both ways round by choosing what is "used": attendance against the maximum,
    or the nurses *required* against the nurses *on duty* (a minimum is a limit on
    the demand). No demand is never a problem; a missing figure is never coloured.
    """
    if isinstance(used, bool) or isinstance(limit, bool):
        return "ok"
    if not isinstance(used, int | float) or not isinstance(limit, int | float):
        return "ok"
    if used <= 0:
        return "ok"
    if used > limit:
        return "breach"
    if used >= near * limit:
        return "near"
    return "ok"


def clean(value: object, *, limit: int | None = None) -> str:
    """Text that came from outside (a note, a comment, an id) made safe to show.

    Screens put it in plain text objects (Rich's ``Text``, a page's ``textContent``),
    never in markup, so brackets in a note are shown as typed; this removes control and
    format characters (ESC, BEL, bidirectional overrides), which would move the
    cursor, ring or reorder what follows, and turns line breaks and tabs into spaces.
    ``limit`` cuts it to that many characters with an ellipsis, for ids shown in a
    table column or a one-line notice.
    """
    text = value if isinstance(value, str) else str(value)
    if not text.isprintable():
        text = "".join(_printable(ch) for ch in text)
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return text


def _printable(char: str) -> str:
    if char.isprintable():
        return char
    return " " if char.isspace() else ""


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
