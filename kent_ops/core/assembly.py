"""When the assembly is on: the law's duties bind the assembly, not the set-up crew.

The assembly is **on** while persons are present inside a permitted window, or while
more than 500 are present at any time (an assembly that runs past its hours, or one
without a permit, is still an assembly). The duties of permit:C that hold "at all
times" (doctors, nurses, parking) and housing past midnight hold only while it is on
(docs/law.md, "The assembly's edges"); housing only from a midnight that fell inside a
permitted window (docs/law.md, "Housing only where contemplated").
"""

from __future__ import annotations

from collections.abc import Callable
from zoneinfo import ZoneInfo

from kent_ops.core.ordinance import PERMIT_THRESHOLD
from kent_ops.core.permit import local_midnight_after
from kent_ops.core.timeutil import from_us, to_us

__all__ = ["AssemblyTrack", "assembly_on"]


def assembly_on(attendance: int, inside: bool, regulated: bool = True) -> bool:
    """Persons present inside a permitted window, or more than 500 at any time.

    Never for a permit of 500 or fewer: the chapter regulates no such assembly, and
    none of its duties binds it (docs/law.md, "What the chapter regulates").
    """
    return regulated and (attendance > PERMIT_THRESHOLD or (inside and attendance > 0))


def assembly_edge(inside: bool) -> int:
    """The attendance above which the assembly is on (it is on iff attendance > this)."""
    return 0 if inside else PERMIT_THRESHOLD


class AssemblyTrack:
    """When the assembly went on and off, and the midnight it must have housing past.

    ``spans`` lists each stretch it was on as ``[start, end]`` (microseconds; ``end``
    None while it is on), so the report can say when it ended (permit:F counts the
    clean-up days from there).
    """

    def __init__(self, tz: ZoneInfo) -> None:
        self.tz = tz
        self.on_since: int | None = None
        self.overnight_from: int | None = None
        """While it is on: the next local midnight it may be on across, until one passes
        inside a permitted window, then that one (the night housing binds from)."""
        self.spans: list[list[int | None]] = []

    @property
    def on(self) -> bool:
        return self.on_since is not None

    def update(self, on: bool, t: int, inside_at: Callable[[int], bool]) -> int | None:
        """Take the assembly's state at ``t``; return a midnight to look again at, if any.

        ``inside_at`` says whether an instant lies inside a permitted window: a midnight
        that passed outside every window (the crowd dispersing, an overrun) is passed
        over, and the next one watched instead.
        """
        if on and self.on_since is None:
            self.on_since = t
            self.spans.append([t, None])
            midnight = self._after(t)
            self.overnight_from = midnight
            return midnight
        if not on and self.on_since is not None:
            self.on_since = None
            self.overnight_from = None
            self.spans[-1][1] = t
            return None
        watched = self.overnight_from
        if watched is None or watched > t or inside_at(watched):
            return None
        midnight = watched
        while midnight <= t and not inside_at(midnight):
            midnight = self._after(midnight)
        self.overnight_from = midnight
        return midnight if midnight > t else None

    def _after(self, t: int) -> int:
        return to_us(local_midnight_after(from_us(t), self.tz))

    @property
    def last_on(self) -> int | None:
        """The last instant it was on: its last span's end (None while on or never on)."""
        if not self.spans or self.spans[-1][1] is None:
            return None
        return self.spans[-1][1]
