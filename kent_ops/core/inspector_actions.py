"""Inspector actions: their exact payloads (docs/protocol.md), and how to see they were recorded.

Shared by the terminal's dashboard (:mod:`dashboards.inspector.acting`) and the
inspector's page in a browser (:mod:`kent_ops.web.inspector_hub`), so an action is
built, checked, described and found recorded the same way wherever it was made.

An acknowledgement, a note or an attendance adjustment is published once, at QoS 1,
on ``kent/{e}/inspector/{who}/{kind}``; the Town Clerk's change of the permit's status
(kind ``clerk-permit``, permit:G) on ``kent/{e}/clerk/{who}/permit``. "Sent" is not
"recorded": the sender is told an action counts only when the aggregator's next status
or alert shows it (an ack in the alert's ``acknowledged``, a note in the status
``notes``, an adjustment in the status ``adjustments``). Each kind registers the
function that finds it there, so the checklist (kind ``inspection``, found in the
status ``checklist``, which keeps each item's latest marking) is one more entry in
``RECORDED_IN``, and so is the Clerk's change (the status ``permit``: its status and
resolution).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, tzinfo
from typing import Literal, TypeGuard, TypeVar

import msgspec

from kent_ops.core import wire

__all__ = [
    "CLERK_PERMIT",
    "INSPECTION_RESULTS",
    "RECORDED_IN",
    "ActionPayload",
    "ActionState",
    "SentAction",
    "ack_payload",
    "action_topic",
    "adjust_payload",
    "describe",
    "encode_action",
    "inspection_payload",
    "iso_utc",
    "note_payload",
    "permit_payload",
    "recorded_entries",
    "restamped",
    "update_recorded",
]

CLERK_PERMIT = "clerk-permit"
"""The kind of the Clerk's action: the permit revoked or reinstated (permit:G)."""

INSPECTION_RESULTS = wire.INSPECTION_RESULTS
"""What an inspector may mark a checklist item: the wire's own list."""

ActionState = Literal["sent", "delivered", "recorded", "unsent"]
"""sent: handed to the client; delivered: the broker has it (PUBACK); recorded: the
aggregator's status or alert shows it; unsent: there is no broker (standalone)."""

ActionPayload = wire.Ack | wire.Note | wire.Adjust | wire.Inspection | wire.ClerkPermit
"""What an inspector or the Clerk sends: the very Struct the aggregator decodes."""


