"""How the page writes times, durations, figures and tables, the same way in every section.

Times are shown in the event's zone with their offset (the log keeps UTC); every text
that came from the log is HTML-escaped here or by the section that shows it.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

__all__ = ["Fmt", "count", "duration", "figures", "table"]


class Fmt:
    """Formats times for the page, in the event's zone."""

    def __init__(self, tz: ZoneInfo) -> None:
        self.tz = tz

    def when(self, value: datetime | None) -> str:
        """``2027-07-04 10:02:00-04:00`` (milliseconds only when there are any)."""
        if value is None:
            return "—"
        local = value.astimezone(self.tz)
        spec = "seconds" if local.microsecond == 0 else "milliseconds"
        return local.isoformat(sep=" ", timespec=spec)

    def day(self, value: datetime) -> str:
        """``Sunday 4 July 2027, 10:00 EDT``: a deadline or a window, as a person reads it."""
        local = value.astimezone(self.tz)
        return f"{local:%A %-d %B %Y, %H:%M} {local.tzname()}"


def duration(seconds: float) -> str:
    """``2 h 05 min 03 s``: a duration a board member reads at a glance."""
    whole = round(seconds)
    if abs(seconds - whole) > 0.0005:
        frac = f"{seconds - int(seconds):.3f}"[1:]
        whole = int(seconds)
    else:
        frac = ""
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = []
    if days:
        parts.append(f"{days} d")
    if days or hours:
        parts.append(f"{hours} h")
    if days or hours or minutes:
        parts.append(f"{minutes:02d} min" if (days or hours) else f"{minutes} min")
    parts.append(f"{secs:02d}{frac} s" if parts else f"{secs}{frac} s")
    return " ".join(parts)


def count(n: int, noun: str) -> str:
    """``1 warning``, ``3 warnings``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _figure(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float) and key.startswith("share"):
        return f"{value:.0%}"
    if isinstance(value, float):
        return f"{value:,.3g}"
    if value is None:
        return "—"
    return str(value)


def figures(values: dict[str, Any]) -> str:
    """``attendance 4,212; inside window yes``: a figure dict in words, escaped."""
    out = [f"{key.replace('_', ' ')} {_figure(key, value)}" for key, value in values.items()]
    return escape("; ".join(out)) if out else "—"


def table(head: list[str], rows: list[str], numeric: set[int] | None = None) -> str:
    """A table with ``head`` over ready-made ``<tr>`` rows; ``numeric`` columns right-aligned."""
    numeric = numeric or set()
    cells = "".join(
        f'<th class="num">{escape(h)}</th>' if i in numeric else f"<th>{escape(h)}</th>"
        for i, h in enumerate(head)
    )
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
