"""Every kind of sensor kent-ops takes, in one table that the rest of kent-ops reads.

A kind of sensor reaches almost every part of kent-ops: its topic, its payload and the
decoder, the permit's list of them, whether its silence is a fault, whether it makes
attendance uncertain, the broker's access list, the simulator's device, the reference
tally and the report. Each of those reads the kind's entry here instead of spelling
``"gate"`` or ``"lot"`` itself, so a new kind is one entry (with its payload in
:mod:`kent_ops.core.sensor_kinds.payloads`) and the logic that is really its own: its counting
state, and a rule if it has one. docs/architecture.md, "A new sensor kind", is the
recipe; tests/core/test_sensor_kinds.py fails for a kind that is only half added.

A deputy's manual tally is a gate counter in all but its liveness: it is the gate kind's
manual flavour (:data:`MANUAL_TALLY`), with the same topic, payload and permit list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from kent_ops.core import ordinance as law
from kent_ops.core.declared import ABSENT, FieldSpec, non_negative
from kent_ops.core.sensor_kinds.payloads import (
    Badge,
    GateCount,
    LotOccupancy,
    Reading,
    Roster,
    check_badge,
    check_gate,
    check_lot,
    check_roster,
)

__all__ = [
    "GATE",
    "LOT",
    "MANUAL_TALLY",
    "SENSOR_KINDS",
    "STATION",
    "Figure",
    "Message",
    "SensorKind",
    "by_name",
    "is_reading",
    "kind_of",
]

Figure = Literal["attendance", "vehicles", "staff"]
"""The figure a kind's readings move: persons present, cars parked, staff on duty."""


@dataclass(frozen=True, slots=True)
class Message:
    """One of the messages a kind publishes: its record kind, topic leaf, payload, checks."""

    record: str
    leaf: str
    payload: type[Reading]
    check: Callable[[Any], str | None]


@dataclass(frozen=True, slots=True)
class SensorKind:
    """One kind of sensor: everything the shared parts of kent-ops need to know of it."""

    name: str
    """What the permit lists it as (``Permit.sensors``), the status's ``SensorState.kind``
    and a device's ``kind``: ``gate``, ``lot``, ``station``."""
    record: str
    """The kind of its messages once decoded (``Decoded.kind``, ``FeedResult.kind``) and
    of its topic (``TopicRef.kind``): ``gate``, ``lot``, ``badge``."""
    area: str
    """Its topic is ``kent/{event}/{area}/{sensor id}/{leaf}``."""
    leaf: str
    payload: type[Reading]
    """What it publishes (:mod:`kent_ops.core.sensor_kinds.payloads`), decoded by wire.inbound."""
    check: Callable[[Any], str | None]
    """The payload's checks its types do not express; None when it is good."""
    permit_list: str
    """The permit's ``[[list]]`` naming these sensors, and the ``Permit`` attribute holding
    their ids in file order."""
    permit_fields: tuple[FieldSpec, ...]
    """The keys of an entry of that list besides ``id`` (and ``source``, when rentable)."""
    permit_shape: str
    """What each entry must hold, for the problem when one is not a table."""
    permit_empty: str | None
    """The problem when the permit lists none; None when it may list none."""
    rentable: bool
    """A rented device may stand for it (a ``source`` table, translated by ``kent-ops
    adapt``; :mod:`kent_ops.core.devices`)."""
    noun: str
    """One of them, in a sentence."""
    plural: str
    """Several, as the report lists them."""
    figure: Figure
    heartbeats: bool
    """It republishes its reading when nothing happens, so silence for ``stale_after_s``
    is an outage (``sensor-offline``); a kind that speaks only when used is never stale."""
    makes_uncertain: bool
    """While one is offline or stale, attendance is uncertain (its count may be behind)."""
    simulated: bool
    """``kent-ops simulate`` plays it (and the rehearsal's broker account may write it)."""
    device: str
    """The class that plays it in the field, by dotted name (the core imports no device)."""
    in_sensors_row: bool
    """The report's summary lists these under "Sensors" (lots are under "Parking", with
    their capacities)."""
    device_noun: str
    """What plays it, in a sentence: ``gate counter``, ``badge reader`` (a gap names it)."""
    restatement: Message | None = None
    """A second message on a topic of its own (``{area}/{id}/{leaf}``) in which the device
    re-states its whole state, sharing the reading's ``seq``: after a gap the figure is
    known again from it. None for a kind whose every reading states it whole."""
    flavour: str = ""
    """Empty for the kind itself; for a flavour (a deputy's manual tally), what it is."""

    def topic(self, prefix: str, sensor: str) -> str:
        """The topic a sensor of this kind publishes its readings on."""
        return f"{prefix}/{self.area}/{sensor}/{self.leaf}"

    @property
    def messages(self) -> tuple[Message, ...]:
        """Its reading, then its re-statement if it has one."""
        reading = Message(self.record, self.leaf, self.payload, self.check)
        return (reading,) if self.restatement is None else (reading, self.restatement)

    def topics(self, prefix: str, sensor: str) -> list[str]:
        """Every topic a sensor of this kind publishes on (its availability aside)."""
        return [f"{prefix}/{self.area}/{sensor}/{m.leaf}" for m in self.messages]


