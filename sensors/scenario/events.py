"""The scenario's scheduled events: staff badging on and off, and the injected faults.

Each event is ``(offset, order, action)``: ``offset`` seconds after the scenario's 0:00,
``order`` to break ties, and an action that works the simulated devices of a
:class:`~sensors.floor.Floor` (a badge scan, a counter losing its state, a link
dropping). The faults are what the aggregator must survive (docs/protocol.md, Counting
and What is rejected): a counter restart, a counter gone from the broker (its will
says ``offline``), QoS 1 redeliveries, and malformed messages.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from kent_ops.core.sensor_kinds import GateCount
from kent_ops.core.wire import encode_payload, encode_reading, format_ts
from sensors.badge_reader import BadgeReader
from sensors.floor import Floor, SimMessage
from sensors.scenario.model import Fault
from sensors.scenario.schedule import Schedule

__all__ = ["BADGE_PREFIX", "Event", "fault_events", "pick", "staff_events"]

Action = Callable[[], None]
Event = tuple[float, int, Action]
"""(seconds after 0:00, order among events at the same time, what happens)."""

BADGE_PREFIX = {"doctor": "MD", "nurse": "RN", "security": "SEC"}
FAULT_ORDER = 1_000_000
"""Faults sort after staff scans at the same instant."""


def pick(items: list[str], which: str | int | None, *, default: int) -> str | None:
    """An item by id, or by 1-based number (wrapping), or the default'th (wrapping)."""
    if not items:
        return None
    if isinstance(which, str):
        return which if which in items else None
    index = (which - 1) if isinstance(which, int) else default
    return items[index % len(items)]


# -- staff ------------------------------------------------------------------------------


def staff_events(schedule: Schedule, floor: Floor) -> list[Event]:
    """Badge scans on (and off) for every shift, each within its ``spread``."""
    stations = list(schedule.permit.staff_stations)
    if not stations:
        return []
    rng = schedule.rng("staff")
    numbers = dict.fromkeys(BADGE_PREFIX, 0)
    events: list[Event] = []
    for i, shift in enumerate(schedule.scenario.shifts):
        station = pick(stations, shift.station, default=i)
        if station is None:
            continue
        spread = max(0.0, schedule.secs(shift.spread))
        on = schedule.secs(shift.on)
        off = schedule.secs(shift.off) if shift.off is not None else None
        for _ in range(shift.headcount(schedule.permit)):
            numbers[shift.role] += 1
            badge = f"{BADGE_PREFIX[shift.role]}-{numbers[shift.role]:04d}"
            t_on = max(-schedule.setup_s, on + rng.uniform(0, spread))
            events.append((t_on, len(events), _scan(floor, station, badge, shift.role, "on")))
            if off is not None:
                t_off = max(t_on, off + rng.uniform(0, spread))
                events.append((t_off, len(events), _scan(floor, station, badge, shift.role, "off")))
    return events


def _scan(floor: Floor, station: str, badge: str, role: str, action: str) -> Action:
    def act() -> None:
        reader = floor.devices[station]
        assert isinstance(reader, BadgeReader)
        reader.scan(badge, role, action)

    return act


# -- faults -----------------------------------------------------------------------------


def fault_events(schedule: Schedule, floor: Floor, gates: list[str]) -> list[Event]:
    """The scenario's faults, each on one of ``gates`` (a gate id or a 1-based number).

    ``gates`` are the simulated (automatic) gates; a fault naming any other gate, a
    deputy's manual tally among them, is left out.
    """
    events: list[Event] = []
    for i, fault in enumerate(schedule.scenario.faults):
        gate = pick(gates, fault.gate, default=0)
        if gate is not None:
            events += _fault(schedule, floor, fault, gate, FAULT_ORDER + i * 1000)
    return events


def _fault(schedule: Schedule, floor: Floor, fault: Fault, gate: str, order: int) -> list[Event]:
    t = schedule.secs(fault.at)
    if fault.kind == "restart":
        return [(t, order, _restart(floor, gate))]
    if fault.kind == "offline":
        back = t + max(schedule.step, schedule.secs(fault.duration)) if fault.duration else t
        return [(t, order, _link(floor, gate, False)), (back, order + 1, _link(floor, gate, True))]
    if fault.kind == "duplicates":
        return [(t + c * 0.05, order + c, _duplicate(floor, gate)) for c in range(fault.copies)]
    return [(t + j, order + j, _malformed(floor, gate, what)) for j, what in enumerate(fault.what)]


def _restart(floor: Floor, gate: str) -> Action:
    def act() -> None:
        floor.fault_tag = "restart"
        floor.gate(gate).power_cycle()
        link = floor.links[gate]
        link.set_online(False, will=False)  # back before the broker misses it
        link.set_online(True)

    return act


def _link(floor: Floor, gate: str, online: bool) -> Action:
    def act() -> None:
        floor.fault_tag = "reconnect" if online else "offline"
        floor.links[gate].set_online(online)

    return act


def _duplicate(floor: Floor, gate: str) -> Action:
    def act() -> None:
        last = floor.last_count.get(gate)
        if last is not None and floor.links[gate].online:
            floor.extra.append(
                SimMessage(floor.now, last.topic, last.payload, last.retain, "duplicate")
            )

    return act


def _malformed(floor: Floor, gate: str, what: str) -> Action:
    def act() -> None:
        topic, payload = _malformed_message(floor, gate, what)
        floor.extra.append(SimMessage(floor.now, topic, payload, False, what))

    return act


def _malformed_message(floor: Floor, gate: str, what: str) -> tuple[str, bytes]:
    """A gate message broken the way ``what`` names (see ``MALFORMED_KINDS``)."""
    counter = floor.gate(gate)
    tz = floor.permit.timezone
    good = GateCount(
        seq=counter.seq + 1,
        ts=floor.now,
        in_total=counter.in_total,
        out_total=counter.out_total,
    )
    # the two shapes no GateCount can hold start from its own fields
    fields: dict[str, object] = {**msgspec.structs.asdict(good), "ts": format_ts(floor.now, tz)}
    topic = floor.topics.gate_count(gate)
    if what == "bad-json":
        return topic, encode_reading(good, tz=tz)[:-9]
    if what == "negative-count":
        return topic, encode_reading(msgspec.structs.replace(good, in_total=-5), tz=tz)
    if what == "wrong-type":
        return topic, encode_payload({**fields, "in_total": str(counter.in_total)})
    if what == "oversize":
        return topic, encode_payload({**fields, "pad": "x" * (70 * 1024)})
    unknown = floor.topics.gate_count(_unknown_gate(floor))
    stranger = GateCount(seq=1, ts=floor.now, in_total=12, out_total=0)
    return unknown, encode_reading(stranger, tz=tz)


def _unknown_gate(floor: Floor) -> str:
    """A gate id the permit does not list."""
    name = "unlisted-gate"
    while name in floor.permit.sensors:
        name += "-x"
    return name
