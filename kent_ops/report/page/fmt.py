"""How the page writes times, durations, figures and tables, the same way in every section.

Times are local, in the event's zone, to the second; the zone is stated once at the top
of the page (:meth:`Fmt.zone_line`), so a line carries no offset, except a time in the
hour a daylight-saving change repeats, which names its abbreviation (01:30:00 EDT,
01:30:00 EST). Every text that came from the log is HTML-escaped here or by the section
that shows it.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from html import escape
from typing import Any
from zoneinfo import ZoneInfo

__all__ = ["Fmt", "cites", "count", "duration", "figures", "table"]

_HOUR = timedelta(hours=1)
_LONGEST_SPAN = timedelta(days=400)


def _offset(value: timedelta | None) -> str:
    minutes = int((value or timedelta()).total_seconds() // 60)
    sign = "+" if minutes >= 0 else "−"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{rest:02d}"


class Fmt:
    """Formats times for the page, in the event's zone."""

    def __init__(self, tz: ZoneInfo) -> None:
        self.tz = tz

    def _local(self, value: datetime) -> tuple[datetime, str]:
        """The local time, and its zone abbreviation if the wall time alone is ambiguous."""
        local = value.astimezone(self.tz)
        other = local.replace(fold=1 - local.fold)
        suffix = f" {local.tzname()}" if other.utcoffset() != local.utcoffset() else ""
        return local, suffix

    def when(self, value: datetime | None) -> str:
        """``2027-07-04 10:02:00``: local, to the second."""
        if value is None:
            return "—"
        local, suffix = self._local(value)
        return f"{local:%Y-%m-%d %H:%M:%S}{suffix}"

    def cell(self, value: datetime | None) -> str:
        """:meth:`when` for a narrow table cell, escaped: the date and time each unbroken."""
        text = self.when(value)
        day, sep, rest = text.partition(" ")
        if not sep:
            return escape(text)
        return f"<span class='nobr'>{escape(day)}</span> <span class='nobr'>{escape(rest)}</span>"

    def action(self, made: datetime | None, recorded: datetime) -> str:
        """An inspector's action: when it was made (its own ``ts``), then when it was
        recorded (the engine's time, which the findings use) where the two differ by a
        second or more: ``2027-07-04 10:41:02 (recorded 10:42:02)``."""
        if made is None or abs((recorded - made).total_seconds()) < 1:
            return self.when(recorded)
        again = self.when(recorded)
        if self.when(made)[:10] == again[:10]:
            again = self.clock(recorded)
        return f"{self.when(made)} (recorded {again})"

    def stamped(self, value: datetime | None) -> str:
        """``2026-12-01 17:12:12 UTC−05:00``: a local time with its offset, for a line
        whose time may fall outside the zone line's span (a receive clock's)."""
        if value is None:
            return "—"
        local = value.astimezone(self.tz)
        return f"{local:%Y-%m-%d %H:%M:%S} {_offset(local.utcoffset())}"

    def clock(self, value: datetime) -> str:
        """``10:02:00``: the local time of day, for a line that already names the day."""
        local, suffix = self._local(value)
        return f"{local:%H:%M:%S}{suffix}"

    def day(self, value: datetime) -> str:
        """``Sunday 4 July 2027, 10:00``: a window or an instant, as a person reads it."""
        local, suffix = self._local(value)
        return f"{local:%A %-d %B %Y, %H:%M}{suffix}"

    @staticmethod
    def date(value: date) -> str:
        """``Sunday 4 July 2027``."""
        return f"{value:%A %-d %B %Y}"

    def midnight_ending(self, value: datetime) -> str:
        """A deadline at local midnight: ``the end of Friday 9 July 2027 (midnight)``."""
        local = value.astimezone(self.tz)
        before = (local - timedelta(days=1)).date()
        if local.hour == 0 and local.minute == 0 and local.second == 0:
            return f"the end of {self.date(before)} (midnight)"
        return self.day(value)

    def zone_line(self, start: datetime | None, end: datetime | None) -> str:
        """The zone, stated once, with any daylight-saving change between the two instants."""
        if start is None or end is None:
            return f"All times are local time in {self.tz.key}."
        start, end = min(start, end), max(start, end)
        end = min(end, start + _LONGEST_SPAN)
        first = start.astimezone(self.tz)
        offset = first.utcoffset()
        names = [first.tzname() or ""]
        repeated = False
        parts = [f"{first.tzname()} ({_offset(offset)})"]
        at = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0) + _HOUR
        while at <= end:
            local = at.astimezone(self.tz)
            if local.utcoffset() != offset:
                before = (at - _HOUR).astimezone(self.tz)
                was = before.replace(tzinfo=None) + _HOUR  # the old wall clock at the change
                if offset is not None and (local.utcoffset() or offset) < offset:
                    repeated = True
                offset = local.utcoffset()
                names.append(local.tzname() or "")
                parts.append(
                    f"then {local.tzname()} ({_offset(offset)}) from {was:%H:%M} "
                    f"{before.tzname()} on {was:%A %-d %B %Y}, when the clocks changed to "
                    f"{local:%H:%M}"
                )
            at += _HOUR
        line = f"All times are local time in {self.tz.key}: {', '.join(parts)}."
        if repeated:
            zones = " or ".join(dict.fromkeys(names))
            line += f" A time in an hour that the change repeats names its zone ({zones})."
        return line