_PROPERTY = FieldSpec("property", str, default=None)

GATE = SensorKind(
    name="gate",
    record="gate",
    area="gate",
    leaf="count",
    payload=GateCount,
    check=check_gate,
    permit_list="gates",
    permit_fields=(
        FieldSpec("manual", bool, default=ABSENT),
        _PROPERTY,
        FieldSpec("from", str, default=None),
        FieldSpec("to", str, default=None),
    ),
    permit_shape="an id",
    permit_empty="at least one is required",
    rentable=True,
    noun="gate",
    plural="gates",
    figure="attendance",
    heartbeats=True,
    makes_uncertain=True,
    simulated=True,
    device="sensors.gate_counter.GateCounter",
    in_sensors_row=True,
    device_noun="gate counter",
)
"""A gate counter: cumulative persons in and out since the device started."""

MANUAL_TALLY = dataclasses.replace(
    GATE,
    heartbeats=False,
    makes_uncertain=False,
    simulated=False,
    device="dashboards.gate.tally.ManualTally",
    device_noun="manual tally",
    flavour="manual tally",
)
"""A deputy's tally (gate ``{gate}-manual``, or ``manual = true``): it publishes on taps
only, so its silence is never a fault, and it never makes attendance uncertain (the
automatic counter it stands in for already did, if it failed). Its deputy keeps it, so
no simulator plays it."""

LOT = SensorKind(
    name="lot",
    record="lot",
    area="parking",
    leaf="occupancy",
    payload=LotOccupancy,
    check=check_lot,
    permit_list="lots",
    permit_fields=(
        FieldSpec("capacity", int, cite=law.CITE_PARKING, check=non_negative),
        _PROPERTY,
    ),
    permit_shape="id and capacity",
    permit_empty=None,
    rentable=True,
    noun="lot",
    plural="lots",
    figure="vehicles",
    heartbeats=True,
    makes_uncertain=False,
    simulated=True,
    device="sensors.lot_sensor.LotSensor",
    in_sensors_row=False,
    device_noun="lot sensor",
)
"""A parking-lot sensor: the cars in the lot now."""

STATION = SensorKind(
    name="station",
    record="badge",
    area="staff",
    leaf="badge",
    payload=Badge,
    check=check_badge,
    permit_list="staff_stations",
    permit_fields=(_PROPERTY,),
    permit_shape="an id",
    permit_empty=None,
    rentable=False,
    noun="staff station",
    plural="staff stations",
    figure="staff",
    heartbeats=False,
    makes_uncertain=False,
    simulated=True,
    device="sensors.badge_reader.BadgeReader",
    in_sensors_row=True,
    device_noun="badge reader",
    restatement=Message("roster", "roster", Roster, check_roster),
)
"""A badge reader at a staff station: doctors, nurses and security on and off duty. It
publishes on a scan, and may re-state who is on duty there (its roster, on
``staff/{station}/roster``); its availability topic is its sign of life."""

SENSOR_KINDS: tuple[SensorKind, ...] = (GATE, LOT, STATION)
"""Every kind, in the order the permit, the topics and the access list take them."""

_MANUAL: dict[str, SensorKind] = {GATE.name: MANUAL_TALLY}
_BY_NAME = {kind.name: kind for kind in SENSOR_KINDS}


def by_name(name: str) -> SensorKind:
    """The kind the permit lists a sensor as (``gate``, ``lot``, ``station``)."""
    return _BY_NAME[name]


def kind_of(name: str, manual: bool = False) -> SensorKind:
    """The kind, or its manual flavour for a deputy's tally."""
    return _MANUAL[name] if manual else _BY_NAME[name]


_READINGS = frozenset(m.payload for kind in SENSOR_KINDS for m in kind.messages)
"""Each kind's payload: a record of one of these is a reading."""


def is_reading(rec: object) -> TypeGuard[Reading]:
    """A sensor's reading, of whichever kind the table of sensor kinds holds."""
    return type(rec) in _READINGS
