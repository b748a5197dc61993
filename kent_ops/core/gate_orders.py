"""ADMIT or HOLD for the deputies at the gates, with the reason they are told.

Deputies stop admitting at ``hold_at`` and admit again below ``resume_below`` (a gap,
so the order does not flap at the limit). While the permit covers no assembly over 500
(it is not issued, or the permitted hours ended or have not begun) no one may be
admitted past 500 persons, so every gate holds from 500 on, with the reason: that is
also what keeps a dispersing crowd's allowance open (docs/law.md, "Dispersal"). A
``permit-required`` breach holds every gate too (permit:A).
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
        self.state: tuple[bool, str] = self._reason(permit_hold=False, uncovered=None)
        self.decided = False
        self.changed = False

    def update(self, attendance: int, *, permit_hold: bool, uncovered: str | None) -> bool:
        """Decide the order for this attendance; True (and noted) when it changed.

        ``uncovered`` says why the permit covers no assembly over 500 now ("the permitted
        hours ended at 23:30"), or is None while it covers.
        """
        if self.admit_capacity and attendance >= self.hold_at:
            self.admit_capacity = False
        elif not self.admit_capacity and attendance < self.resume_below:
            self.admit_capacity = True
        held = uncovered if attendance >= PERMIT_THRESHOLD else None
        state = self._reason(permit_hold=permit_hold, uncovered=held)
        if state != self.state or not self.decided:
            self.state = state
            self.decided = True
            self.changed = True
            return True
        return False

    @property
    def admit(self) -> bool:
        return self.state[0]

    def command(self, attendance: int, hold_in_s: int | None = None) -> wire.GateCommand:
        """The order with the figures a deputy sees; ``hold_in_s`` is the forecast in whole
        minutes (core/foresight.py)."""
        admit, reason = self.state
        return wire.GateCommand(
            admit=admit,
            attendance=attendance,
            hold_at=self.hold_at,
            resume_below=self.resume_below,
            reason=reason,
            hold_in_s=hold_in_s,
        )

    def _reason(self, *, permit_hold: bool, uncovered: str | None) -> tuple[bool, str]:
        if uncovered is not None:
            return False, f"HOLD: {uncovered}: admit no one (permit:A)"
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
