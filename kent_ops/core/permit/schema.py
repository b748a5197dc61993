"""The permit file's schema: one table of fields, their types, defaults and citations.

Each field is declared once, with the section of the law it rests on, and read by one
small :class:`Reader` that collects every problem as ``field: what is wrong (cite)``.
A citation is written here, or taken from :mod:`kent_ops.core.ordinance`, and nowhere
else, so a message can never cite a different section from its neighbour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from kent_ops.core import ordinance as law
from kent_ops.core.declared import ABSENT, FieldSpec, ListSpec, TableSpec, non_negative
from kent_ops.core.sensor_kinds import SENSOR_KINDS, SensorKind

__all__ = [
    "ID_PATTERN",
    "KNOWN_TABLES",
    "SENSOR_ID_PATTERN",
    "SENSOR_LISTS",
    "STATEMENTS",
    "Statement",
    "permit_attrs",
]

ID_PATTERN = re.compile(r"^[a-z0-9-]+$")
"""An event's id (it names the topics): every command and view that takes one checks it here."""
SENSOR_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+$")
"""A sensor's, gate's or person's id (it stands in MQTT topics)."""
DISPERSAL_MINUTES = 60
"""How long a crowd has to leave after the permitted hours end or a revocation takes
effect, unless the Board sets another figure in the permit (docs/law.md, "Dispersal")."""
PERMIT_STATUSES = ("issued", "pending", "denied", "revoked", "none")
KENT_TIMEZONE = "America/New_York"

# The law's sections as the field table cites them.
CITE_PERMIT = law.CITE_THRESHOLD  # permit:A
CITE_APPLICATION = law.CITE_APPLICATION  # permit:B
CITE_APPLICANT = "permit:B(1)"
CITE_DECLARED = "permit:B(2)"
CITE_SECURITY = "permit:B(8)"
CITE_HOUSING_STATEMENT = "permit:B(14)"
CITE_WATER = "permit:C(1)"
CITE_TOILETS = "permit:C(2)"
CITE_SEWAGE = "permit:C(3)"
CITE_FOOD = "permit:C(5)"
CITE_FOOD_STATEMENT = "permit:B(7)"
CITE_HOUSING = "permit:C(7)"
CITE_INSPECTION = "permit:D"
CITE_FEE = "fee"
CITE_HEALTH = "permit:C(1)-(9)"  # the written approvals of every condition of permit:C
CITE_PARKING_APPROVAL = law.CITE_PARKING  # permit:C(6)
CITE_ROADS = "permit:C(8)"
CITE_MEDICAL = law.CITE_MEDICAL  # permit:C(9)
CITE_OVERNIGHT = f"permit:B(14), {CITE_HOUSING}"
CITE_REVOCATION = law.CITE_REVOCATION  # permit:G
CITE_AGGREGATE = law.CITE_THRESHOLD  # permit:A: "any part or portion ... in the aggregate"


# -- small named validators ------------------------------------------------------------------


def positive(value: int | float) -> str | None:
    return "must be more than 0" if value <= 0 else None


def non_empty(value: str) -> str | None:
    return "must not be empty" if not value.strip() else None


def event_id(value: str) -> str | None:
    return None if ID_PATTERN.match(value) else "must match [a-z0-9-]+"


def kent_clock(value: str) -> str | None:
    """Kent is in New York: local dates, midnights and windows are New York's."""
    if value == KENT_TIMEZONE:
        return None
    return f"must be {KENT_TIMEZONE}: the Town of Kent is in New York, not {value!r}"


def sensor_id(value: str) -> str | None:
    if not SENSOR_ID_PATTERN.match(value):
        return "must be letters, digits, '-', '_' or '.' (it is used in MQTT topics)"
    return None


def permit_status(value: str) -> str | None:
    if value in PERMIT_STATUSES:
        return None
    return f"must be one of {', '.join(PERMIT_STATUSES)}, not {value!r}"


