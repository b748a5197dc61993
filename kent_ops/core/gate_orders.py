"""ADMIT or HOLD for the deputies at the gates, with the reason they are told.

Deputies stop admitting at ``hold_at`` and admit again below ``resume_below`` (a gap,
so the order does not flap at the limit). Without an issued permit no one may be
admitted past 500 persons; and a ``permit-required`` breach holds every gate too
(permit:A).
"""

from __future__ import annotations

from kent_ops.core import wire
from kent_ops.core.ordinance import PERMIT_THRESHOLD

__all__ = ["GateOrders"]


class GateOrders:
    """The one order every gate is given, and whether it changed since last published."""

    def __init__(self, hold_at: int, resume_below: int) -> None:
        self.hold_at = hold_at
        self.resume_below = resume_below
        self.admit_capacity = True
        """Below the capacity limit (with its gap): the deputies may admit on that count."""
        self.state: tuple[bool, str] = self._reason(permit_hold=False, unpermitted=False)
        self.decided = False
        self.changed = False

    def update(self, attendance: int, *, permit_hold: bool, issued: bool) -> None:
        """Decide the order for this attendance; note whether it changed."""
        if self.admit_capacity and attendance >= self.hold_at:
            self.admit_capacity = False
        elif not self.admit_capacity and attendance < self.resume_below:
            self.admit_capacity = True
        unpermitted = not issued and attendance >= PERMIT_THRESHOLD
        state = self._reason(permit_hold=permit_hold, unpermitted=unpermitted)
        if state != self.state or not self.decided:
            self.state = state
            self.decided = True
            self.changed = True

    @property
    def admit(self) -> bool:
        return self.state[0]

    def command(self, attendance: int) -> wire.GateCommand:
        admit, reason = self.state
        return wire.GateCommand(
            admit=admit,
            attendance=attendance,
            hold_at=self.hold_at,
            resume_below=self.resume_below,
            reason=reason,
        )

    def _reason(self, *, permit_hold: bool, unpermitted: bool) -> tuple[bool, str]:
        if unpermitted:
            return False, (
                "HOLD: the permit is not issued; no one may be admitted past 500 persons (permit:A)"
            )
        if permit_hold:
            return False, (
                "HOLD: more than 500 persons without an issued permit or outside the "
                "permitted hours (permit:A)"
            )
        if not self.admit_capacity:
            return False, (
                f"HOLD: attendance reached {self.hold_at:,}; admit again below "
                f"{self.resume_below:,}"
            )
        return True, f"ADMIT: attendance below {self.hold_at:,}"
