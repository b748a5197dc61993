"""Where the assembly is: its properties, and the property each sensor stands on.

permit:A reaches everyone who lets property be used "for any part or portion" of an
assembly of more than 500 persons "in the aggregate", so one assembly may spread over
several properties, each with its owner (and tenant) answerable. A single
``[property]`` table is one property (id ``main`` unless it says otherwise) that every
sensor stands on; with ``[[properties]]`` every sensor names its property, and a gate
between two properties names ``from`` and ``to`` instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kent_ops.core import permit_schema as schema
from kent_ops.core.devices.source import SourceSpec, read_source
from kent_ops.core.permit_model import GateSpec, Property
from kent_ops.core.permit_reader import ABSENT, Reader, suggestion

__all__ = ["read_properties", "read_sensors"]


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


def read_sensors(r: Reader, known: list[str]) -> dict[str, Any]:
    """Gates, lots and staff stations: ids unique across all three, each on a property."""
    single = "properties" not in r.data
    places = _Places(r, known, known[0] if single and known else None)
    ids: list[str] = []  # every id as listed, to find one listed twice
    specs: dict[str, GateSpec] = {}
    sources: dict[str, SourceSpec | None] = {}
    for i, g in r.read_list(schema.GATES):
        if g["id"] is not None:
            ids.append(g["id"])
            specs.setdefault(g["id"], places.gate(f"gates[{i}]", g))
            if g["source"] is not None:
                sources[g["id"]] = read_source(r, f"gates[{i}]", g["id"], "gate", g["source"])
    if specs and known and not any(g.boundary for g in specs.values()):
        r.problem(
            "[[gates]]",
            "at least one gate must be on the assembly's boundary (name its property)",
            schema.CITE_AGGREGATE,
        )
    lots: dict[str, int] = {}
    lot_on: dict[str, str] = {}
    for i, lot in r.read_list(schema.LOTS):
        if lot["id"] is not None:
            ids.append(lot["id"])
        if lot["id"] is not None and lot["capacity"] is not None:
            lots[lot["id"]] = lot["capacity"]
            lot_on[lot["id"]] = places.on(f"lots[{i}]", lot["property"], "lot") or ""
        if lot["id"] is not None and lot["source"] is not None:
            sources[lot["id"]] = read_source(r, f"lots[{i}]", lot["id"], "lot", lot["source"])
    station_on: dict[str, str] = {}
    for i, s in r.read_list(schema.STATIONS):
        if s["id"] is not None:
            ids.append(s["id"])
            station_on[s["id"]] = places.on(f"staff_stations[{i}]", s["property"], "station") or ""
    _check_unique(r, ids)
    return {
        "gates": tuple(specs),
        "manual_gates": frozenset(g.id for g in specs.values() if g.manual),
        "gate_specs": specs,
        "lots": lots,
        "lot_property": lot_on,
        "staff_stations": tuple(station_on),
        "station_property": station_on,
        "sources": {k: v for k, v in sources.items() if v is not None},
    }


def _check_unique(r: Reader, ids: list[str]) -> None:
    seen: set[str] = set()
    for sensor_id in ids:
        if sensor_id in seen:
            r.problem(sensor_id, "sensor id listed twice (gates, lots and stations share ids)")
        seen.add(sensor_id)
