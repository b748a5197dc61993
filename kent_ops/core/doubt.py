"""When each figure was in doubt, and why: the record behind "indeterminate".

The engine notes, at every rule pass, which figures (attendance, staff, vehicles) rest
on a sensor in doubt (offline, silent…) or on a clamp at 0 (core/basis.py), and keeps
each such stretch with its reason. The report reads them back: a minute of the
timeline whose figures rest on one is marked ``uncertain``, and a report that finds no
breach says how long the figures were indeterminate (docs/law.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from kent_ops.core import wire
from kent_ops.core.basis import Doubts
from kent_ops.core.counting import Counting
from kent_ops.core.coverage import local_clock
from kent_ops.core.timeutil import to_us

__all__ = ["DoubtSpan", "DoubtTrack", "doubts_now"]


def doubts_now(counts: Counting, adjustments: Sequence[wire.Adjustment], tz: ZoneInfo) -> Doubts:
    """The figures in doubt now, and the adjustment attendance rests on (core/basis.py)."""
    lots = tuple(
        (lot, why) for lot in counts.lots if (why := counts.sensors[lot].doubt) is not None
    )
    adjustment = None
    if counts.offset and adjustments:
        last = adjustments[-1]
        when = local_clock(to_us(last.at), tz) if last.at is not None else "?"
        adjustment = (
            f"the adjustment by {last.by} at {when} to {last.attendance:,} persons ({last.reason})"
        )
    return Doubts(
        attendance=counts.doubts("attendance"),
        staff=counts.doubts("staff"),
        vehicles=counts.doubts("vehicles"),
        lots=tuple((lot, f"lot {lot} {why}") for lot, why in lots),
        adjustment=adjustment,
    )


@dataclass(slots=True)
class DoubtSpan:
    """One figure in doubt for one reason, ``[start, end)`` (end None while it lasts)."""

    figure: str
    why: str
    start: int
    end: int | None = None


@dataclass(slots=True)
class DoubtTrack:
    """Every doubt span so far, and the ones open now (by ``figure|why``, an index)."""

    spans: list[DoubtSpan] = field(default_factory=list)
    open: dict[str, int] = field(default_factory=dict)

    def update(self, t: int, doubts: Doubts) -> None:
        """Take the doubts at ``t``: end the spans no longer in doubt, open the new ones."""
        now = {f"attendance|{w}" for w in doubts.attendance}
        now.update(f"staff|{w}" for w in doubts.staff)
        now.update(f"vehicles|{w}" for w in doubts.vehicles)
        if not now and not self.open:
            return
        for key in [k for k in self.open if k not in now]:
            self.spans[self.open.pop(key)].end = t
        for key in sorted(now):
            if key not in self.open:
                figure, _, why = key.partition("|")
                self.open[key] = len(self.spans)
                self.spans.append(DoubtSpan(figure, why, t))
