"""What every rule is made of: the instant it looks at, the condition it finds, the base class.

A :class:`Rule` says, for one instant (a :class:`Situation`), which of its conditions
hold, with the figures observed and required; it writes the one sentence an inspector
reads; and it names the attendance figures at which it flips (so the engine can skip
evaluations while attendance moves between two of them). It knows nothing of pending
delays or alert ids: that is :mod:`kent_ops.core.alerts`. docs/law.md gives the reading
of the law behind each rule.

Add a rule by writing one class here and listing an instance in :data:`RULES`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

from kent_ops.core.assembly import assembly_edge, assembly_on
from kent_ops.core.counting import Counting
from kent_ops.core.coverage import Allowance
from kent_ops.core.permit import Permit
from kent_ops.core.timeutil import SECOND, to_us
from kent_ops.core.wire import Severity

__all__ = [
    "CLOCK_SKEW_S",
    "LOT_FULL_SHARE",
    "Condition",
    "Held",
    "Key",
    "Rule",
    "Situation",
    "Terms",
    "figure",
]

Key = tuple[str, str | None]
LOT_FULL_SHARE = 0.95
"""A lot this full (or more) is warned about: cars are about to be turned away."""
CLOCK_SKEW_S = 30
"""A device whose clock is off by more than this is timed on receipt instead."""


@dataclass(frozen=True, slots=True)
class Condition:
    """A rule that holds now: what was seen, what the permit requires, how bad it is.

    ``magnitude`` orders observations of the same condition so an alert can keep its
    worst figure (the largest excess or shortfall).
    """

    observed: dict[str, Any]
    required: dict[str, Any]
    magnitude: float


@dataclass(frozen=True, slots=True)
class Terms:
    """The permit's terms, flattened once into the integers the rules compare."""

    windows: tuple[tuple[int, int], ...]
    max_at_one_time: int
    max_collective: int
    vehicles_at_one_time: int
    persons_per_nurse: int
    doctors_min: int
    security_guards: int
    spaces_provided: int
    housing_declared: bool
    lot_capacity: dict[str, int]
    regulated: bool
    """More than 500 at one time: the chapter's duties bind it (docs/law.md, "Scope")."""
    dispersal_us: int
    """The dispersal allowance after a window's end or a revocation (docs/law.md)."""
    tz: ZoneInfo
    night_contemplated: bool
    """The permit contemplates the night: ``overnight = true``, or a window crossing a
    local midnight (docs/law.md, "Housing only where contemplated")."""
    several_properties: bool
    """An assembly over several properties: attendance findings give each one's persons."""

    @classmethod
    def of(cls, permit: Permit) -> Terms:
        return cls(
            windows=tuple((to_us(w.start), to_us(w.end)) for w in permit.windows),
            max_at_one_time=permit.max_at_one_time,
            max_collective=permit.max_collective,
            vehicles_at_one_time=permit.vehicles_at_one_time,
            persons_per_nurse=permit.persons_per_nurse,
            doctors_min=permit.doctors_min,
            security_guards=permit.security_guards,
            spaces_provided=permit.spaces_provided,
            housing_declared=permit.housing_declared,
            lot_capacity=dict(permit.lots),
            regulated=permit.regulated,
            dispersal_us=permit.dispersal_minutes * 60 * SECOND,
            tz=permit.timezone,
            night_contemplated=permit.night_contemplated,
            several_properties=len(permit.properties) > 1,
        )

    def inside_window(self, t: int) -> bool:
        return any(start <= t < end for start, end in self.windows)

    def window_at(self, t: int) -> int | None:
        """The index of the window that holds ``t`` (half-open), if any."""
        for i, (start, end) in enumerate(self.windows):
            if start <= t < end:
                return i
        return None


