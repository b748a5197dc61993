"""A rented device's ``source`` table: where its data comes from and how to read it.

A gate or lot in the permit may say that its figures come from a device that speaks its
own protocol (docs/protocol.md, "Rented devices"): a LoRaWAN network server's uplink
JSON, a commercial counter's MQTT JSON, or any JSON with its fields named by dotted
path. ``kent-ops adapt`` reads these tables; the aggregator only takes the sensor's
``stale_after_s`` from them. Every problem is reported like the rest of the permit,
``field: what is wrong (cite)``, and an unknown key is an error. The formats and what
each allows beyond the common keys (counting lines, a ``seq`` of its own) come from
their modules (:data:`kent_ops.core.devices.formats.FORMATS`).
"""

from __future__ import annotations

from typing import Any

from kent_ops.core.declared import FieldSpec, Reader, suggestion
from kent_ops.core.devices.formats import FORMATS
from kent_ops.core.devices.spec import SourceSpec

__all__ = [
    "SOURCE_KEYS",
    "SourceSpec",
    "read_source",
]

CITE_SENSORS = "permit:B(2)"  # the persons and vehicles the sensors count, as declared
_PATH_KEYS = ("in", "out", "in_delta", "out_delta", "occupied", "free", "ts", "seq")


def _path(value: str) -> str | None:
    parts = value.split(".")
    if not value or any(not p for p in parts):
        return "must be a dotted path of field names, e.g. decoded.people_in"
    return None


def _topic(value: str) -> str | None:
    if not value or "#" in value[:-1] or any(c in value for c in "\0"):
        return "must be an MQTT topic (filter), e.g. application/+/device/0004a30b001c1234/event/up"
    return None


def _line(value: int) -> str | None:
    return None if 1 <= value <= 4 else "must be 1, 2, 3 or 4 (the counting line)"


def _positive(value: float) -> str | None:
    return "must be more than 0" if value <= 0 else None


def _fmt(value: str) -> str | None:
    if value in FORMATS:
        return None
    names = list(FORMATS)
    return f"must be one of {', '.join(names)}, not {value!r}" + suggestion(value, names)


_F = FieldSpec
SOURCE_KEYS: tuple[FieldSpec, ...] = (
    _F("format", str, check=_fmt),
    _F("topic", str, default=None, check=_topic),
    _F("http", bool, default=False),
    *(_F(key, str, default=None, check=_path) for key in _PATH_KEYS),
    _F("line", int, default=None, check=_line),
    _F("stale_after_s", (int, float), default=None, check=_positive),
)
"""Every key a ``source`` table may hold."""


def read_source(r: Reader, path: str, sensor: str, kind: str, raw: Any) -> SourceSpec | None:
    """One gate's or lot's ``source`` table, or None (with its problems) if it is bad."""
    where = f"{path}.source"
    if not isinstance(raw, dict):
        r.problem(where, 'must be a table, e.g. { format = "json", topic = "…", in = "…" }')
        return None
    before = len(r.problems)
    v = r.fields(raw, where, SOURCE_KEYS)
    if v["format"] is None:
        return None
    fmt = FORMATS[v["format"]]
    if fmt.gate_paths is not None:
        if kind == "gate" and not any(v[k] for k in ("in", "out", "in_delta", "out_delta")):
            v.update(fmt.gate_paths(v["line"] or 1))
    elif v["line"] is not None:
        lined = " or ".join(f.name for f in FORMATS.values() if f.gate_paths is not None)
        r.problem(f"{where}.line", f"only a {lined} source has counting lines")
    _check_where(r, where, v)
    _check_fields(r, where, kind, v)
    if len(r.problems) > before:
        return None
    return SourceSpec(
        sensor=sensor,
        kind=kind,
        format=v["format"],
        topic=v["topic"],
        http=v["http"],
        in_=v["in"],
        out=v["out"],
        in_delta=v["in_delta"],
        out_delta=v["out_delta"],
        occupied=v["occupied"],
        free=v["free"],
        ts=v["ts"],
        seq=v["seq"],
        line=v["line"],
        stale_after_s=float(v["stale_after_s"]) if v["stale_after_s"] is not None else None,
    )


def _check_where(r: Reader, where: str, v: dict[str, Any]) -> None:
    if v["topic"] is None and not v["http"]:
        r.problem(f"{where}.topic", "missing; name the device's MQTT topic, or set http = true")
    if v["topic"] is not None and v["http"]:
        r.problem(f"{where}.http", "a device either publishes on a topic or posts over HTTP")
    if v["seq"] is not None and FORMATS[v["format"]].own_counter:
        r.problem(f"{where}.seq", f"a {v['format']} source has its own frame counter")


def _check_fields(r: Reader, where: str, kind: str, v: dict[str, Any]) -> None:
    """A gate reads in and out (totals or deltas); a lot reads occupied or free."""
    totals = [k for k in ("in", "out") if v[k] is not None]
    deltas = [k for k in ("in_delta", "out_delta") if v[k] is not None]
    spaces = [k for k in ("occupied", "free") if v[k] is not None]
    if kind == "gate":
        for k in spaces:
            r.problem(f"{where}.{k}", "a gate counts persons in and out; occupied/free is a lot's")
        if totals and deltas:
            r.problem(where, "give in and out as totals or in_delta and out_delta, not both")
        elif len(totals) == 1 or len(deltas) == 1:
            pair = ("in", "out") if totals else ("in_delta", "out_delta")
            missing = pair[1] if (totals or deltas)[0] == pair[0] else pair[0]
            r.problem(f"{where}.{missing}", f"missing; a gate needs both {pair[0]} and {pair[1]}")
        elif not totals and not deltas:
            r.problem(where, "a gate needs in and out (totals) or in_delta and out_delta")
        return
    for k in (*totals, *deltas):
        r.problem(f"{where}.{k}", "a lot reports occupied or free; in/out is a gate's")
    if len(spaces) != 1:
        r.problem(where, "a lot needs exactly one of occupied or free (occupied = capacity − free)")
