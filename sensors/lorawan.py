"""Simulated LoRaWAN devices: a scenario's gate and lot messages as network servers send them.

For the gates and lots whose permit entry has a ``source`` in a LoRaWAN format, each
simulated kent-ops payload becomes the uplink its network server would publish on the
device's own topic: a The Things Stack v3 uplink (``decoded_payload``) or a ChirpStack v4
``up`` event (``object``), with the frame counter and the uplink's time. ``kent-ops
adapt`` turns them back into kent-ops payloads, so the demo shows the whole path
(docs/protocol.md, "Rented devices"). A LoRaWAN device has no availability topic: its
availability messages are left out, and it is known to be alive by its uplinks.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from kent_ops.core.devices.source import SourceSpec
from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics
from sensors.floor import SimMessage

__all__ = ["as_lorawan"]

LORAWAN_FORMATS = ("ttn-v3", "chirpstack-v4")
DEV_EUI = "0004a30b001c{:04x}"


def as_lorawan(permit: Permit, messages: Iterable[SimMessage]) -> Iterator[SimMessage]:
    """The scenario's messages with those of LoRaWAN-sourced sensors as uplinks."""
    topics = Topics(permit.event_id)
    specs = {s.sensor: s for s in permit.sources.values() if s.format in LORAWAN_FORMATS}
    own: dict[str, SourceSpec] = {}
    for sensor, source in specs.items():
        own[topics.reading(source.kind, sensor)] = source
    dropped = {topics.availability(sensor) for sensor in specs}
    last: dict[str, tuple[int, int]] = {}
    for n, m in enumerate(messages):
        if m.topic in dropped:
            continue
        spec = own.get(m.topic)
        if spec is None:
            yield m
            continue
        try:
            fields = json.loads(m.payload)
            decoded = _decoded(spec, fields, permit.lots.get(spec.sensor, 0), last)
        except (ValueError, KeyError, TypeError):
            continue  # a corrupted kent-ops payload has no LoRaWAN equivalent
        body = _envelope(spec, fields, decoded, n)
        yield replace(m, topic=_topic(spec), payload=json.dumps(body).encode(), retain=False)


def _decoded(
    spec: SourceSpec, fields: dict[str, Any], capacity: int, last: dict[str, tuple[int, int]]
) -> dict[str, int]:
    """What the device's payload formatter would decode, in the source's own field names."""
    if spec.kind == "lot":
        occupied = int(fields["occupied"])
        if spec.free is not None:
            return {spec.free: max(capacity - occupied, 0)}
        return {spec.occupied or "occupied": occupied}
    totals = (int(fields["in_total"]), int(fields["out_total"]))
    if not spec.deltas:
        return {spec.in_ or "in": totals[0], spec.out or "out": totals[1]}
    before = last.get(spec.sensor, (0, 0))
    if totals[0] < before[0] or totals[1] < before[1]:
        before = (0, 0)  # the simulated counter restarted: its totals began again
    last[spec.sensor] = totals
    return {
        spec.in_delta or "in": totals[0] - before[0],
        spec.out_delta or "out": totals[1] - before[1],
    }


def _topic(spec: SourceSpec) -> str:
    assert spec.topic is not None
    return spec.topic.replace("+", "kent-demo").replace("#", "up")


def _envelope(
    spec: SourceSpec, fields: dict[str, Any], decoded: dict[str, int], n: int
) -> dict[str, Any]:
    when = str(fields["ts"])
    f_cnt = int(fields["seq"])
    frm = base64.b64encode(json.dumps(decoded).encode()).decode()
    if spec.format == "ttn-v3":
        uplink: dict[str, Any] = {
            "f_port": 1,
            "frm_payload": frm,
            "decoded_payload": decoded,
            "rx_metadata": [{"gateway_ids": {"gateway_id": "kent-demo-gw"}, "rssi": -70}],
            "received_at": when,
        }
        if f_cnt:  # The Things Stack leaves out fields at 0
            uplink["f_cnt"] = f_cnt
        return {
            "end_device_ids": {
                "device_id": f"{spec.sensor}-sensor",
                "application_ids": {"application_id": "kent-demo"},
                "dev_eui": DEV_EUI.format(n % 0xFFFF).upper(),
            },
            "correlation_ids": [f"as:up:{n:026d}"],
            "received_at": when,
            "uplink_message": uplink,
        }
    return {
        "deduplicationId": f"00000000-0000-4000-8000-{n:012d}",
        "time": when,
        "deviceInfo": {
            "applicationName": "kent-demo",
            "deviceName": f"{spec.sensor}-sensor",
            "devEui": DEV_EUI.format(abs(hash(spec.sensor)) % 0xFFFF),
        },
        "fCnt": f_cnt,
        "fPort": 1,
        "data": frm,
        "object": decoded,
    }
