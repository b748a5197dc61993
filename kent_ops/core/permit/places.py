"""Where the assembly is: its properties, and the property each sensor stands on.

permit:A reaches everyone who lets property be used "for any part or portion" of an
assembly of more than 500 persons "in the aggregate", so one assembly may spread over
several properties, each with its owner (and tenant) answerable. A single
``[property]`` table is one property (id ``main`` unless it says otherwise) that every
sensor stands on; with ``[[properties]]`` every sensor names its property, and a gate
between two properties names ``from`` and ``to`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kent_ops.core.declared import ABSENT, Reader, suggestion
from kent_ops.core.devices.source import SourceSpec, read_source
from kent_ops.core.permit import schema as schema
from kent_ops.core.permit.model import GateSpec, Property
from kent_ops.core.sensor_kinds import GATE, LOT, SENSOR_KINDS, STATION, SensorKind

__all__ = ["READERS", "read_properties", "read_sensors"]


def read_properties(
    r: Reader, inspection_default: bool | None
) -> tuple[tuple[Property, ...], list[str]]:
    """The properties: one ``[property]`` or several ``[[properties]]``, ids unique.

    Also every id read, even of a property with other problems, so that its sensors
    are not refused as well: one mistake, one problem.
    """
    single, several = "property" in r.data, "properties" in r.data
    if single and several:
        r.problem(
            "[[properties]]",
            "give one [property] table or [[properties]], not both",
            schema.CITE_DECLARED,
        )
        return (), []
    if not several:
        if not single:
            r.problem(
                "[property]",
                "missing table; an assembly on several properties lists [[properties]] instead",
                schema.CITE_DECLARED,
            )
            return (), []
        entries = [("property", r.read(schema.PROPERTY))]
    else:
        entries = [(f"properties[{i}]", v) for i, v in r.read_list(schema.PROPERTIES)]
        if not r.data["properties"]:
            r.problem("[[properties]]", "at least one is required", schema.CITE_DECLARED)
    out: list[Property] = []
    ids: list[str] = []
    for name, v in entries:
        if v["id"] in ids:
            r.problem(f"{name}.id", f"{v['id']!r} is listed twice")
            continue
        if v["id"] is not None:
            ids.append(v["id"])
        prop = _property(v, inspection_default)
        if prop is not None:
            out.append(prop)
    return tuple(out), ids


def _property(v: dict[str, Any], inspection_default: bool | None) -> Property | None:
    authorized = v["inspection_authorized"]
    if authorized is ABSENT:
        authorized = bool(inspection_default)
    if any(v[k] is None for k in ("id", "owner", "address", "tenant_authorized")):
        return None
    if authorized is None:
        return None
    return Property(
        id=v["id"],
        owner=v["owner"],
        address=v["address"],
        tenant=v["tenant"],
        inspection_authorized=authorized,
        tenant_authorized=v["tenant_authorized"],
    )


@dataclass(slots=True)
class _Places:
    """Checks the property a sensor names against the properties the file lists."""

    r: Reader
    known: list[str]
    default: str | None
    """The one property of a ``[property]`` file, which every sensor stands on."""

    def on(self, path: str, named: str | None, kind: str) -> str | None:
        if named is None:
            if self.default is None and self.known:
                self.r.problem(
                    f"{path}.property",
                    f"missing; with [[properties]] every {kind} names its property",
                    schema.CITE_AGGREGATE,
                )
            return self.default
        return named if self.is_known(f"{path}.property", named) else None

    def is_known(self, path: str, named: str) -> bool:
        if named in self.known:
            return True
        if self.known:  # no known property: the properties' own problems say why
            self.r.problem(path, f"unknown property {named!r}" + suggestion(named, self.known))
        return False

    def gate(self, path: str, v: dict[str, Any]) -> GateSpec:
        """A gate on one property's boundary, or between two (``from`` -> ``to``)."""
        manual = v["manual"] if v["manual"] is not ABSENT else v["id"].endswith("-manual")
        src, dst = v["from"], v["to"]
        if src is None and dst is None:
            return GateSpec(v["id"], bool(manual), self.on(path, v["property"], "gate"), None, None)
        if v["property"] is not None:
            self.r.problem(
                path, "names a property and from/to; a gate is on one boundary or between two"
            )
        for key, named in (("from", src), ("to", dst)):
            if named is None:
                self.r.problem(
                    f"{path}.{key}", "missing; a gate between two properties names from and to"
                )
            else:
                self.is_known(f"{path}.{key}", named)
        if src is not None and src == dst:
            self.r.problem(f"{path}.to", f"must differ from from ({src!r})")
        return GateSpec(v["id"], bool(manual), None, src, dst)