def iso_utc(moment: datetime) -> str:
    """ISO 8601 in UTC with its offset, as every kent-ops payload carries times."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _stamp(now: datetime) -> datetime:
    """``now`` in UTC to the millisecond: the precision an inspector's payload carries."""
    moment = now.astimezone(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


P = TypeVar("P", wire.Ack, wire.Note, wire.Adjust, wire.Inspection, wire.ClerkPermit)


def _checked(record: P) -> P:
    """The record, once the wire's own checks pass; else ValueError with the aggregator's
    sentence, so nothing is sent that it would refuse."""
    problem = wire.payload_problem(record)
    if problem is not None:
        raise ValueError(problem)
    return record


def ack_payload(alert_id: str, comment: str, now: datetime) -> wire.Ack:
    """An acknowledgement (docs/protocol.md, "ack")."""
    return _checked(wire.Ack(ts=_stamp(now), alert=alert_id, comment=comment))


def note_payload(text: str, now: datetime, alert_id: str | None = None) -> wire.Note:
    """A note, about one alert when ``alert_id`` is given (docs/protocol.md, "note")."""
    return _checked(wire.Note(ts=_stamp(now), text=text, alert=alert_id or None))


def adjust_payload(attendance: int, reason: str, now: datetime) -> wire.Adjust:
    """An adjustment (docs/protocol.md, "adjust"); the reason is required and the
    attendance a count the wire takes."""
    return _checked(wire.Adjust(ts=_stamp(now), attendance=attendance, reason=reason))


def inspection_payload(item: str, result: str, now: datetime, note: str = "") -> wire.Inspection:
    """A checklist marking (permit:C, D and F; docs/protocol.md, "inspection").

    A ``deficient`` mark must say what was found: the aggregator refuses one without a
    note, so it is refused here first, before anything is sent.
    """
    if not _is_result(result):
        raise ValueError(f"result must be one of {', '.join(INSPECTION_RESULTS)}, not {result!r}")
    if result == "deficient" and not note.strip():
        raise ValueError("a deficient mark needs a note saying what was found")
    return _checked(wire.Inspection(ts=_stamp(now), item=item, result=result, note=note.strip()))


def _is_result(result: str) -> TypeGuard[wire.InspectionResult]:
    return result in INSPECTION_RESULTS


def _is_permit_status(status: str) -> TypeGuard[wire.PermitStatus]:
    return status in wire.PERMIT_STATUSES


def permit_payload(
    status: str, effective_at: datetime, resolution: str, reason: str, now: datetime
) -> wire.ClerkPermit:
    """The Clerk's message (docs/protocol.md, "The Town Clerk"); ``status`` is
    ``revoked`` or ``issued`` (reinstated)."""
    if not _is_permit_status(status):
        raise ValueError(f"status must be revoked or issued, not {status!r}")
    return _checked(
        wire.ClerkPermit(
            ts=now.astimezone(UTC),
            status=status,
            effective_at=effective_at.astimezone(UTC),
            resolution=resolution.strip(),
            reason=reason.strip(),
        )
    )


def restamped(payload: ActionPayload, now: datetime) -> ActionPayload:
    """The same action stamped ``now``: the moment it is confirmed, not when it was typed."""
    return msgspec.structs.replace(payload, ts=_stamp(now))


def encode_action(payload: ActionPayload) -> bytes:
    """The bytes published: the Struct's JSON, fields in the wire's order."""
    return wire.encode(payload)


def action_topic(topics: wire.Topics, kind: str, who: str) -> str:
    """Where an action of ``kind`` by ``who`` is published: the Clerk's topic or the
    inspector's."""
    if kind == CLERK_PERMIT:
        return topics.clerk_permit(who)
    return topics.inspector(who, kind)


Alerts = Mapping[str, wire.Alert]
Entries = frozenset[tuple[object, ...]]
Finder = Callable[[ActionPayload, str, wire.Status | None, Alerts], Entries]


def _acks(payload: ActionPayload, who: str, status: wire.Status | None, alerts: Alerts) -> Entries:
    if not isinstance(payload, wire.Ack) or (alert := alerts.get(payload.alert)) is None:
        return frozenset()
    return frozenset(
        (a.by, a.at, a.comment)
        for a in alert.acknowledged
        if a.by == who and a.comment == payload.comment
    )


def _notes(payload: ActionPayload, who: str, status: wire.Status | None, alerts: Alerts) -> Entries:
    if status is None or not isinstance(payload, wire.Note):
        return frozenset()
    return frozenset(
        (n.by, n.at, n.text)
        for n in status.notes
        if n.by == who and n.text == payload.text and (n.alert or None) == (payload.alert or None)
    )


def _adjustments(
    payload: ActionPayload, who: str, status: wire.Status | None, alerts: Alerts
) -> Entries:
    if status is None or not isinstance(payload, wire.Adjust):
        return frozenset()
    return frozenset(
        (a.by, a.at, a.attendance, a.reason)
        for a in status.adjustments
        if a.by == who and a.attendance == payload.attendance and a.reason == payload.reason
    )


def _inspections(
    payload: ActionPayload, who: str, status: wire.Status | None, alerts: Alerts
) -> Entries:
    if status is None or not isinstance(payload, wire.Inspection):
        return frozenset()
    entry = status.checklist.get(payload.item)
    if entry is None:
        return frozenset()
    if entry.by == who and entry.result == payload.result and entry.note == payload.note:
        return frozenset({(payload.item, entry.by, entry.at)})
    return frozenset()


def _permit_changes(
    payload: ActionPayload, who: str, status: wire.Status | None, alerts: Alerts
) -> Entries:
    """The status's permit, when it stands as the Clerk asked (the status does not say who)."""
    if status is None or not isinstance(payload, wire.ClerkPermit):
        return frozenset()
    permit = status.permit
    if permit.status == payload.status and permit.resolution == payload.resolution:
        return frozenset({(permit.status, permit.since, permit.resolution)})
    return frozenset()


RECORDED_IN: dict[str, Finder] = {
    "ack": _acks,
    "note": _notes,
    "adjust": _adjustments,
    "inspection": _inspections,
    CLERK_PERMIT: _permit_changes,
}
"""For each action kind: the matching entries the aggregator shows for it."""


def recorded_entries(
    kind: str, payload: ActionPayload, who: str, status: wire.Status | None, alerts: Alerts
) -> Entries:
    """The entries in the status or alerts that look like this action (by, text, …)."""
    finder = RECORDED_IN.get(kind)
    return finder(payload, who, status, alerts) if finder else frozenset()


@dataclass(frozen=True, slots=True)
class SentAction:
    """One action this inspector sent, and how far it has got."""

    number: int
    kind: str
    topic: str
    payload: ActionPayload
    inspector: str
    """Who signed it: the inspector's id, or the Clerk's for a change of the permit."""
    sent_at: datetime
    state: ActionState = "sent"
    recorded_at: datetime | None = None
    """When the aggregator recorded it: the time on its entry (the engine's clock, as the
    report shows it), or the screen's clock when the entry carries none."""
    baseline: Entries = field(default_factory=frozenset)
    """Matching entries that were already there when it was sent (a repeated note)."""


def update_recorded(
    action: SentAction, status: wire.Status | None, alerts: Alerts, now: datetime
) -> SentAction:
    """The action marked ``recorded`` once a new matching entry shows up; else unchanged.

    Its ``recorded_at`` is the entry's own time, so the screen and the report agree on it.
    """
    if action.state in ("recorded", "unsent"):
        return action
    found = recorded_entries(action.kind, action.payload, action.inspector, status, alerts)
    new = found - action.baseline
    if new:
        times = [x for entry in new for x in entry if isinstance(x, datetime)]
        return replace(action, state="recorded", recorded_at=min(times, default=now))
    return action


def describe(payload: ActionPayload, zone: tzinfo = UTC) -> str:
    """One line saying what an action does, for the confirmation and the action log.

    Times (the Clerk's ``effective_at``) are shown in ``zone``, the event's.
    """
    match payload:
        case wire.Ack(alert=alert, comment=comment):
            return f"acknowledge {alert}: “{comment}”"
        case wire.Note(text=text, alert=alert):
            about = f" about {alert}" if alert else ""
            return f"note{about}: “{text}”"
        case wire.Adjust(attendance=attendance, reason=reason):
            return f"set attendance to {attendance:,}: “{reason}”"
        case wire.Inspection(item=item, result=result, note=note):
            found = f": “{note}”" if note else ""
            return f"mark {item} {result}{found}"
        case wire.ClerkPermit(status=status, effective_at=effective_at, resolution=resolution):
            verb = "revoke" if status == "revoked" else "reinstate"
            when = effective_at.astimezone(zone).strftime("%H:%M:%S")
            return f"{verb} the permit from {when} by resolution {resolution}"
