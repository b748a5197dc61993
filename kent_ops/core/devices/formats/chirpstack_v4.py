"""``chirpstack-v4``: ChirpStack v4 ``up`` events, as its MQTT integration publishes them.

The topic is ``application/{application id}/device/{DevEUI}/event/up``; the message is
the Protobuf JSON mapping of ``integration.UplinkEvent``: ``{"deduplicationId": …,
"time": …, "deviceInfo": {…, "devEui": …}, "devAddr": …, "fCnt": …, "fPort": …,
"data": …, "object": {…}, "rxInfo": […], "txInfo": {…}}`` (docs/protocol.md, "Rented
devices", says which documentation this was checked against). The figures are read
inside ``object`` (the device profile's codec makes it); the device's time is ``time``.
The JSON mapping leaves out fields at their default, so an absent ``fCnt`` is frame 0.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kent_ops.core.devices.reading import (
    Format,
    Reading,
    Unreadable,
    frame_counter,
    parse_json,
    parse_time,
    read_fields,
)
from kent_ops.core.devices.spec import SourceSpec

__all__ = ["FORMAT", "read", "unwrap"]


def unwrap(message: Any) -> tuple[Any, datetime | None, int | None] | Unreadable:
    """(decoded object, the event's time, its frame counter) of an ``up`` event."""
    if not isinstance(message, dict):
        return Unreadable("not a ChirpStack event (not a JSON object)")
    if "deviceInfo" not in message and "object" not in message:
        return Unreadable("not a ChirpStack v4 up event: no deviceInfo or object")
    decoded = message.get("object")
    if not isinstance(decoded, dict):
        return Unreadable("the up event has no object (is a codec set in the device profile?)")
    counter = frame_counter(message.get("fCnt", 0), "fCnt")
    if isinstance(counter, Unreadable):
        return counter
    when: datetime | None = None
    if message.get("time") is not None:
        parsed = parse_time(message["time"], "time")
        if isinstance(parsed, Unreadable):
            return parsed
        when = parsed
    return decoded, when, counter


def read(spec: SourceSpec, topic: str, payload: bytes) -> Reading | Unreadable:
    """One ``up`` event as the sensor's reading."""
    message = parse_json(payload)
    if isinstance(message, Unreadable):
        return message
    parts = unwrap(message)
    if isinstance(parts, Unreadable):
        return parts
    decoded, when, counter = parts
    return read_fields(spec, decoded, when, counter)


FORMAT = Format("chirpstack-v4", read)
