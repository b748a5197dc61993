"""The simulated floor: the real device classes on in-memory links, on a simulated clock.

A simulated day exercises exactly what a field device sends (availability, ``seq``,
heartbeats, the coalesced catch-up after an outage) because the messages come from
:class:`~sensors.gate_counter.GateCounter` and friends themselves, each attached to a
:class:`~sensors.links.MemoryLink` that keeps what it is sent. :class:`Floor` holds
them, the simulated time, and what the injected faults add beside the devices' own
traffic; :meth:`Floor.collect` turns it all into :class:`SimMessage` values.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics
from sensors.badge_reader import BadgeReader
from sensors.device import Device
from sensors.gate_counter import GateCounter
from sensors.links import MemoryLink, Sent
from sensors.lot_sensor import LotSensor

__all__ = ["Floor", "SimMessage"]


@dataclass(frozen=True, slots=True)
class SimMessage:
    """One message as a sensor would publish it, at a simulated (timezone-aware) time.

    ``fault`` names the injected fault a message belongs to (``restart``, ``offline``,
    ``reconnect`` (the end of an outage), ``duplicate``, ``bad-json``, ``negative-count``,
    ``wrong-type``, ``unknown-sensor``, ``oversize``), or is None for ordinary traffic.
    Publishers ignore it; tests use it.
    """

    at: datetime
    topic: str
    payload: bytes
    retain: bool
    fault: str | None = None


@dataclass
class Floor:
    """Every simulated device by sensor id, its link, and the simulated time now.

    ``fault_tag`` names the fault whose action is running, so the messages it causes
    carry it; ``extra`` holds messages a fault makes up beside the devices' own.
    """

    permit: Permit
    now: datetime
    devices: dict[str, Device] = field(default_factory=dict)
    links: dict[str, MemoryLink] = field(default_factory=dict)
    last_count: dict[str, Sent] = field(default_factory=dict)
    extra: list[SimMessage] = field(default_factory=list)
    fault_tag: str | None = None
    topics: Topics = field(init=False)

    def __post_init__(self) -> None:
        self.topics = Topics(self.permit.event_id)

    def clock(self) -> datetime:
        """The devices' clock: simulated time."""
        return self.now

    def install(
        self,
        gates: list[str],
        lots: list[str],
        keys: Mapping[str, bytes],
        heartbeat_s: float,
    ) -> None:
        """Build a device per gate, lot and staff station, each on a link not yet up."""
        ev, tz = self.permit.event_id, self.permit.timezone
        for g in gates:
            self.devices[g] = GateCounter(
                ev, g, clock=self.clock, tz=tz, key=keys.get(g), heartbeat_s=heartbeat_s
            )
        for lot in lots:
            self.devices[lot] = LotSensor(
                ev, lot, clock=self.clock, tz=tz, key=keys.get(lot), heartbeat_s=heartbeat_s
            )
        for s in self.permit.staff_stations:
            self.devices[s] = BadgeReader(ev, s, clock=self.clock, tz=tz, key=keys.get(s))
        for sid, dev in self.devices.items():
            self.links[sid] = MemoryLink(will_topic=dev.availability_topic, _online=False)

    def attach(self, sid: str) -> None:
        """Bring a device online: it announces itself (a periodic one sends its reading)."""
        link = self.links[sid]
        self.devices[sid].attach(link)
        link.set_online(True)

    def gate(self, sid: str) -> GateCounter:
        device = self.devices[sid]
        assert isinstance(device, GateCounter)
        return device

    def collect(self, at: datetime) -> Iterator[SimMessage]:
        """Everything the devices sent since the last call, then the faults' extras."""
        tag = self.fault_tag
        for sid, link in self.links.items():
            for sent in link.drain():
                if sent.topic == self.topics.gate_count(sid):
                    self.last_count[sid] = sent  # what a duplicate fault redelivers
                yield SimMessage(at, sent.topic, sent.payload, sent.retain, tag)
        extra, self.extra = self.extra, []
        yield from extra