def nurse_ratio(value: int) -> str | None:
    """A permit may ask for more nurses than the law, never fewer (permit:C(9))."""
    if value <= 0:
        return "must be more than 0"
    if value > law.PERSONS_PER_NURSE:
        return (
            f"{value} persons per nurse is looser than the ordinance's 1 registered nurse per "
            f"{law.PERSONS_PER_NURSE} persons"
        )
    return None


def doctors_minimum(value: int) -> str | None:
    """A permit may ask for more doctors than the law, never fewer (permit:C(9))."""
    if value < law.DOCTORS_MIN:
        return (
            f"{value} is looser than the ordinance's at least {law.DOCTORS_MIN} doctor "
            "in attendance at all times"
        )
    return None


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement the petition must include (permit:B(1)-(14)), by its key in the file."""

    key: str
    item: str
    text: str

    @property
    def cite(self) -> str:
        return f"permit:{self.item}"


STATEMENTS: tuple[Statement, ...] = (
    Statement(
        "applicant_details",
        "B(1)",
        "the applicant's name, age and residence (a corporation's directors and officers)",
    ),
    Statement(
        "owner_statement",
        "B(2)",
        "the record owner, the dates and hours, the persons and vehicles expected and the purpose",
    ),
    Statement("site_map", "B(3)", "a map by a licensed land surveyor or engineer"),
    Statement("facilities_plan", "B(4)", "a plan to scale by a licensed engineer or surveyor"),
    Statement("parking_plan", "B(5)", "a plan to scale of the parking areas and their ways in"),
    Statement("sound_statement", "B(6)", "a statement of the sound equipment"),
    Statement("food_statement", "B(7)", "a statement of whether and how food is provided"),
    Statement(
        "food_plan",
        "B(7)",
        "a plan to scale of the buildings or structures where food is prepared, sold or "
        "distributed",
    ),
    Statement("security_statement", "B(8)", "a statement of the security guards or police"),
    Statement("lights_statement", "B(10)", "a statement of the outdoor lights and signs"),
    Statement("emergency_statement", "B(11)", "a statement of the emergency medical facilities"),
    Statement("camping_statement", "B(12)", "a statement of any camping or housing facilities"),
    Statement("duration_statement", "B(13)", "a statement of the assembly's duration"),
    Statement(
        "housing_statement",
        "B(14)",
        "a statement of the housing for an assembly running from one day into another",
    ),
    Statement(
        "agent_accepts_service",
        "B(1)",
        "the agent's verified agreement to accept notices and summonses",
    ),
)
"""The petition's statements, in the order of permit:B.

