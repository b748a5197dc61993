"""The permit file's schema: one table of fields, their types, defaults and citations.

Each field is declared once, with the section of the law it rests on, and read by one
small :class:`Reader` that collects every problem as ``field: what is wrong (cite)``.
A citation is written here, or taken from :mod:`kent_ops.core.ordinance`, and nowhere
else, so a message can never cite a different section from its neighbour.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from kent_ops.core import ordinance as law

__all__ = [
    "ABSENT",
    "REQUIRED",
    "FieldSpec",
    "ListSpec",
    "Reader",
    "TableSpec",
]

ID_PATTERN = re.compile(r"^[a-z0-9-]+$")
SENSOR_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+$")
PERMIT_STATUSES = ("issued", "pending", "denied", "revoked", "none")

REQUIRED: Any = object()
"""A field's default when it must be given."""
ABSENT: Any = object()
"""A field's default when its value is derived from others if it is not given."""

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

Check = Callable[[Any], str | None]


# -- small named validators ------------------------------------------------------------------


def non_negative(value: int | float) -> str | None:
    return "must not be negative" if value < 0 else None


def positive(value: int | float) -> str | None:
    return "must be more than 0" if value <= 0 else None


def non_empty(value: str) -> str | None:
    return "must not be empty" if not value.strip() else None


def event_id(value: str) -> str | None:
    return None if ID_PATTERN.match(value) else "must match [a-z0-9-]+"


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


# -- the declarations --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One key of a table: its type, its default (or REQUIRED), its citation and check."""

    key: str
    kind: type | tuple[type, ...]
    default: Any = REQUIRED
    cite: str | None = None
    check: Check | None = None
    attr: str | None = None
    """The :class:`Permit` attribute it fills when not its table's prefix + key; "" for none."""


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One ``[table]`` of the permit file."""

    name: str
    fields: tuple[FieldSpec, ...]
    required: bool = True
    prefix: str | None = None
    """Its fields fill :class:`Permit` attributes named prefix + key; None: read apart."""


@dataclass(frozen=True, slots=True)
class ListSpec:
    """One ``[[list]]`` of tables: windows, gates, lots, staff stations."""

    name: str
    fields: tuple[FieldSpec, ...]
    shape: str
    """What each entry must hold, for the message when one is not a table."""
    empty: str | None = None
    """The message when the list is empty or absent; None when it may be."""
    empty_cite: str | None = None


def _f(key: str, kind: type | tuple[type, ...], **kw: Any) -> FieldSpec:
    return FieldSpec(key, kind, **kw)


EVENT = TableSpec(
    "event",
    (
        _f("id", str, check=event_id),
        _f("name", str, check=non_empty),
        _f("timezone", str, default="America/New_York"),
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
    ),
)
PROPERTY = TableSpec(
    "property",
    (
        _f("owner", str, cite=CITE_DECLARED, check=non_empty),
        _f("address", str, cite=CITE_DECLARED, check=non_empty),
    ),
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
    ),
    prefix="",
)
FACILITIES = TableSpec(
    "facilities",
    (
        _f("overnight", bool, default=False, cite=CITE_HOUSING_STATEMENT),
        _f("housing_declared", bool, default=False, cite=CITE_HOUSING),
        _f("water_approved", bool, default=False, cite=CITE_WATER),
        _f("toilets_approved", bool, default=False, cite=CITE_TOILETS),
        _f("sewage_approved", bool, default=False, cite=CITE_SEWAGE),
        _f("food_approved", bool, default=False, cite=CITE_FOOD),
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
GATES = ListSpec(
    "gates",
    (_f("id", str, check=sensor_id), _f("manual", bool, default=ABSENT)),
    shape="an id",
    empty="at least one is required",
)
LOTS = ListSpec(
    "lots",
    (
        _f("id", str, check=sensor_id),
        _f("capacity", int, cite=law.CITE_PARKING, check=non_negative),
    ),
    shape="id and capacity",
)
STATIONS = ListSpec("staff_stations", (_f("id", str, check=sensor_id),), shape="an id")

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


def permit_attrs(spec: TableSpec, values: dict[str, Any]) -> dict[str, Any]:
    """The :class:`Permit` attributes a direct table's values fill."""
    out = {}
    for f in spec.fields:
        name = f.attr if f.attr is not None else f"{spec.prefix}{f.key}"
        if name:
            out[name] = values[f.key]
    return out


