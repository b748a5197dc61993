"""The permit file: one permitted assembly and the sensors installed for it (SPEC 2).

Loading validates everything and reports every problem at once, as
``field: what is wrong (cite)``, because an organiser fixing a permit file should not
have to run the checker once per mistake. A permit may be stricter than the ordinance,
never looser.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kent_ops.core import ordinance as law
from kent_ops.core.errors import UsageError

__all__ = [
    "Agent",
    "Alerting",
    "Permit",
    "PermitError",
    "Window",
    "load_permit",
    "parse_permit",
]

PERMIT_STATUSES = ("issued", "pending", "denied", "revoked", "none")
ID_PATTERN = re.compile(r"^[a-z0-9-]+$")
SENSOR_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+$")


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
    application_filed_on: date | None
    hearing_notice_published_on: date | None
    hearing_on: date | None
    decided_on: date | None
    applicant_name: str
    is_corporation: bool
    resides_in_town: bool
    agent: Agent | None
    property_owner: str
    property_address: str
    windows: tuple[Window, ...]
    max_at_one_time: int
    max_collective: int
    vehicles_at_one_time: int
    vehicles_collective: int
    security_guards: int
    persons_per_nurse: int
    doctors_min: int
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
    bond_posted_on: date | None
    fee_paid_on: date | None
    gates: tuple[str, ...]
    manual_gates: frozenset[str]
    lots: dict[str, int]
    staff_stations: tuple[str, ...]
    alerting: Alerting
    signing_keys_file: Path | None = None
    source_path: Path | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

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


class _Reader:
    """Reads typed fields out of the TOML tables and collects problems as it goes."""

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

    def get(
        self,
        table: dict[str, Any],
        path: str,
        kind: type | tuple[type, ...],
        *,
        default: Any = ...,
        cite: str | None = None,
        check: Callable[[Any], str | None] | None = None,
    ) -> Any:
        key = path.rsplit(".", 1)[-1]
        if key not in table:
            if default is ...:
                self.problem(path, "missing", cite)
                return None
            return default
        value = table[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(value, kinds)
        if ok and isinstance(value, bool) and bool not in kinds:
            ok = False
        if ok and isinstance(value, datetime) and datetime not in kinds:
            ok = False  # a datetime is a date subclass; a date field wants a bare date
        if not ok:
            names = " or ".join(_type_name(k) for k in kinds)
            self.problem(path, f"must be {names}, not {_describe(value)}", cite)
            return None
        if check is not None:
            msg = check(value)
            if msg:
                self.problem(path, msg, cite)
                return None
        return value


def _type_name(kind: type) -> str:
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


def _describe(value: Any) -> str:
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


def _non_negative(value: int | float) -> str | None:
    return "must not be negative" if value < 0 else None


def _positive(value: int | float) -> str | None:
    return "must be more than 0" if value <= 0 else None


def _non_empty(value: str) -> str | None:
    return "must not be empty" if not value.strip() else None


def load_permit(path: str | Path) -> Permit:
    """Load and validate a permit file; raise :class:`PermitError` listing every problem."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise PermitError([f"{path}: no such file"], str(path)) from None
    except IsADirectoryError:
        raise PermitError([f"{path}: is a folder, not a permit file"], str(path)) from None
    except PermissionError:
        raise PermitError([f"{path}: cannot be read (permission denied)"], str(path)) from None
    except UnicodeDecodeError:
        raise PermitError([f"{path}: is not UTF-8 text"], str(path)) from None
    return parse_permit(text, source=path)


