"""The permit's status over time: the file's status, then each change the Clerk made.

The Town Board may revoke a permit through its Clerk (permit:G), and reinstate it. The
Clerk's message names the instant it takes effect; from then on the permit counts as
not issued (or issued again). The change is in the evidence log, so a restart and the
report apply it at the same instant as the live service did. A change is never
backdated in the log: one whose ``effective_at`` lies more than a minute before its
receipt is refused, and one a little in the past takes effect on receipt
(docs/law.md, "Revocation").
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import datetime

from kent_ops.core import wire
from kent_ops.core.errors import Refused
from kent_ops.core.permit.model import Permit
from kent_ops.core.timeutil import SECOND, from_us, to_us

__all__ = ["BACKDATE_LIMIT_S", "PermitStatus", "StatusChange"]

BACKDATE_LIMIT_S = 60
"""How far before its receipt a change may say it took effect (clocks differ a little)."""


@dataclass(frozen=True, slots=True)
class StatusChange:
    """The permit's status from ``at`` on, and on whose word."""

    at: int
    status: str
    resolution: str | None
    by: str | None
    reason: str


class PermitStatus:
    """Answers "was the permit issued at t?" for the file's status and every change."""

    def __init__(self, permit: Permit) -> None:
        # A revocation written in the file says the permit was issued until revoked_at,
        # whatever its status field says (docs/law.md, "Revocation").
        self.base = "issued" if permit.revoked_at is not None else permit.status
        self.changes: list[StatusChange] = []
        if permit.revoked_at is not None:
            self.changes.append(
                StatusChange(
                    to_us(permit.revoked_at),
                    "revoked",
                    permit.revocation_resolution,
                    None,
                    "revoked before the permit file was loaded",
                )
            )
        self._times = [c.at for c in self.changes]

    def _change_at(self, t: int) -> StatusChange | None:
        i = bisect.bisect_right(self._times, t)
        return self.changes[i - 1] if i else None

    def issued(self, t: int) -> bool:
        change = self._change_at(t)
        return (change.status if change else self.base) == "issued"

    def state(self, t: int) -> tuple[str, StatusChange | None]:
        """The status at ``t`` and the change that set it (None: the file's own status)."""
        change = self._change_at(t)
        return (change.status if change else self.base), change

    def apply(self, who: str, rec: wire.ClerkPermit, t: int) -> int:
        """Record the Clerk's change received at ``t``; return the instant it takes effect.

        Raises:
            Refused: it would take effect more than a minute before it was received.
        """
        effective = to_us(rec.effective_at)
        if effective < t - BACKDATE_LIMIT_S * SECOND:
            raise Refused(
                f"effective_at {rec.effective_at.isoformat()} is more than "
                f"{BACKDATE_LIMIT_S} s before the message was received "
                f"({_text(from_us(t))}): a change of the permit is never backdated"
            )
        effective = max(effective, t)
        change = StatusChange(effective, rec.status, rec.resolution, who, rec.reason)
        i = bisect.bisect_right(self._times, effective)
        self.changes.insert(i, change)
        self._times.insert(i, effective)
        return effective


def _text(t: datetime) -> str:
    return t.isoformat(timespec="seconds")