# -- reading -------------------------------------------------------------------------------------


def type_name(kind: type) -> str:
    return {
        str: "a string",
        int: "a whole number",
        float: "a number",
        bool: "true or false",
        date: "a date (YYYY-MM-DD)",
        datetime: "a date-time with an offset",
        dict: "a table",
        list: "a list",
    }.get(kind, kind.__name__)


def describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, datetime):
        return f"date-time {value.isoformat()}"
    if isinstance(value, date):
        return f"date {value.isoformat()}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, int | float):
        return f"number {value}"
    return type(value).__name__


def _is_kind(value: Any, kinds: tuple[type, ...]) -> bool:
    if not isinstance(value, kinds):
        return False
    if isinstance(value, bool) and bool not in kinds:
        return False
    # a datetime is a date subclass; a date field wants a bare date
    return not (isinstance(value, datetime) and datetime not in kinds)


class Reader:
    """Reads declared fields out of the TOML tables and collects every problem."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.problems: list[str] = []

    def problem(self, name: str, what: str, cite: str | None = None) -> None:
        self.problems.append(f"{name}: {what}" + (f" ({cite})" if cite else ""))

    def table(self, name: str, required: bool = True) -> dict[str, Any]:
        value = self.data.get(name)
        if value is None:
            if required:
                self.problem(f"[{name}]", "missing table")
            return {}
        if not isinstance(value, dict):
            self.problem(f"[{name}]", "must be a table")
            return {}
        return value

    def field(self, table: dict[str, Any], path: str, spec: FieldSpec) -> Any:
        """One field's value, its default if absent, or None (and a problem) if bad."""
        if spec.key not in table:
            if spec.default is REQUIRED:
                self.problem(path, "missing", spec.cite)
                return None
            return spec.default
        value = table[spec.key]
        kinds = spec.kind if isinstance(spec.kind, tuple) else (spec.kind,)
        if not _is_kind(value, kinds):
            names = " or ".join(type_name(k) for k in kinds)
            self.problem(path, f"must be {names}, not {describe(value)}", spec.cite)
            return None
        if spec.check is not None:
            msg = spec.check(value)
            if msg:
                self.problem(path, msg, spec.cite)
                return None
        return value

    def fields(
        self, table: dict[str, Any], prefix: str, specs: Sequence[FieldSpec]
    ) -> dict[str, Any]:
        """Every declared field of ``table``, keyed by its key."""
        return {s.key: self.field(table, f"{prefix}.{s.key}", s) for s in specs}

    def read(self, spec: TableSpec) -> dict[str, Any]:
        """A whole ``[table]``: every declared field, keyed by its key."""
        return self.fields(self.table(spec.name, spec.required), spec.name, spec.fields)

    def read_list(self, spec: ListSpec) -> list[tuple[int, dict[str, Any]]]:
        """Every entry of a ``[[list]]`` that is a table: its index and its fields."""
        raw = self.data.get(spec.name, [])
        if not isinstance(raw, list):
            self.problem(f"[[{spec.name}]]", "must be a list of tables")
            return []
        if spec.empty and not raw:
            self.problem(f"[[{spec.name}]]", spec.empty, spec.empty_cite)
        out = []
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                self.problem(f"{spec.name}[{i}]", f"must be a table with {spec.shape}")
                continue
            out.append((i, self.fields(item, f"{spec.name}[{i}]", spec.fields)))
        return out
