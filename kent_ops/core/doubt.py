"""When each figure was in doubt, and why: the record behind "indeterminate".

The engine notes, at every rule pass, which figures (attendance, staff, vehicles) rest
on a sensor in doubt (offline, silent…) or on a clamp at 0 (core/basis.py), and keeps
each such stretch with its reason. The report reads them back: a minute of the
timeline whose figures rest on one is marked ``uncertain``, and a report that finds no
breach says how long the figures were indeterminate (docs/law.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kent_ops.core.basis import Doubts

__all__ = ["DoubtSpan", "DoubtTrack"]


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
