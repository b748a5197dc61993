"""The status the aggregator publishes, built from the engine's state at one instant.

Every figure a dashboard shows comes from here, computed from the counts and the
permit, never from anything a dashboard holds of its own. To add a field, add it to
:class:`kent_ops.core.wire.Status` and fill it in below.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kent_ops.core import ordinance as law
from kent_ops.core import wire
from kent_ops.core.counting import Counting
from kent_ops.core.inspectors import InspectorRecords
from kent_ops.core.permit import Permit, StatusChange
from kent_ops.core.seq import numbers
from kent_ops.core.timeutil import from_us

__all__ = ["Snapshot", "build_status"]


def _time(us: int | None) -> datetime | None:
    return None if us is None else from_us(us)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The parts of the engine's state a status is drawn from (read, never changed)."""

    permit: Permit
    counts: Counting
    inspectors: InspectorRecords
    now: int | None
    inside: bool
    window_index: int | None
    assembly_on: bool
    permit_state: tuple[str, StatusChange | None]
    next_window: tuple[int, int] | None
    admit: bool
    hold_at: int
    resume_below: int
    active_alerts: list[str]
    pending: list[wire.PendingCondition]
    rejected: int
    accepted: int
    checklist_items: list[wire.ChecklistItemInfo]
    clock: str = "wall"
    hold_in_s: int | None = None
    """Seconds until attendance reaches ``hold_at`` (core/foresight.py)."""


def build_status(s: Snapshot) -> wire.Status:
    """The live picture at the engine's current time."""
    permit, counts = s.permit, s.counts
    t = s.now if s.now is not None else 0
    attendance = counts.attendance
    present = max(attendance, 0)
    roster = counts.roster.counts
    window = s.next_window
    inspectors = s.inspectors
    return wire.Status(
        ts=_time(s.now),
        event=permit.event_id,
        event_name=permit.event_name,
        timezone=permit.timezone.key,
        clock=s.clock,
        permit=_permit_state(permit, *s.permit_state),
        assembly=wire.AssemblyState(on=s.assembly_on, window=s.window_index),
        properties=_properties(permit, counts),
        window=wire.WindowState(
            inside=s.inside,
            start=_time(window[0]) if window else None,
            end=_time(window[1]) if window else None,
        ),
        attendance=wire.Attendance(
            current=attendance,
            entries=counts.entries,
            exits=counts.exits,
            peak=counts.peak,
            offset=counts.offset,
            max_at_one_time=permit.max_at_one_time,
            max_collective=permit.max_collective,
            threshold=law.PERMIT_THRESHOLD,
            uncertain=counts.uncertain,
            hold_in_s=s.hold_in_s,
        ),
        admit=s.admit,
        hold_at=s.hold_at,
        resume_below=s.resume_below,
        parking=wire.Parking(
            spaces_provided=permit.spaces_provided,
            spaces_required=law.car_spaces_required(present),
            occupied=counts.occupied_total,
            vehicles_at_one_time=permit.vehicles_at_one_time,
        ),
        medical=wire.Medical(
            doctors_on_duty=roster["doctor"],
            doctors_required=permit.doctors_min,
            nurses_on_duty=roster["nurse"],
            nurses_required=law.nurses_required(present, permit.persons_per_nurse),
            uncertain=bool(counts.doubts("staff")),
        ),
        security=wire.Security(on_duty=roster["security"], declared=permit.security_guards),
        sensors=_sensors(counts),
        gates=_gates(counts, t),
        lots=_lots(counts),
        active_alerts=s.active_alerts,
        pending=s.pending,
        rejected=s.rejected,
        accepted=s.accepted,
        notes=list(inspectors.notes),
        adjustments=list(inspectors.adjustments),
        checklist=dict(inspectors.marks),
        checklist_items=s.checklist_items,
    )


def _permit_state(permit: Permit, status: str, change: StatusChange | None) -> wire.PermitState:
    if change is None:
        return wire.PermitState(number=permit.number, status=status)
    return wire.PermitState(
        number=permit.number, status=status, since=from_us(change.at), resolution=change.resolution
    )


def _properties(permit: Permit, counts: Counting) -> dict[str, wire.PropertyState]:
    """Persons on each property, from its gates (the aggregate is what the law counts)."""
    persons = counts.by_property()
    return {
        p.id: wire.PropertyState(
            attendance=persons.get(p.id, 0), owner=p.owner, address=p.address, tenant=p.tenant
        )
        for p in permit.properties
    }


def _sensors(counts: Counting) -> dict[str, wire.SensorState]:
    out = {}
    for sensor, live in counts.sensors.items():
        track = counts.seq_track(sensor)
        gap = None if track is None else track.last_gap
        out[sensor] = wire.SensorState(
            kind=live.kind,
            online=counts.shown_online(sensor),
            last_seen=_time(live.last_seen),
            gaps=0 if track is None else track.gaps,
            missing=0 if track is None else track.missing,
            last_gap=None if gap is None else numbers(*gap),
            stuck=live.stuck,
            doubt=live.doubt,
        )
    return out


def _gates(counts: Counting, t: int) -> dict[str, wire.GateState]:
    out = {}
    for gate, g in counts.gates.items():
        live = counts.sensors[gate]
        out[gate] = wire.GateState(
            in_=g.in_total,
            out=g.out_total,
            net=g.net,
            per_minute=round(g.per_minute(t), 1),
            last_seen=_time(live.last_seen),
            online=counts.shown_online(gate),
            manual=live.manual,
            restarts=g.restarts,
            property=counts.gate_property.get(gate),
        )
    return out


def _lots(counts: Counting) -> dict[str, wire.LotState]:
    out = {}
    for lot, s in counts.lots.items():
        live = counts.sensors[lot]
        occupied = s.occupied
        out[lot] = wire.LotState(
            capacity=s.capacity,
            occupied=occupied,
            free=None if occupied is None else s.capacity - occupied,
            share=None if occupied is None or s.capacity == 0 else round(occupied / s.capacity, 3),
            online=live.online,
            last_seen=_time(live.last_seen),
        )
    return out