def parse_permit(text: str, source: Path | str | None = None) -> Permit:
    """Validate the TOML text of a permit; raise :class:`PermitError` listing every problem."""
    label = str(source) if source is not None else "permit"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PermitError([f"TOML syntax: {exc}"], label) from None
    r = _Reader(data)

    event = r.table("event")
    event_id = r.get(
        event,
        "event.id",
        str,
        check=lambda v: None if ID_PATTERN.match(v) else "must match [a-z0-9-]+",
    )
    event_name = r.get(event, "event.name", str, check=_non_empty)
    tz_name = r.get(event, "event.timezone", str, default="America/New_York")
    tz = ZoneInfo("America/New_York")
    if tz_name is not None:
        try:
            tz = ZoneInfo(tz_name)
        except (ZoneInfoNotFoundError, ValueError):
            r.problem("event.timezone", f"unknown time zone {tz_name!r}")

    permit = r.table("permit")
    number = r.get(permit, "permit.number", str, default="")
    status = r.get(
        permit,
        "permit.status",
        str,
        cite="permit:A",
        check=lambda v: (
            None
            if v in PERMIT_STATUSES
            else f"must be one of {', '.join(PERMIT_STATUSES)}, not {v!r}"
        ),
    )
    if status == "issued" and not number:
        r.problem("permit.number", "an issued permit needs its number", "permit:A")
    filed = r.get(permit, "permit.application_filed_on", date, default=None, cite="permit:B")
    notice = r.get(
        permit, "permit.hearing_notice_published_on", date, default=None, cite="permit:B"
    )
    hearing = r.get(permit, "permit.hearing_on", date, default=None, cite="permit:B")
    decided = r.get(permit, "permit.decided_on", date, default=None, cite="permit:B")

    applicant = r.table("applicant")
    applicant_name = r.get(applicant, "applicant.name", str, cite="permit:B(1)", check=_non_empty)
    is_corporation = r.get(applicant, "applicant.is_corporation", bool, default=False)
    resides = r.get(applicant, "applicant.resides_in_town", bool, default=False)
    agent: Agent | None = None
    agent_raw = applicant.get("agent")
    if agent_raw is not None:
        if not isinstance(agent_raw, dict):
            r.problem("applicant.agent", "must be a table", "permit:B(1)")
        else:
            a_name = r.get(agent_raw, "applicant.agent.name", str, cite="permit:B(1)")
            a_addr = r.get(agent_raw, "applicant.agent.address", str, cite="permit:B(1)")
            a_county = r.get(agent_raw, "applicant.agent.county", str, cite="permit:B(1)")
            if a_name is not None and a_addr is not None and a_county is not None:
                agent = Agent(a_name, a_addr, a_county)

    prop = r.table("property")
    owner = r.get(prop, "property.owner", str, cite="permit:B(2)", check=_non_empty)
    address = r.get(prop, "property.address", str, cite="permit:B(2)", check=_non_empty)

    windows: list[Window] = []
    raw_windows = data.get("windows")
    if not isinstance(raw_windows, list) or not raw_windows:
        r.problem("[[windows]]", "at least one permitted window is required", "permit:B(2)")
    else:
        for i, w in enumerate(raw_windows):
            name = f"windows[{i}]"
            if not isinstance(w, dict):
                r.problem(name, "must be a table with start and end")
                continue
            start = r.get(w, f"{name}.start", datetime, cite="permit:B(2)")
            end = r.get(w, f"{name}.end", datetime, cite="permit:B(2)")
            bad = False
            for label_, value in ((f"{name}.start", start), (f"{name}.end", end)):
                if value is not None and value.tzinfo is None:
                    r.problem(label_, "needs an offset, e.g. 2027-07-04T10:00:00-04:00")
                    bad = True
            if start is None or end is None or bad:
                continue
            if end <= start:
                r.problem(f"{name}.end", "must be after its start", "permit:B(2)")
                continue
            windows.append(Window(start, end))
        ordered = sorted(windows, key=lambda w: w.start)
        for a, b in zip(ordered, ordered[1:], strict=False):
            if b.start < a.end:
                r.problem("[[windows]]", f"windows overlap at {b.start.isoformat()}")

    limits = r.table("limits")
    max_one = r.get(limits, "limits.max_at_one_time", int, cite="permit:B(2)", check=_positive)
    max_coll = r.get(limits, "limits.max_collective", int, cite="permit:B(2)", check=_positive)
    if max_one is not None and max_coll is not None and max_coll < max_one:
        r.problem(
            "limits.max_collective",
            f"({max_coll}) cannot be less than max_at_one_time ({max_one})",
            "permit:B(2)",
        )
    veh_one = r.get(
        limits, "limits.vehicles_at_one_time", int, cite="permit:B(2)", check=_non_negative
    )
    veh_coll = r.get(
        limits, "limits.vehicles_collective", int, default=0, cite="permit:B(2)",
        check=_non_negative,
    )  # fmt: skip

    staffing = r.table("staffing")
    guards = r.get(
        staffing, "staffing.security_guards", int, default=0, cite="permit:B(8)",
        check=_non_negative,
    )  # fmt: skip
    per_nurse = r.get(
        staffing,
        "staffing.persons_per_nurse",
        int,
        default=law.PERSONS_PER_NURSE,
        cite=law.CITE_MEDICAL,
        check=lambda v: (
            "must be more than 0"
            if v <= 0
            else (
                f"{v} persons per nurse is looser than the ordinance's 1 registered nurse per "
                f"{law.PERSONS_PER_NURSE} persons"
                if v > law.PERSONS_PER_NURSE
                else None
            )
        ),
    )
    doctors = r.get(
        staffing,
        "staffing.doctors_min",
        int,
        default=law.DOCTORS_MIN,
        cite=law.CITE_MEDICAL,
        check=lambda v: (
            f"{v} is looser than the ordinance's at least {law.DOCTORS_MIN} doctor "
            "in attendance at all times"
            if v < law.DOCTORS_MIN
            else None
        ),
    )

    fac = r.table("facilities")
    overnight = r.get(fac, "facilities.overnight", bool, default=False, cite="permit:B(14)")
    housing = r.get(fac, "facilities.housing_declared", bool, default=False, cite="permit:C(7)")
    water = r.get(fac, "facilities.water_approved", bool, default=False, cite="permit:C(1)")
    toilets = r.get(fac, "facilities.toilets_approved", bool, default=False, cite="permit:C(2)")
    sewage = r.get(fac, "facilities.sewage_approved", bool, default=False, cite="permit:C(3)")
    food = r.get(fac, "facilities.food_approved", bool, default=False, cite="permit:C(5)")
    food_served = r.get(fac, "facilities.food_served", bool, default=True, cite="permit:B(7)")
    inspection = r.get(
        fac, "facilities.inspection_authorized", bool, default=False, cite="permit:D"
    )

    ins = r.table("insurance")
    bi_person = r.get(
        ins, "insurance.bodily_injury_per_person", int, cite=law.CITE_INSURANCE,
        check=_non_negative,
    )  # fmt: skip
    bi_occ = r.get(
        ins, "insurance.bodily_injury_per_occurrence", int, cite=law.CITE_INSURANCE,
        check=_non_negative,
    )  # fmt: skip
    pd = r.get(ins, "insurance.property_damage", int, cite=law.CITE_INSURANCE, check=_non_negative)
    cancel = r.get(
        ins, "insurance.cancellation_notice_days", int, cite=law.CITE_INSURANCE,
        check=_non_negative,
    )  # fmt: skip

    bond = r.table("bond", required=False)
    bond_amount = r.get(
        bond, "bond.amount", int, default=0, cite=law.CITE_CLEAN_UP, check=_non_negative
    )
    bond_posted = r.get(bond, "bond.posted_on", date, default=None, cite=law.CITE_CLEAN_UP)
    fee = r.table("fee", required=False)
    fee_paid = r.get(fee, "fee.paid_on", date, default=None, cite="fee")

    gates = _sensor_list(r, data, "gates", required=True)
    manual_gates: set[str] = set()
    for item in data.get("gates", []) if isinstance(data.get("gates"), list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            manual = item.get("manual", item["id"].endswith("-manual"))
            if not isinstance(manual, bool):
                r.problem(f"gates.{item['id']}.manual", "must be true or false")
            elif manual:
                manual_gates.add(item["id"])
    lots: dict[str, int] = {}
    raw_lots = data.get("lots", [])
    if not isinstance(raw_lots, list):
        r.problem("[[lots]]", "must be a list of tables")
    else:
        for i, lot in enumerate(raw_lots):
            if not isinstance(lot, dict):
                r.problem(f"lots[{i}]", "must be a table with id and capacity")
                continue
            lot_id = r.get(lot, f"lots[{i}].id", str, check=_sensor_id)
            cap = r.get(lot, f"lots[{i}].capacity", int, cite="permit:C(6)", check=_non_negative)
            if lot_id is not None and cap is not None:
                lots[lot_id] = cap
    stations = _sensor_list(r, data, "staff_stations", required=False)
    seen: set[str] = set()
    for sensor_id in [*gates, *lots, *stations]:
        if sensor_id in seen:
            r.problem(sensor_id, "sensor id listed twice (gates, lots and stations share ids)")
        seen.add(sensor_id)

    al = r.table("alerting", required=False)
    pending_s = r.get(al, "alerting.pending_s", (int, float), default=10, check=_non_negative)
    clear_s = r.get(al, "alerting.clear_s", (int, float), default=30, check=_non_negative)
    stale_s = r.get(al, "alerting.stale_after_s", (int, float), default=60, check=_positive)
    hold_at = r.get(al, "alerting.hold_at", int, default=max_one or 0, check=_positive)
    if hold_at is not None and max_one is not None and hold_at > max_one:
        r.problem(
            "alerting.hold_at",
            f"({hold_at}) must not exceed limits.max_at_one_time ({max_one})",
            "permit:B(2)",
        )
    default_resume = int(hold_at * 0.99) if hold_at else 0
    resume = r.get(al, "alerting.resume_below", int, default=default_resume, check=_positive)
    if resume is not None and hold_at is not None and resume > hold_at:
        r.problem("alerting.resume_below", f"({resume}) must not exceed hold_at ({hold_at})")

    signing = r.table("signing", required=False)
    keys_file: Path | None = None
    keys_raw = r.get(signing, "signing.keys_file", str, default=None)
    if keys_raw:
        keys_file = Path(keys_raw)
        if not keys_file.is_absolute() and isinstance(source, Path):
            keys_file = source.parent / keys_file

    if r.problems:
        raise PermitError(r.problems, label)
    return Permit(
        event_id=event_id,
        event_name=event_name,
        timezone=tz,
        number=number,
        status=status,
        application_filed_on=filed,
        hearing_notice_published_on=notice,
        hearing_on=hearing,
        decided_on=decided,
        applicant_name=applicant_name,
        is_corporation=is_corporation,
        resides_in_town=resides,
        agent=agent,
        property_owner=owner,
        property_address=address,
        windows=tuple(sorted(windows, key=lambda w: w.start)),
        max_at_one_time=max_one,
        max_collective=max_coll,
        vehicles_at_one_time=veh_one,
        vehicles_collective=veh_coll,
        security_guards=guards,
        persons_per_nurse=per_nurse,
        doctors_min=doctors,
        overnight=overnight,
        housing_declared=housing,
        water_approved=water,
        toilets_approved=toilets,
        sewage_approved=sewage,
        food_approved=food,
        food_served=food_served,
        inspection_authorized=inspection,
        insurance_bodily_injury_per_person=bi_person,
        insurance_bodily_injury_per_occurrence=bi_occ,
        insurance_property_damage=pd,
        insurance_cancellation_notice_days=cancel,
        bond_amount=bond_amount,
        bond_posted_on=bond_posted,
        fee_paid_on=fee_paid,
        gates=tuple(gates),
        manual_gates=frozenset(manual_gates),
        lots=lots,
        staff_stations=tuple(stations),
        alerting=Alerting(
            pending_s=float(pending_s),
            clear_s=float(clear_s),
            stale_after_s=float(stale_s),
            hold_at=hold_at,
            resume_below=resume,
        ),
        signing_keys_file=keys_file,
        source_path=source if isinstance(source, Path) else None,
        raw=data,
    )


def _sensor_id(value: str) -> str | None:
    if not SENSOR_ID_PATTERN.match(value):
        return "must be letters, digits, '-', '_' or '.' (it is used in MQTT topics)"
    return None


def _sensor_list(r: _Reader, data: dict[str, Any], name: str, *, required: bool) -> list[str]:
    raw = data.get(name, [])
    ids: list[str] = []
    if not isinstance(raw, list):
        r.problem(f"[[{name}]]", "must be a list of tables")
        return ids
    if required and not raw:
        r.problem(f"[[{name}]]", "at least one is required")
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            r.problem(f"{name}[{i}]", "must be a table with an id")
            continue
        sensor_id = r.get(item, f"{name}[{i}].id", str, check=_sensor_id)
        if sensor_id is not None:
            ids.append(sensor_id)
    return ids


def local_midnight_after(t: datetime, tz: ZoneInfo) -> datetime:
    """The first local midnight strictly after ``t`` in ``tz`` (DST-safe)."""
    local = t.astimezone(tz)
    next_day = (local + timedelta(days=1)).date()
    return datetime(next_day.year, next_day.month, next_day.day, tzinfo=tz)
