"""Attendance inside its band: when a gate's reading need not pass the rules at once.

The engine passes every rule after every message, and a festival's gates send
thousands a minute. Every attendance rule flips where attendance crosses a fixed figure
(500, the permitted maximum, a nurse or car-space boundary, ``hold_at``…); between the
two such figures around the attendance now (its band, :func:`~kent_ops.core.rules.
attendance_band`) nothing but the numbers change. So a message that moved attendance
alone, within its band, leaves the rules as they were (:meth:`AttendanceBand.defers`),
and the highest attendance reached meanwhile (the stretch's peak, with its instant) is
kept, to be offered to the alerts' worst figures when the rules next pass or someone
looks (:meth:`AttendanceBand.fold`): an alert's worst figure stays exact.

This is the engine's state for it (a part of the engine's snapshot,
:mod:`kent_ops.core.snapshot`) and its decisions; what held at the peak is the engine's
to say (``conditions_at``).
"""

from __future__ import annotations

from collections.abc import Callable

from kent_ops.core.alerts import AlertBook
from kent_ops.core.counting import Counting
from kent_ops.core.coverage import Dispersal
from kent_ops.core.rules import Condition

__all__ = ["AttendanceBand", "ConditionsAt"]

Key = tuple[str, str | None]
ConditionsAt = Callable[[int, int, dict[str, int] | None], dict[Key, Condition]]
"""What held at an attendance, an instant and (for an assembly over several properties)
the persons on each property then: ``(attendance, t, split) -> {(rule, subject): …}``."""


class AttendanceBand:
    """Where attendance may move without the rules passing, and the peak meanwhile."""

    def __init__(self) -> None:
        self.counts_only = False
        """The message being fed moved attendance alone (no clock skew, no stale sensor)."""
        self.limits: tuple[int, int] | None = None
        """The band after the last evaluation (None: none yet, every message passes)."""
        self.over_collective = False
        """Entries were over the collective maximum at the last evaluation."""
        self.stretch_peak: int | None = None
        """The highest attendance since the last evaluation, while deferred."""
        self.stretch_at = 0
        """When the stretch's peak was reached (0 without a peak, so states compare)."""
        self.stretch_split: dict[str, int] | None = None
        """The persons on each property at the peak, for an assembly over several."""

    def evaluated(self, limits: tuple[int, int], over_collective: bool) -> None:
        """The rules passed: the band around the attendance now."""
        self.limits = limits
        self.over_collective = over_collective

    def defers(
        self,
        counts: Counting,
        max_collective: int,
        dispersal: Dispersal,
        now: int | None,
        several_properties: bool = False,
    ) -> bool:
        """True when the message just fed leaves every rule and the gate command as they
        were (it moved attendance alone, within the band); the peak is kept."""
        if not self.counts_only:
            return False
        limits = self.limits
        if limits is None:
            return False
        attendance = counts.attendance
        if not (limits[0] <= attendance <= limits[1]):
            return False
        if (counts.entries > max_collective) != self.over_collective:
            return False
        t = now if now is not None else 0
        if dispersal.watching_entries(t) and counts.entries > dispersal.entries_at_end:
            return False  # an admission ends the dispersal allowance: pass the rules now
        if self.stretch_peak is None or attendance > self.stretch_peak:
            self.stretch_peak = attendance
            self.stretch_at = t
            if several_properties:
                self.stretch_split = counts.by_property()
        return True

    def at_peak(self, conditions_at: ConditionsAt) -> dict[Key, Condition] | None:
        """What held at the stretch's peak, if messages were deferred since the rules passed."""
        peak = self.stretch_peak
        return None if peak is None else conditions_at(peak, self.stretch_at, self.stretch_split)

    def fold(self, book: AlertBook, conditions_at: ConditionsAt) -> None:
        """Offer the stretch's peak to the alerts' worst figures, and forget it.

        Attendance rose and fell inside the band since the last evaluation; the worst
        figure of each alert is at the highest attendance reached, taken at the instant it
        was reached. Only worst figures change here, so folding when someone looks and
        folding at the next evaluation give the same alerts.
        """
        held = self.at_peak(conditions_at)
        if held is not None:
            self.stretch_peak = None
            self.stretch_at = 0
            self.stretch_split = None
            book.observe_worst(held)
