"""The validated permit as frozen records: what the rest of kent-ops reads.

Parsing and validation live in :mod:`kent_ops.core.permit` (with the field table in
:mod:`kent_ops.core.permit_schema`); this module only holds the shapes, so the checks
can build them without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from kent_ops.core.errors import UsageError

__all__ = [
    "Agent",
    "Alerting",
    "GateSpec",
    "Permit",
    "PermitError",
    "Property",
    "Window",
    "local_midnight_after",
]


class PermitError(UsageError, ValueError):
    """A permit file that cannot be used; ``problems`` lists every reason.

    A usage error: the command line prints it as one line and exits 2.
    """

    def __init__(self, problems: list[str], source: str = "permit") -> None:
        self.problems = problems
        self.source = source
        super().__init__(f"{source} is invalid: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class Agent:
    """The applicant's agent for notices and summonses (permit:B(1))."""

    name: str
    address: str
    county: str


@dataclass(frozen=True, slots=True)
class Property:
    """One property the assembly uses, and who answers for it (permit:A, B(2), D).

    The law reaches everyone who lets property be used "for any part or portion" of an
    assembly of more than 500 "in the aggregate": each owner (and tenant) is named.
    """

    id: str
    owner: str
    address: str
    tenant: str | None
    inspection_authorized: bool
    """The owner's written authorisation for the Town to inspect at any time (permit:D)."""
    tenant_authorized: bool
    """The tenant's or lessee's, where there is one (permit:D)."""


@dataclass(frozen=True, slots=True)
class GateSpec:
    """One gate and where it stands: on a property's boundary, or between two properties."""

    id: str
    manual: bool
    property: str | None
    """A boundary gate: ``in`` counts persons entering this property from outside."""
    from_property: str | None
    """An internal gate: ``in`` counts persons moving from_property -> to_property."""
    to_property: str | None

    @property
    def boundary(self) -> bool:
        return self.property is not None


@dataclass(frozen=True, slots=True)
class Window:
    """Permitted dates and hours: inside means ``start <= t < end``."""

    start: datetime
    end: datetime

    def contains(self, t: datetime) -> bool:
        return self.start <= t < self.end


@dataclass(frozen=True, slots=True)
class Alerting:
    """How long a breach must hold before it is raised, and when deputies hold."""

    pending_s: float = 10.0
    clear_s: float = 30.0
    stale_after_s: float = 60.0
    hold_at: int = 0
    resume_below: int = 0


@dataclass(frozen=True, slots=True)
class Permit:
    """One permitted assembly, validated, with its sensors. Immutable once loaded."""

    event_id: str
    event_name: str
    timezone: ZoneInfo
    number: str
    status: str
    revoked_at: datetime | None
    revocation_resolution: str | None
    application_filed_on: date | None
    hearing_notice_published_on: date | None
    hearing_on: date | None
    decided_on: date | None
    applicant_name: str
    is_corporation: bool
    resides_in_town: bool
    agent: Agent | None
    properties: tuple[Property, ...]
    """Always at least one; a single ``[property]`` table is one property."""
    windows: tuple[Window, ...]
    max_at_one_time: int
    max_collective: int
    vehicles_at_one_time: int
    vehicles_collective: int
    security_guards: int
    persons_per_nurse: int
    doctors_min: int
    doctors_planned: int | None
    nurses_planned: int | None
    first_aid_station: bool
    application: dict[str, bool]
    """Each statement of the petition (permit:B(1)-(14)) by its key: filed or not."""
    overnight: bool
    housing_declared: bool
    water_approved: bool
    toilets_approved: bool
    sewage_approved: bool
    food_approved: bool
    food_served: bool
    inspection_authorized: bool
    insurance_bodily_injury_per_person: int
    insurance_bodily_injury_per_occurrence: int
    insurance_property_damage: int
    insurance_cancellation_notice_days: int
    bond_amount: int
    bond_amount_fixed_by_board: int | None
    bond_posted_on: date | None
    fee_paid_on: date | None
    gates: tuple[str, ...]
    manual_gates: frozenset[str]
    gate_specs: dict[str, GateSpec]
    """Every gate, in file order, with where it stands."""
    lots: dict[str, int]
    lot_property: dict[str, str]
    staff_stations: tuple[str, ...]
    station_property: dict[str, str]
    alerting: Alerting
    signing_keys_file: Path | None = None
    source_path: Path | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def property_owner(self) -> str:
        """The first property's owner (the only one, for a single ``[property]``)."""
        return self.properties[0].owner

    @property
    def property_address(self) -> str:
        return self.properties[0].address

    @property
    def may_run_overnight(self) -> bool:
        """Declared overnight, or a window crossing a local midnight (permit:B(14), C(7))."""
        return self.overnight or any(
            local_midnight_after(w.start, self.timezone) < w.end for w in self.windows
        )

    @property
    def topic_prefix(self) -> str:
        return f"kent/{self.event_id}"

    @property
    def spaces_provided(self) -> int:
        return sum(self.lots.values())

    @property
    def sensors(self) -> dict[str, str]:
        """Every listed sensor id and its kind (gate, lot or station)."""
        kinds: dict[str, str] = {g: "gate" for g in self.gates}
        kinds.update({lot: "lot" for lot in self.lots})
        kinds.update({s: "station" for s in self.staff_stations})
        return kinds

    @property
    def first_start(self) -> datetime:
        return min(w.start for w in self.windows)

    @property
    def last_end(self) -> datetime:
        return max(w.end for w in self.windows)

    def inside_window(self, t: datetime) -> bool:
        return any(w.contains(t) for w in self.windows)


def local_midnight_after(t: datetime, tz: ZoneInfo) -> datetime:
    """The first local midnight strictly after ``t`` in ``tz`` (DST-safe)."""
    local = t.astimezone(tz)
    next_day = (local + timedelta(days=1)).date()
    return datetime(next_day.year, next_day.month, next_day.day, tzinfo=tz)