``true`` is filed, ``false`` not filed (the applicant's breach); a key the file leaves
out is not on record (the Town's file is silent: a warning, never a breach).
"""


# -- the declarations --------------------------------------------------------------------------


def _f(key: str, kind: type | tuple[type, ...], **kw: Any) -> FieldSpec:
    return FieldSpec(key, kind, **kw)


EVENT = TableSpec(
    "event",
    (
        _f("id", str, check=event_id),
        _f("name", str, check=non_empty),
        _f("timezone", str, default=KENT_TIMEZONE, check=kent_clock),
    ),
)
PERMIT = TableSpec(
    "permit",
    (
        _f("number", str, default=""),
        _f("status", str, cite=CITE_PERMIT, check=permit_status),
        _f("application_filed_on", date, default=None, cite=CITE_APPLICATION),
        _f("hearing_notice_published_on", date, default=None, cite=CITE_APPLICATION),
        _f("hearing_on", date, default=None, cite=CITE_APPLICATION),
        _f("decided_on", date, default=None, cite=CITE_APPLICATION),
        _f("revoked_at", datetime, default=None, cite=CITE_REVOCATION),
        _f("revocation_resolution", str, default=None, cite=CITE_REVOCATION, check=non_empty),
        _f(
            "dispersal_minutes",
            int,
            default=DISPERSAL_MINUTES,
            cite=CITE_PERMIT,
            check=non_negative,
        ),
    ),
    prefix="",
)
APPLICANT = TableSpec(
    "applicant",
    (
        _f("name", str, cite=CITE_APPLICANT, check=non_empty, attr="applicant_name"),
        _f("is_corporation", bool, default=False),
        _f("resides_in_town", bool, default=False),
        _f("agent", dict, default=None, cite=CITE_APPLICANT, attr=""),
    ),
    prefix="",
)
AGENT = TableSpec(
    "applicant.agent",
    (
        _f("name", str, cite=CITE_APPLICANT),
        _f("address", str, cite=CITE_APPLICANT),
        _f("county", str, cite=CITE_APPLICANT),
        _f("natural_person", bool, default=None, cite=CITE_APPLICANT),
    ),
)
_PROPERTY_FIELDS = (
    _f("owner", str, cite=CITE_DECLARED, check=non_empty),
    _f("address", str, cite=CITE_DECLARED, check=non_empty),
    _f("tenant", str, default=None, cite=CITE_INSPECTION, check=non_empty),
    _f("inspection_authorized", bool, default=ABSENT, cite=CITE_INSPECTION),
    _f("tenant_authorized", bool, default=False, cite=CITE_INSPECTION),
)
PROPERTY = TableSpec(
    "property",
    (_f("id", str, default="main", check=event_id), *_PROPERTY_FIELDS),
    required=False,
)
PROPERTIES = ListSpec(
    "properties",
    (_f("id", str, check=event_id), *_PROPERTY_FIELDS),
    shape="id, owner and address",
)
LIMITS = TableSpec(
    "limits",
    (
        _f("max_at_one_time", int, cite=CITE_DECLARED, check=positive),
        _f("max_collective", int, cite=CITE_DECLARED, check=positive),
        _f("vehicles_at_one_time", int, cite=CITE_DECLARED, check=non_negative),
        _f("vehicles_collective", int, default=0, cite=CITE_DECLARED, check=non_negative),
    ),
    prefix="",
)
STAFFING = TableSpec(
    "staffing",
    (
        _f("security_guards", int, default=0, cite=CITE_SECURITY, check=non_negative),
        _f(
            "persons_per_nurse",
            int,
            default=law.PERSONS_PER_NURSE,
            cite=law.CITE_MEDICAL,
            check=nurse_ratio,
        ),
        _f(
            "doctors_min",
            int,
            default=law.DOCTORS_MIN,
            cite=law.CITE_MEDICAL,
            check=doctors_minimum,
        ),
        _f("doctors_planned", int, default=None, cite=law.CITE_MEDICAL, check=non_negative),
        _f("nurses_planned", int, default=None, cite=law.CITE_MEDICAL, check=non_negative),
        _f("first_aid_station", bool, default=False, cite=law.CITE_MEDICAL),
    ),
    prefix="",
)
APPLICATION = TableSpec(
    "application",
    tuple(_f(st.key, bool, default=None, cite=st.cite) for st in STATEMENTS),
    required=False,
)
FACILITIES = TableSpec(
    "facilities",
    (
        _f("overnight", bool, default=False, cite=CITE_HOUSING_STATEMENT),
        _f("housing_declared", bool, default=False, cite=CITE_HOUSING),
        _f("water_approved", bool, default=None, cite=CITE_WATER),
        _f("toilets_approved", bool, default=None, cite=CITE_TOILETS),
        _f("sewage_approved", bool, default=None, cite=CITE_SEWAGE),
        _f("food_approved", bool, default=None, cite=CITE_FOOD),
        _f("parking_approved", bool, default=None, cite=CITE_PARKING_APPROVAL),
        _f("housing_approved", bool, default=None, cite=CITE_HOUSING),
        _f("roads_approved", bool, default=None, cite=CITE_ROADS),
        _f("medical_approved", bool, default=None, cite=CITE_MEDICAL),
        _f("food_served", bool, default=True, cite=CITE_FOOD_STATEMENT),
        _f("inspection_authorized", bool, default=False, cite=CITE_INSPECTION),
    ),
    prefix="",
)
_INS = law.CITE_INSURANCE
INSURANCE = TableSpec(
    "insurance",
    (
        _f("bodily_injury_per_person", int, cite=_INS, check=non_negative),
        _f("bodily_injury_per_occurrence", int, cite=_INS, check=non_negative),
        _f("property_damage", int, cite=_INS, check=non_negative),
        _f("cancellation_notice_days", int, cite=_INS, check=non_negative),
    ),
    prefix="insurance_",
)
BOND = TableSpec(
    "bond",
    (
        _f("amount", int, default=0, cite=law.CITE_CLEAN_UP, check=non_negative),
        _f("amount_fixed_by_board", int, default=None, cite=law.CITE_CLEAN_UP, check=non_negative),
        _f("posted_on", date, default=None, cite=law.CITE_CLEAN_UP),
    ),
    required=False,
    prefix="bond_",
)
FEE = TableSpec(
    "fee", (_f("paid_on", date, default=None, cite=CITE_FEE),), required=False, prefix="fee_"
)
ALERTING = TableSpec(
    "alerting",
    (
        _f("pending_s", (int, float), default=10, check=non_negative),
        _f("clear_s", (int, float), default=30, check=non_negative),
        _f("stale_after_s", (int, float), default=60, check=positive),
        _f("hold_at", int, default=ABSENT, check=positive),
        _f("resume_below", int, default=ABSENT, check=positive),
    ),
    required=False,
)
SIGNING = TableSpec("signing", (_f("keys_file", str, default=None),), required=False)

WINDOWS = ListSpec(
    "windows",
    (_f("start", datetime, cite=CITE_DECLARED), _f("end", datetime, cite=CITE_DECLARED)),
    shape="start and end",
    empty="at least one permitted window is required",
    empty_cite=CITE_DECLARED,
)
_SOURCE = _f("source", dict, default=None)  # a rented device (kent_ops.core.devices.source)


def _sensor_list(kind: SensorKind) -> ListSpec:
    """The permit's list of one kind of sensor, as its entry in the sensor kinds declares."""
    rented = (_SOURCE,) if kind.rentable else ()
    return ListSpec(
        kind.permit_list,
        (_f("id", str, check=sensor_id), *kind.permit_fields, *rented),
        shape=kind.permit_shape,
        empty=kind.permit_empty,
    )


SENSOR_LISTS: dict[str, ListSpec] = {kind.name: _sensor_list(kind) for kind in SENSOR_KINDS}
"""Each kind of sensor's ``[[list]]`` by the kind's name (kent_ops.core.sensor_kinds)."""

DIRECT_TABLES: tuple[TableSpec, ...] = (
    PERMIT,
    APPLICANT,
    LIMITS,
    STAFFING,
    FACILITIES,
    INSURANCE,
    BOND,
    FEE,
)
"""Tables whose fields fill :class:`Permit` attributes one for one."""

_ALL_TABLES: tuple[TableSpec | ListSpec, ...] = (
    EVENT,
    *DIRECT_TABLES,
    PROPERTY,
    PROPERTIES,
    APPLICATION,
    ALERTING,
    SIGNING,
    WINDOWS,
    *SENSOR_LISTS.values(),
)
KNOWN_TABLES: dict[str, TableSpec | ListSpec] = {spec.name: spec for spec in _ALL_TABLES}
"""Every table the permit file may hold, by name."""


def permit_attrs(spec: TableSpec, values: dict[str, Any]) -> dict[str, Any]:
    """The :class:`Permit` attributes a direct table's values fill."""
    out = {}
    for f in spec.fields:
        name = f.attr if f.attr is not None else f"{spec.prefix}{f.key}"
        if name:
            out[name] = values[f.key]
    return out
