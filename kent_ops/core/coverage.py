"""When the permit covers the assembly, and the crowd's time to leave once it stops.

The permit covers an assembly of more than 500 persons while it is issued and the time
is inside a permitted window (permit:A). A crowd cannot vanish at the instant a window
ends or a revocation takes effect, so for ``dispersal_minutes`` after that instant
(the *allowance*) more than 500 persons present is the warning ``dispersing``, not a
breach, as long as nobody is admitted: the aggregate of entries through the perimeter
gates and manual tallies does not rise. From the first admission, or from the end of
the allowance, ``permit-required`` holds again above 500 (docs/law.md, "Dispersal").

A revocation during an allowance does not start a new one (the permit covered nothing
then); a window that opens again ends it. The allowance is found from the windows and
the permit's status changes alone, so a live run, a restart and the report agree; only
the entries at its start, and the first admission, are state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal
from zoneinfo import ZoneInfo

from kent_ops.core.timeutil import from_us

if TYPE_CHECKING:  # the status imports the inspectors, who import the rules, who import this
    from kent_ops.core.permit import PermitStatus

__all__ = [
    "Allowance",
    "CoverEnd",
    "Dispersal",
    "clock_of",
    "cover_end",
    "covered",
    "local_clock",
    "local_iso",
    "why_uncovered",
]

EndedBy = Literal["window", "revocation"]


@dataclass(frozen=True, slots=True)
class CoverEnd:
    """The instant the permit stopped covering the assembly, and what ended it."""

    at: int
    by: EndedBy


@dataclass(frozen=True, slots=True)
class Allowance:
    """The dispersal allowance after one cover end, as it stands at one instant."""

    end: CoverEnd
    until: int
    """The allowance's last instant (exclusive): the cover end plus dispersal_minutes."""
    admitted_at: int | None
    """The first admission after the cover end, while the allowance ran."""
    open: bool
    """Nobody admitted yet and the time is before ``until``: the crowd may still leave."""


def covered(windows: tuple[tuple[int, int], ...], status: PermitStatus, t: int) -> bool:
    """Issued and inside a permitted window at ``t`` (half-open windows)."""
    return status.issued(t) and any(start <= t < end for start, end in windows)


def cover_end(
    windows: tuple[tuple[int, int], ...], status: PermitStatus, t: int
) -> CoverEnd | None:
    """The last instant at or before ``t`` the permit stopped covering, if it covers nothing now.

    None while it covers, and when it never covered before ``t`` (before the first
    window; a permit never issued).
    """
    if covered(windows, status, t):
        return None
    ends: list[tuple[int, EndedBy]] = [(end, "window") for _, end in windows if end <= t]
    ends += [(c.at, "revocation") for c in status.changes if c.at <= t and c.status != "issued"]
    # Latest first; at one instant a window's end is named before a revocation's.
    for at, by in sorted(ends, key=lambda e: (e[0], e[1] == "window"), reverse=True):
        if covered(windows, status, at - 1) and not covered(windows, status, at):
            return CoverEnd(at, by)
    return None


class Dispersal:
    """The allowance the engine is in, if any: its cover end, entries then, first admission.

    :meth:`update` is called at every rule pass (and the engine passes the rules at every
    window end, revocation and allowance end, so the entries are taken at the cover end
    itself when the engine was running then).
    """

    def __init__(self, allowance_us: int) -> None:
        self.allowance_us = allowance_us
        self.end: CoverEnd | None = None
        self.entries_at_end = 0
        self.admitted_at: int | None = None

    def update(self, end: CoverEnd | None, entries: int, t: int) -> int | None:
        """Take the cover end and the entries at ``t``; return an instant to pass the rules at."""
        if end != self.end:
            self.end = end
            self.entries_at_end = entries
            self.admitted_at = None
            if end is not None and end.at + self.allowance_us > t:
                return end.at + self.allowance_us
            return None
        if self.watching_entries(t) and entries > self.entries_at_end:
            self.admitted_at = t
        return None

    def watching_entries(self, t: int) -> bool:
        """In an allowance nobody has ended by an admission: a rise in entries matters now."""
        end = self.end
        return end is not None and self.admitted_at is None and t < end.at + self.allowance_us

    def view(self, t: int) -> Allowance | None:
        """The allowance as it stands at ``t``, or None when no cover end is tracked."""
        end = self.end
        if end is None:
            return None
        until = end.at + self.allowance_us
        return Allowance(end, until, self.admitted_at, self.admitted_at is None and t < until)


def local_clock(us: int, tz: ZoneInfo, *, day_of: int | None = None) -> str:
    """``23:30`` (seconds only when not zero), with the local date when not ``day_of``'s."""
    local = from_us(us).astimezone(tz)
    text = local.strftime("%H:%M:%S" if local.second or local.microsecond else "%H:%M")
    if day_of is not None and from_us(day_of).astimezone(tz).date() != local.date():
        text += f" on {local.date().isoformat()}"
    return text


def local_iso(us: int, tz: ZoneInfo) -> str:
    """The instant in the event's time zone, with its offset, for an alert's figures."""
    return from_us(us).astimezone(tz).isoformat(timespec="seconds")


def why_uncovered(
    windows: tuple[tuple[int, int], ...],
    status: PermitStatus,
    t: int,
    tz: ZoneInfo,
    regulated: bool,
) -> str:
    """Why the permit covers no assembly over 500 at ``t``, as a deputy is told."""
    if not regulated:
        return "a permit for 500 or fewer persons covers no assembly over 500"
    end = cover_end(windows, status, t)
    if end is not None:
        what = "the permit was revoked" if end.by == "revocation" else "the permitted hours ended"
        return f"{what} at {local_clock(end.at, tz, day_of=t)}"
    state, change = status.state(t)
    if state != "issued":
        if change is not None:
            return f"the permit was revoked at {local_clock(change.at, tz, day_of=t)}"
        return f"the permit is {state}, not issued"
    later = [start for start, _ in windows if start > t]
    if later:
        return f"the permitted hours begin at {local_clock(min(later), tz, day_of=t)}"
    return "outside the permitted hours"


def clock_of(iso_text: str) -> str:
    """An alert figure's local ISO instant as ``23:30`` (``23:30:15`` with seconds).

    Figures carry the instant in the event's time zone (:func:`local_iso`), so the
    sentence written from them needs no zone of its own.
    """
    local = datetime.fromisoformat(iso_text)
    return local.strftime("%H:%M:%S" if local.second or local.microsecond else "%H:%M")
