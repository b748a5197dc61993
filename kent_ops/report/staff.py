"""Staff beside attendance: when the persons counted plus the staff on duty passed a limit.

Persons are the gate counts; staff who enter elsewhere (badged doctors, nurses, guards)
are not counted among them (docs/law.md, "Persons"). The report does not add them in,
but it notes each stretch in which attendance plus the staff on duty by badge was above
500, or above the permitted maximum, while attendance alone was not: 490 counted and 40
badged staff is on the record, not hidden (docs/law.md, "Staff").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["StaffBeside", "StaffStretch"]


@dataclass(slots=True)
class StaffStretch:
    """One stretch above ``limit`` only with the staff added; ``end`` None while it lasts."""

    limit: int
    start: datetime
    end: datetime | None
    attendance: int
    """Persons counted at the stretch's highest total."""
    staff: int
    """Staff on duty then."""


class StaffBeside:
    """Follows attendance and staff on duty, message by message, against each limit."""

    def __init__(self, limits: tuple[int, ...]) -> None:
        self.limits = tuple(sorted(set(limits)))
        self.stretches: list[StaffStretch] = []
        self._open: dict[int, StaffStretch] = {}

    def update(self, t: datetime, attendance: int, staff: int) -> None:
        """Take the figures that hold from ``t``."""
        for limit in self.limits:
            over = attendance <= limit < attendance + staff
            current = self._open.get(limit)
            if over and current is None:
                current = StaffStretch(limit, t, None, attendance, staff)
                self._open[limit] = current
                self.stretches.append(current)
            elif over and current is not None:
                if attendance + staff > current.attendance + current.staff:
                    current.attendance, current.staff = attendance, staff
            elif current is not None:
                current.end = t
                del self._open[limit]
