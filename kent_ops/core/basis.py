"""What a finding rests on at one instant: measured, indeterminate, an estimate, rounding.

A breach is proven only for the time its figures were measured: every sensor behind the
figures its rule reads reporting and counting (the gates for attendance, the staff
stations for doctors and nurses, the lots for cars), attendance not resting on an
inspector's adjustment, and no kent-ops reading of the law (the rounding up) needed to
make it hold. The engine judges each condition that holds at every rule pass, so an
alert is split into *stretches*, each with one basis; the live alerts, the report and
its CSVs carry the same stretches (docs/law.md, "Each stretch says what it rests on").

Where two bases apply, the one that claims least wins: indeterminate (the figures may be
wrong), then estimate (they rest on a count by eye), then rounding (they rest on a
reading of the law).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from kent_ops.core.rules.base import Rule, Situation

__all__ = ["BASES", "MEASURED", "Basis", "Doubts", "Judged", "judge"]

Basis = Literal["measured", "indeterminate", "estimate", "rounding"]
BASES: tuple[Basis, ...] = ("measured", "indeterminate", "estimate", "rounding")
"""Every basis, the proven one first."""


@dataclass(frozen=True, slots=True)
class Judged:
    """One condition's basis at one instant, and what it rests on when not measured."""

    basis: Basis
    rests_on: tuple[str, ...] = ()


MEASURED = Judged("measured")


@dataclass(frozen=True, slots=True)
class Doubts:
    """The figures in doubt at one instant, each with why (``"gate south silent"``).

    ``lots`` holds each lot sensor in doubt by id, so a per-lot rule is doubted by its own
    lot only. ``adjustment`` names the adjustment attendance rests on, if any.
    """

    attendance: tuple[str, ...] = ()
    staff: tuple[str, ...] = ()
    vehicles: tuple[str, ...] = ()
    lots: tuple[tuple[str, str], ...] = ()
    adjustment: str | None = None

    def of(self, rule: Rule, subject: str | None) -> tuple[str, ...]:
        """Why the figures ``rule`` reads for ``subject`` are in doubt (empty: none are)."""
        reads = rule.reads
        out: tuple[str, ...] = ()
        if "attendance" in reads:
            out += self.attendance
        if "staff" in reads:
            out += self.staff
        if "vehicles" in reads:
            if rule.per_subject:
                out += tuple(why for lot, why in self.lots if lot == subject)
            else:
                out += self.vehicles
        return out


def judge(rule: Rule, subject: str | None, s: Situation, doubts: Doubts) -> Judged:
    """The basis of ``rule``'s condition for ``subject``, which holds in ``s``.

    Indeterminate while a sensor behind a figure it reads is in doubt; an estimate while
    attendance rests on an adjustment and the condition would not hold on the gate counts
    alone; rounding while it holds only by kent-ops' rounding up; measured otherwise.
    """
    if not rule.reads:
        return MEASURED
    doubted = doubts.of(rule, subject)
    if doubted:
        return Judged("indeterminate", doubted)
    if "attendance" in rule.reads and doubts.adjustment is not None:
        counted = s.counts.unadjusted
        if counted != s.attendance and not rule.holds(
            replace(s, attendance=counted, split=None), subject
        ):
            return Judged("estimate", (doubts.adjustment,))
    exact = rule.rounding(s, subject)
    if exact is not None:
        return Judged("rounding", (exact,))
    return MEASURED