@dataclass(frozen=True, slots=True)
class Situation:
    """Everything a rule may look at, at one instant (times in microseconds)."""

    terms: Terms
    counts: Counting
    t: int
    attendance: int
    inside: bool
    issued: bool
    overnight_from: int | None
    deficient: Mapping[str, str]
    skewed: Mapping[str, float]
    allowance: Allowance | None = None
    """The dispersal allowance after the permit last stopped covering, if one is tracked."""
    split: Mapping[str, int] | None = None
    """Persons on each property at this instant, where it is not the counts' now (an
    alert's worst moment, reached while the rules waited: core/band.py)."""

    @property
    def present(self) -> int:
        return max(self.attendance, 0)

    def by_property(self) -> dict[str, int] | None:
        """Persons on each property, for an assembly over several (else None)."""
        if not self.terms.several_properties:
            return None
        return dict(self.split) if self.split is not None else self.counts.by_property()

    @property
    def covered(self) -> bool:
        """The permit covers an assembly of more than 500 now: regulated, issued, inside."""
        return self.terms.regulated and self.issued and self.inside

    @property
    def dispersing(self) -> bool:
        """Inside a dispersal allowance that no admission has ended (docs/law.md)."""
        return not self.covered and self.allowance is not None and self.allowance.open

    @property
    def assembly_on(self) -> bool:
        """The duties that bind "the assembly" hold only while it is on."""
        return assembly_on(self.attendance, self.inside, self.terms.regulated)

    @property
    def assembly_edge(self) -> int:
        return assembly_edge(self.inside)


Held = Iterator[tuple[str | None, Condition]]


class Rule(ABC):
    """One live rule. Subclasses set the class attributes and override what applies.

    A rule the engine's rule pass finds overrides :meth:`holds` and :meth:`measure`;
    ``counter-reset`` and ``evidence-storage`` are raised outside it (by the counts and
    by the service) and keep the defaults, which never hold.
    """

    name: ClassVar[str]
    severity: ClassVar[Severity]
    cite: ClassVar[str]
    title: ClassVar[str]
    """A plain name for the rule, for readers who do not know its id."""
    summary: ClassVar[str]
    """One line saying when it holds, for the dashboard's help and the report."""
    per_subject: ClassVar[bool] = False
    """Each lot, sensor or checklist item is its own condition."""
    reads: ClassVar[frozenset[str]] = frozenset()
    """The figures it reads (``attendance``, ``staff``, ``vehicles``): while a sensor
    behind one of them is in doubt, a stretch of it is indeterminate (core/basis.py)."""
    waits: ClassVar[bool] = True
    """It must hold for the permit's ``pending_s`` before it is raised."""
    binds_any_assembly: ClassVar[bool] = False
    """It holds for a permit of 500 or fewer too (permit-required, the data rules); the
    chapter's other duties bind only the assemblies it regulates (docs/law.md, "Scope")."""

    def subjects(self, s: Situation) -> Iterable[str | None]:
        """What it is checked for: None for an event-wide rule, else each lot, sensor…"""
        return (None,)

    def holds(self, s: Situation, subject: str | None) -> bool:
        """Whether the rule is breached for ``subject`` in ``s`` (never, unless overridden)."""
        return False

    def measure(self, s: Situation, subject: str | None) -> Condition | None:
        """The figures observed and required for ``subject`` now, breached or not.

        None when the rule has no figures to give once it no longer holds (a checklist
        mark, a clock that is right again): an ended alert then keeps its last ones.
        """
        return None

    def conditions(self, s: Situation) -> Held:
        """Each (subject, condition) of this rule that holds in ``s``."""
        for subject in self.subjects(s):
            if self.holds(s, subject):
                cond = self.measure(s, subject)
                if cond is not None:
                    yield subject, cond

    def edges(self, s: Situation) -> Iterable[int]:
        """Attendance figures ``x`` at which it flips: it holds iff attendance > x.

        Include where its basis flips too (the rounding's exact ratio): a stretch starts
        there (core/basis.py).
        """
        return ()

    def rounding(self, s: Situation, subject: str | None) -> str | None:
        """While it holds only by kent-ops' rounding up (the staff would meet the exact
        ratio), the exact ratio it rests on, in words; else None (docs/law.md)."""
        return None

    @abstractmethod
    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        """The one sentence an inspector reads, with the citation."""

    def cite_for(self, subject: str | None) -> str:
        """The citation of one of its conditions (some depend on the subject)."""
        return self.cite


def figure(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
