"""The adapter's raw record: a rented device's message as received, and its translation.

``kent-ops adapt`` publishes one on ``kent/{e}/adapter/{sensor}/raw`` for every message
it receives from a device, repeats included, so the evidence log holds the device's own
bytes beside the kent-ops payload they became (docs/protocol.md, "Rented devices"). A
raw record changes no figure: the translation travels on the sensor's own topic. One
whose ``reason`` says the adapter could not read the message is a rejected message, like
a bad payload on a sensor topic; a redelivery is not.

The translation is the sensor's own reading (a ``GateCount`` or a ``LotOccupancy``). It is
kept in the record as the fields the adapter published, unsigned, in the same JSON shape
as always, so evidence logs written before still read; :meth:`AdapterRaw.reading` decodes
it into the kind's Struct.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any

import msgspec

from kent_ops.core.sensor_kinds import SENSOR_KINDS, Reading
from kent_ops.core.wire.signing import reading_fields

__all__ = [
    "REDELIVERY",
    "AdapterRaw",
    "check_raw",
    "decode_translation",
    "encode_raw",
    "unreadable",
]

REDELIVERY = "redelivery"
"""The first word of a raw record's reason when the message was a repeat, not unreadable."""


class AdapterRaw(msgspec.Struct, frozen=True):
    """One device message as the adapter received it, and what it became.

    ``ts`` is the adapter's time of receipt. It is kept as ``received`` so that a raw
    record never sets the aggregator's clock in sensor time (the translation, with the
    device's own time, does).
    """

    sensor: str
    topic: str
    payload_b64: str
    received: datetime = msgspec.field(name="ts")
    translated: dict[str, Any] | None = None
    reason: str | None = None

    @property
    def payload(self) -> bytes:
        return base64.b64decode(self.payload_b64)

    def reading(self) -> Reading | None:
        """The translation as the sensor's reading, or None when the message became none.

        Raises ``msgspec.ValidationError`` for a translation that is no reading of a kind a
        rented device may stand for (:func:`decode_translation`).
        """
        if self.translated is None:
            return None
        return decode_translation(self.translated)


_RENTED: tuple[tuple[type[Reading], frozenset[str]], ...] = tuple(
    (kind.payload, frozenset(kind.payload.__struct_fields__))
    for kind in SENSOR_KINDS
    if kind.rentable
)


def decode_translation(fields: dict[str, Any]) -> Reading:
    """A raw record's stored translation as its kind's Struct.

    The record does not name the kind: the translation is the first rentable kind's
    reading whose fields it holds (a gate's ``in_total``/``out_total``, a lot's
    ``occupied``), read with the types the aggregator reads that kind's payload with.
    """
    for payload, names in _RENTED:
        if names <= fields.keys():
            return msgspec.convert(fields, payload)
    raise msgspec.ValidationError("the translation is no reading of a rentable sensor kind")


def unreadable(reason: str | None) -> bool:
    """A reason that says the message could not be read (not a mere redelivery)."""
    return reason is not None and not reason.startswith(REDELIVERY)


def check_raw(record: AdapterRaw) -> str | None:
    """Why a raw record counts as rejected, or None: an unreadable message, or a bad record."""
    try:
        base64.b64decode(record.payload_b64, validate=True)
    except (binascii.Error, ValueError):
        return "payload_b64 is not base64"
    if record.translated is None and record.reason is None:
        return "a raw record needs its translation or the reason there is none"
    if unreadable(record.reason):
        return f"the adapter could not read {record.sensor}'s message: {record.reason}"
    return None


def encode_raw(
    sensor: str,
    topic: str,
    payload: bytes,
    received: str,
    translated: Reading | None,
    reason: str | None,
) -> bytes:
    """The raw record's JSON, its fields in the documented order; the translation as the
    reading's unsigned fields, exactly as published on the sensor's topic."""
    return msgspec.json.encode(
        {
            "sensor": sensor,
            "topic": topic,
            "payload_b64": base64.b64encode(payload).decode("ascii"),
            "ts": received,
            "translated": None if translated is None else reading_fields(translated),
            "reason": reason,
        }
    )