@dataclass(slots=True)
class _Listed:
    """What the permit's lists of sensors hold, gathered kind by kind."""

    places: _Places
    ids: list[str] = field(default_factory=list)
    """Every id as listed, to find one listed twice."""
    specs: dict[str, GateSpec] = field(default_factory=dict)
    lots: dict[str, int] = field(default_factory=dict)
    lot_on: dict[str, str] = field(default_factory=dict)
    station_on: dict[str, str] = field(default_factory=dict)
    sources: dict[str, SourceSpec | None] = field(default_factory=dict)

    def entries(self, kind: SensorKind) -> Iterator[tuple[str, dict[str, Any]]]:
        """Each entry of the kind's list that has an id, and its path; its ``source`` is
        read after the kind's own reader has placed it."""
        r = self.places.r
        for i, v in r.read_list(schema.SENSOR_LISTS[kind.name]):
            if v["id"] is None:
                continue
            path = f"{kind.permit_list}[{i}]"
            self.ids.append(v["id"])
            yield path, v
            if kind.rentable and v["source"] is not None:
                self.sources[v["id"]] = read_source(r, path, v["id"], kind.name, v["source"])


def _gates(listed: _Listed, kind: SensorKind) -> None:
    places = listed.places
    for path, v in listed.entries(kind):
        listed.specs.setdefault(v["id"], places.gate(path, v))
    if listed.specs and places.known and not any(g.boundary for g in listed.specs.values()):
        places.r.problem(
            f"[[{kind.permit_list}]]",
            "at least one gate must be on the assembly's boundary (name its property)",
            schema.CITE_AGGREGATE,
        )


def _lots(listed: _Listed, kind: SensorKind) -> None:
    for path, v in listed.entries(kind):
        if v["capacity"] is not None:
            listed.lots[v["id"]] = v["capacity"]
            listed.lot_on[v["id"]] = listed.places.on(path, v["property"], kind.name) or ""


def _stations(listed: _Listed, kind: SensorKind) -> None:
    for path, v in listed.entries(kind):
        listed.station_on[v["id"]] = listed.places.on(path, v["property"], kind.name) or ""


READERS: dict[str, Callable[[_Listed, SensorKind], None]] = {
    GATE.name: _gates,
    LOT.name: _lots,
    STATION.name: _stations,
}
"""How each kind of sensor's entries are placed, by the kind's name: what is its own."""


def read_sensors(r: Reader, known: list[str]) -> dict[str, Any]:
    """Every kind's sensors (core/sensor_kinds/): ids unique across all, each on a property."""
    single = "properties" not in r.data
    listed = _Listed(_Places(r, known, known[0] if single and known else None))
    for kind in SENSOR_KINDS:
        READERS[kind.name](listed, kind)
    _check_unique(r, listed.ids)
    specs = listed.specs
    return {
        "gates": tuple(specs),
        "manual_gates": frozenset(g.id for g in specs.values() if g.manual),
        "gate_specs": specs,
        "lots": listed.lots,
        "lot_property": listed.lot_on,
        "staff_stations": tuple(listed.station_on),
        "station_property": listed.station_on,
        "sources": {k: v for k, v in listed.sources.items() if v is not None},
    }


def _check_unique(r: Reader, ids: list[str]) -> None:
    seen: set[str] = set()
    for sensor_id in ids:
        if sensor_id in seen:
            r.problem(sensor_id, "sensor id listed twice (gates, lots and stations share ids)")
        seen.add(sensor_id)
