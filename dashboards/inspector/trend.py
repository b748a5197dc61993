"""The last hour of attendance, kept from the statuses the dashboard has received.

View state only: the aggregator does not publish a history, and the dashboard keeps
no counts, so this is just what this screen has seen (a fresh dashboard starts with
an empty line). One point a second at most, the highest, so an hour is 3,600 points
whatever the status rate.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime

from kent_ops.core import wire

__all__ = ["AttendanceTrend"]


class AttendanceTrend:
    """(epoch second, attendance) points over a sliding window ending at the newest."""

    def __init__(self, window_s: float = 3600.0) -> None:
        self.window_s = window_s
        self._points: deque[tuple[float, int]] = deque()

    def add(self, moment: datetime, attendance: int) -> bool:
        """Record one figure; True if the line changed. Older-than-newest figures are ignored."""
        second = float(int(moment.timestamp()))
        if self._points:
            last_t, last_v = self._points[-1]
            if second < last_t:
                return False
            if second == last_t:
                if attendance <= last_v:
                    return False
                self._points[-1] = (second, attendance)
                return True
        self._points.append((second, attendance))
        horizon = second - self.window_s
        while self._points and self._points[0][0] < horizon:
            self._points.popleft()
        return True

    def add_status(self, status: wire.Status) -> bool:
        """Record the attendance of one status snapshot (by its ``ts``)."""
        if status.ts is None:
            return False
        return self.add(status.ts, status.attendance.current)

    @property
    def newest(self) -> float | None:
        """The second of the newest point; None before the first."""
        return self._points[-1][0] if self._points else None

    def points(self) -> tuple[tuple[float, int], ...]:
        return tuple(self._points)

    def __len__(self) -> int:
        return len(self._points)