def duration(seconds: float) -> str:
    """``2 h 05 min 03 s``: a duration a board member reads at a glance, to the second."""
    if 0 < seconds < 0.5:
        return "under 1 s"
    whole = round(seconds)
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
    parts.append(f"{secs:02d} s" if parts else f"{secs} s")
    return " ".join(parts)


def cites(cite: str) -> str:
    """A finding's citations, escaped, each kept on one line (``permit:C(1)(h)`` never
    breaks inside); ``—`` for none."""
    parts = [p.strip() for p in cite.split(",") if p.strip()]
    last = len(parts) - 1
    return (
        " ".join(
            f"<span class='nobr'>{escape(p)}{',' if i < last else ''}</span>"
            for i, p in enumerate(parts)
        )
        or "—"
    )


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
    if isinstance(value, dict):  # the persons on each property
        return ", ".join(f"{k} {_figure(k, v)}" for k, v in value.items())
    if isinstance(value, str) and _ISO_LOCAL.fullmatch(value):
        # An instant in the event's zone, as the engine writes it: the day and the time.
        return value[:10] + " " + value[11:19]
    return str(value)


_ISO_LOCAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d")
"""An alert figure's instant (``2027-07-04T23:30:00-04:00``): already in the event's zone."""


def figures(values: dict[str, Any]) -> str:
    """``attendance 4,212; inside window yes``: a figure dict in words, escaped."""
    out = [f"{key.replace('_', ' ')} {_figure(key, value)}" for key, value in values.items()]
    return escape("; ".join(out)) if out else "—"


def table(
    head: list[str],
    rows: list[str],
    numeric: set[int] | None = None,
    *,
    widths: list[int] | None = None,
) -> str:
    """A table with ``head`` over ready-made ``<tr>`` rows; ``numeric`` columns right-aligned.

    ``widths`` (percentages, one a column) fix the columns' widths, so a printed page
    gives room where the words are, not where a heading is long.
    """
    numeric = numeric or set()
    cells = "".join(
        f'<th class="num">{escape(h)}</th>' if i in numeric else f"<th>{escape(h)}</th>"
        for i, h in enumerate(head)
    )
    if widths is None:
        return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    if len(widths) != len(head) or sum(widths) != 100:
        raise ValueError(f"widths {widths} must give each of the {len(head)} columns, in all 100")
    cols = "".join(f'<col style="width:{w}%">' for w in widths)
    return (
        f'<table class="fixed"><colgroup>{cols}</colgroup><thead><tr>{cells}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
