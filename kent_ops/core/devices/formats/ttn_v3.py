"""``ttn-v3``: The Things Stack (v3) uplink messages, as its MQTT server publishes them.

The topic is ``v3/{application id}@{tenant id}/devices/{device id}/up``; the message is
``{"end_device_ids": {…}, "received_at": …, "uplink_message": {"f_cnt": …,
"frm_payload": …, "decoded_payload": {…}, "received_at": …, …}}`` (docs/protocol.md,
"Rented devices", says which documentation this was checked against). The figures are
read inside ``uplink_message.decoded_payload`` (the application's payload formatter
makes it); the device's time is the uplink's ``received_at``. The Things Stack leaves
out empty fields, so an absent ``f_cnt`` is frame 0.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kent_ops.core.devices.reading import (
    MISSING,
    Format,
    Reading,
    Unreadable,
    find,
    frame_counter,
    parse_json,
    parse_time,
    read_fields,
)
from kent_ops.core.devices.spec import SourceSpec

__all__ = ["FORMAT", "read", "unwrap"]


def unwrap(message: Any) -> tuple[Any, datetime | None, int | None] | Unreadable:
    """(decoded payload, the uplink's time, its frame counter) of an uplink message."""
    if not isinstance(message, dict):
        return Unreadable("not a The Things Stack message (not a JSON object)")
    uplink = message.get("uplink_message")
    if not isinstance(uplink, dict):
        return Unreadable("not an uplink: the message has no uplink_message")
    decoded = uplink.get("decoded_payload")
    if not isinstance(decoded, dict):
        return Unreadable(
            "the uplink has no decoded_payload (is a payload formatter set for the device?)"
        )
    counter = frame_counter(uplink.get("f_cnt", 0), "uplink_message.f_cnt")
    if isinstance(counter, Unreadable):
        return counter
    when: datetime | None = None
    raw_time = find(message, "uplink_message.received_at")
    if raw_time is MISSING:
        raw_time = message.get("received_at", MISSING)
    if raw_time is not MISSING:
        parsed = parse_time(raw_time, "received_at")
        if isinstance(parsed, Unreadable):
            return parsed
        when = parsed
    return decoded, when, counter


def read(spec: SourceSpec, topic: str, payload: bytes) -> Reading | Unreadable:
    """One uplink message as the sensor's reading."""
    message = parse_json(payload)
    if isinstance(message, Unreadable):
        return message
    parts = unwrap(message)
    if isinstance(parts, Unreadable):
        return parts
    decoded, when, counter = parts
    return read_fields(spec, decoded, when, counter)


FORMAT = Format("ttn-v3", read)
