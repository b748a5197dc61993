"""The instants the engine must visit: rule passes and sensor silences, in time order.

Time-driven transitions (a pending breach maturing, a window opening, midnight, a
revocation taking effect, a silent sensor going stale) happen at exact deadlines, not
whenever the caller happened to tick; so a live run and its replay agree to the
microsecond. This is only the queue; the engine decides what each deadline means.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

__all__ = ["Deadlines"]

_STALE = 0
_EVAL = 1


class Deadlines:
    """A min-heap of (instant, what) with one pending staleness check per sensor."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, str]] = []
        self._stale: set[str] = set()

    def evaluate_at(self, t: int) -> None:
        """Pass the rules again at ``t``."""
        heapq.heappush(self._heap, (t, _EVAL, ""))

    def stale_at(self, sensor: str, t: int) -> None:
        """Check at ``t`` whether ``sensor`` has gone silent."""
        self._stale.add(sensor)
        heapq.heappush(self._heap, (t, _STALE, sensor))

    def watching(self, sensor: str) -> bool:
        """A staleness check is already queued for ``sensor``."""
        return sensor in self._stale

    def due_by(self, t: int) -> bool:
        """Something is due at or before ``t``."""
        return bool(self._heap) and self._heap[0][0] <= t

    def pop_until(self, t: int) -> Iterator[tuple[int, bool, list[str]]]:
        """Each instant due by ``t``, in order: (instant, a rule pass is due, stale checks)."""
        heap = self._heap
        while heap and heap[0][0] <= t:
            d = heap[0][0]
            evaluate = False
            sensors: list[str] = []
            while heap and heap[0][0] == d:
                _, kind, sensor = heapq.heappop(heap)
                if kind == _STALE:
                    self._stale.discard(sensor)
                    sensors.append(sensor)
                else:
                    evaluate = True
            yield d, evaluate, sensors
