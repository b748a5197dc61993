"""Rented devices in the report: each device's messages, and each figure back to its bytes.

``kent-ops adapt`` published a raw record for every message a rented device sent (the
device's topic and bytes, the receipt time, the kent-ops payload it became or why none).
The report keeps, per sensor, how many came, how many were repeats and how many could
not be read, and a bounded list of links from a translated payload (its ``seq``) to the
evidence record that holds the device's own bytes (docs/protocol.md, "Rented devices").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

import msgspec

from kent_ops.core.wire import GateCount, LotOccupancy
from kent_ops.core.wire.adapter import REDELIVERY, AdapterRaw
from kent_ops.report.kept import HeldMessage

__all__ = ["DeviceLink", "DeviceTally", "RentedDevices"]

LINKS_KEPT = 40
"""Links listed per device: the first and the last half of this; the log holds them all."""


@dataclass(frozen=True, slots=True)
class DeviceLink(HeldMessage):
    """One device message (its topic on the device's broker): the record holding its
    bytes, and what it became."""

    translated: str
    """The kent-ops payload's figures (``seq 12: in 340, out 25``) or why there is none."""


@dataclass(slots=True)
class DeviceTally:
    """One rented device's messages over the event."""

    received: int = 0
    translated: int = 0
    repeats: int = 0
    unreadable: int = 0
    first: list[DeviceLink] = field(default_factory=list)
    last: list[DeviceLink] = field(default_factory=list)

    def keep(self, link: DeviceLink) -> None:
        if len(self.first) < LINKS_KEPT // 2:
            self.first.append(link)
            return
        self.last.append(link)
        if len(self.last) > LINKS_KEPT // 2:
            del self.last[0]


class RentedDevices:
    """Collects the raw records of a replay, by sensor."""

    def __init__(self) -> None:
        self.sensors: dict[str, DeviceTally] = {}

    def take(self, record: int, received_at: datetime, payload: bytes) -> None:
        """One raw record from the log (accepted or not: both are the device's messages)."""
        try:
            raw = msgspec.json.decode(payload, type=AdapterRaw)
            body = raw.payload
        except (msgspec.DecodeError, ValueError):
            return  # a record that is no raw record is listed with the rejected messages
        tally = self.sensors.setdefault(raw.sensor, DeviceTally())
        tally.received += 1
        if raw.translated is not None:
            tally.translated += 1
            what = _figures(raw)
        elif raw.reason is not None and raw.reason.startswith(REDELIVERY):
            tally.repeats += 1
            what = raw.reason
        else:
            tally.unreadable += 1
            what = f"not read: {raw.reason}"
        digest = hashlib.sha256(body).hexdigest()
        tally.keep(DeviceLink(record, received_at, raw.topic, len(body), digest, what))


def _figures(raw: AdapterRaw) -> str:
    """The translation's figures, read as the sensor's reading (docs/protocol.md,
    "Rented devices")."""
    try:
        reading = raw.reading()
    except msgspec.ValidationError as exc:
        return f"a translation that is no reading: {exc}"
    match reading:
        case LotOccupancy(seq=seq, occupied=occupied):
            return f"seq {seq}: occupied {occupied}"
        case GateCount(seq=seq, in_total=in_total, out_total=out_total):
            return f"seq {seq}: in {in_total}, out {out_total}"
    return f"a translation that is no gate or lot reading: {reading!r}"
