"""The validated permit as frozen records: what the rest of kent-ops reads.

Parsing and validation live in :mod:`kent_ops.core.permit` (with the field table in
:mod:`kent_ops.core.permit.schema`); this module only holds the shapes, so the checks
can build them without an import cycle.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from kent_ops.core.devices.source import SourceSpec
from kent_ops.core.errors import UsageError
from kent_ops.core.ordinance import PERMIT_THRESHOLD
from kent_ops.core.sensor_kinds import SENSOR_KINDS, SensorKind, kind_of
from kent_ops.core.wire.topics import Topics

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

    @classmethod
    def unreadable(cls, path: str, why: str) -> PermitError:
        """A permit file that cannot be read at all: one sentence naming it once
        (``permit file bad/permit.toml: no such file``), not a list of its problems."""
        error = cls([why], path)
        error.args = (f"permit file {path}: {why}",)
        return error


@dataclass(frozen=True, slots=True)
class Agent:
    """The applicant's agent for notices and summonses (permit:B(1))."""

    name: str
    address: str
    county: str
    natural_person: bool | None = None
    """The law asks for "a natural person"; None: the file does not say (not on record)."""


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

    @builtins.property  # the field ``property`` above hides the builtin in this class
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
    dispersal_minutes: int
    """How long a crowd of more than 500 may take to leave after the permitted hours end
    or a revocation takes effect, while nobody is admitted (docs/law.md, "Dispersal")."""
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
    application: dict[str, bool | None]
    """Each statement of the petition (permit:B(1)-(14)) by its key: filed (true), not
    filed (false), or not on record (None: the file does not say)."""
    application_on_record: bool
    """The file holds an ``[application]`` table at all."""
    overnight: bool
    housing_declared: bool
    water_approved: bool | None
    """Each written approval of permit:C: given, refused, or None (not on record)."""
    toilets_approved: bool | None
    sewage_approved: bool | None
    food_approved: bool | None
    parking_approved: bool | None
    housing_approved: bool | None
    roads_approved: bool | None
    medical_approved: bool | None
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
    sources: dict[str, SourceSpec] = field(default_factory=dict)
    """The gates and lots whose figures come from rented devices (``kent-ops adapt``)."""
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
    def regulated(self) -> bool:
        """The chapter regulates assemblies of more than 500 persons (purpose; permit:A).

        A permit for 500 or fewer at one time describes an assembly that needs no permit:
        none of the chapter's duties binds it, and it covers no assembly over 500.
        """
        return self.max_at_one_time > PERMIT_THRESHOLD

    @property
    def night_contemplated(self) -> bool:
        """The permit itself contemplates the night: declared overnight, or a window that
        crosses a local midnight (windows on several dates that each close before
        midnight do not: docs/law.md, "Housing only where contemplated")."""
        if self.overnight:
            return True
        tz = self.timezone
        return any(local_midnight_after(w.start, tz) < w.end for w in self.windows)

    @property
    def may_run_overnight(self) -> bool:
        """Contemplated to extend from one day to another (permit:B(14), C(7)).

        Declared overnight, a window crossing a local midnight, or windows on two or
        more local dates.
        """
        if self.overnight:
            return True
        tz = self.timezone
        if any(local_midnight_after(w.start, tz) < w.end for w in self.windows):
            return True
        return len({w.start.astimezone(tz).date() for w in self.windows}) > 1

    @property
    def topic_prefix(self) -> str:
        """``kent/{event_id}``: every topic of this event is under it (core/wire/topics.py)."""
        return Topics(self.event_id).prefix

    @property
    def spaces_provided(self) -> int:
        return sum(self.lots.values())

    @property
    def sensors(self) -> dict[str, str]:
        """Every listed sensor id and its kind's name (gate, lot or station), kind by kind
        in the order of :data:`~kent_ops.core.sensor_kinds.SENSOR_KINDS`."""
        kinds: dict[str, str] = {}
        for kind in SENSOR_KINDS:
            kinds.update(dict.fromkeys(getattr(self, kind.permit_list), kind.name))
        return kinds

    def sensor_kind(self, sensor: str) -> SensorKind:
        """A listed sensor's kind, or its manual flavour for a deputy's tally."""
        return kind_of(self.sensors[sensor], sensor in self.manual_gates)

    def properties_of(self, sensor: str) -> tuple[str, ...]:
        """The properties a listed sensor stands on: one, or both sides of an internal gate."""
        spec = self.gate_specs.get(sensor)
        if spec is not None:
            sides = (spec.property, spec.from_property, spec.to_property)
            return tuple(p for p in sides if p is not None)
        on = self.lot_property.get(sensor) or self.station_property.get(sensor)
        return (on,) if on else ()

    def stale_after_s(self, sensor: str) -> float:
        """How long ``sensor`` may be silent before it is offline: its source's own
        figure (rented LoRaWAN devices report every few minutes), else the permit's."""
        source = self.sources.get(sensor)
        if source is not None and source.stale_after_s is not None:
            return source.stale_after_s
        return self.alerting.stale_after_s

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
