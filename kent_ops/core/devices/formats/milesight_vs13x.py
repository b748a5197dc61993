"""``milesight-vs13x``: the Milesight VS133 / VS135 people counters' JSON.

Milesight's own decoder for these counters turns each uplink into one flat JSON object
per counting line ``n`` (1 to 4): ``line_n_total_in`` and ``line_n_total_out``, the
totals since the counter's last reset, and ``line_n_period_in`` / ``line_n_period_out``,
the persons of the last reporting period (docs/protocol.md, "Rented devices", says which
documentation this was checked against). The object arrives bare (published by a
gateway's built-in network server or an integration) or inside a The Things Stack
uplink (``decoded_payload``) or a ChirpStack event (``object``); the envelope then gives
the frame counter and time. Totals are read when the message has them; a message with
only the period figures is read as deltas.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from kent_ops.core.devices.formats import chirpstack_v4, ttn_v3
from kent_ops.core.devices.reading import (
    MISSING,
    Format,
    Reading,
    Unreadable,
    find,
    parse_json,
    read_fields,
)
from kent_ops.core.devices.spec import SourceSpec

__all__ = ["FORMAT", "read"]


def _open(message: Any) -> tuple[Any, datetime | None, int | None] | Unreadable:
    if isinstance(message, dict) and "uplink_message" in message:
        return ttn_v3.unwrap(message)
    if isinstance(message, dict) and ("deviceInfo" in message or "object" in message):
        return chirpstack_v4.unwrap(message)
    if not isinstance(message, dict):
        return Unreadable("not a Milesight counter's message (not a JSON object)")
    return message, None, None


def read(spec: SourceSpec, topic: str, payload: bytes) -> Reading | Unreadable:
    """One counter message as the gate's reading (totals, else the period's deltas)."""
    message = parse_json(payload)
    if isinstance(message, Unreadable):
        return message
    parts = _open(message)
    if isinstance(parts, Unreadable):
        return parts
    decoded, when, counter = parts
    if spec.kind == "gate" and not spec.deltas and spec.in_ is not None:
        n = spec.line or 1
        if (
            find(decoded, spec.in_) is MISSING
            and find(decoded, f"line_{n}_period_in") is not MISSING
        ):
            spec = replace(
                spec,
                in_=None,
                out=None,
                in_delta=f"line_{n}_period_in",
                out_delta=f"line_{n}_period_out",
            )
    return read_fields(spec, decoded, when, counter)


def _gate_paths(line: int) -> dict[str, str]:
    """Milesight's decoder names a gate's totals by counting line."""
    return {"in": f"line_{line}_total_in", "out": f"line_{line}_total_out"}


FORMAT = Format("milesight-vs13x", read, gate_paths=_gate_paths)
