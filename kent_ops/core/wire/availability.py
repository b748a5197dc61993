"""Availability: the retained ``online``/``offline`` a device, a view or the aggregator
says of itself, ``offline`` also as its MQTT last will (docs/protocol.md, "Availability"
and "Aggregator availability").

Two readings, as two kinds of reader need them:

- the aggregator (and the reference tally, which mirrors it) takes a *sensor's*
  availability only as the exact word ``online`` or ``offline`` around white space; any
  other text is a bad payload, rejected and logged (:func:`decode_sensor_availability`);
- a screen reading the *aggregator's* availability has nothing to reject it to: only
  ``online``, in any case, means up; anything else, a garbled payload included, is
  offline (:func:`decode_availability`), so a screen never shows a link it cannot vouch for.
"""

from __future__ import annotations

__all__ = [
    "AVAILABILITY_OFFLINE",
    "AVAILABILITY_ONLINE",
    "decode_availability",
    "decode_sensor_availability",
    "encode_availability",
]

AVAILABILITY_ONLINE = b"online"
"""Said, retained, on every connection."""
AVAILABILITY_OFFLINE = b"offline"
"""Said, retained, on a clean stop, and the last will the broker says for us otherwise."""


def encode_availability(online: bool) -> bytes:
    """The availability payload for being up (``online``) or gone (``offline``)."""
    return AVAILABILITY_ONLINE if online else AVAILABILITY_OFFLINE


def decode_sensor_availability(payload: bytes) -> bool | None:
    """A sensor's availability as the aggregator takes it: None when it is neither word."""
    text = payload.strip()
    if text == AVAILABILITY_ONLINE:
        return True
    if text == AVAILABILITY_OFFLINE:
        return False
    return None


def decode_availability(payload: bytes) -> bool:
    """The aggregator's availability as a screen reads it: anything but ``online`` is
    offline (a screen has no one to reject a bad payload to)."""
    return payload.decode("utf-8", "replace").strip().lower() == "online"
