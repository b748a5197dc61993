"""Formatting shared by both dashboards: numbers, times in the event's zone, limit colours.

Every figure on screen goes through here, so "3,120", "14:03:05" and the red/amber
convention read the same on the inspector's laptop and the deputy's tablet. Pure
functions only: nothing here knows about Textual. The ones the pages in a browser
need too (the deputy's gate view, the inspector's page) live in the core
(:mod:`kent_ops.core.display`) and are re-exported here, so every screen formats alike.
"""

from __future__ import annotations

from datetime import datetime

from kent_ops.core.display import (
    FLAG_WORDS,
    NEAR_FRACTION,
    NONE_TEXT,
    SHARE_KEYS,
    Level,
    clean,
    event_zone,
    figure_phrase,
    fmt_age,
    fmt_figure,
    fmt_int,
    fmt_share,
    level,
    local_clock,
)

__all__ = [
    "FLAG_WORDS",
    "LEVEL_STYLE",
    "NEAR_FRACTION",
    "NONE_TEXT",
    "SHARE_KEYS",
    "Level",
    "clean",
    "event_zone",
    "fmt_age",
    "fmt_figure",
    "figure_phrase",
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
