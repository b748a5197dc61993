"""Inspector actions: their exact payloads (docs/protocol.md), and how to see they were recorded.

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
from typing import Any, Literal

import msgspec

from kent_ops.core import wire

__all__ = [
    "CLERK_PERMIT",
    "INSPECTION_RESULTS",
    "RECORDED_IN",
    "ActionState",
    "SentAction",
    "ack_payload",
    "action_topic",
    "adjust_payload",
    "describe",
    "inspection_payload",
    "iso_utc",
    "note_payload",
    "permit_payload",
    "recorded_entries",
    "update_recorded",
]

CLERK_PERMIT = "clerk-permit"
"""The kind of the Clerk's action: the permit revoked or reinstated (permit:G)."""

ActionState = Literal["sent", "delivered", "recorded", "unsent"]
"""sent: handed to the client; delivered: the broker has it (PUBACK); recorded: the
aggregator's status or alert shows it; unsent: there is no broker (standalone)."""


def iso_utc(moment: datetime) -> str:
    """ISO 8601 in UTC with its offset, as every kent-ops payload carries times."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def ack_payload(alert_id: str, comment: str, now: datetime) -> dict[str, Any]:
    """``{"ts", "alert", "comment"}``: an acknowledgement (docs/protocol.md, "ack")."""
    return {"ts": iso_utc(now), "alert": alert_id, "comment": comment}


def note_payload(text: str, now: datetime, alert_id: str | None = None) -> dict[str, Any]:
    """``{"ts", "text"}`` and ``"alert"`` when it is about one (docs/protocol.md, "note")."""
    payload: dict[str, Any] = {"ts": iso_utc(now), "text": text}
    if alert_id:
        payload["alert"] = alert_id
    return payload


def adjust_payload(attendance: int, reason: str, now: datetime) -> dict[str, Any]:
    """``{"ts", "attendance", "reason"}``: an adjustment (docs/protocol.md, "adjust");
    the reason is required."""
    if attendance < 0:
        raise ValueError("attendance cannot be negative")
    if not reason.strip():
        raise ValueError("an adjustment needs a reason")
    return {"ts": iso_utc(now), "attendance": attendance, "reason": reason}


INSPECTION_RESULTS = ("ok", "deficient", "n/a")
"""What an inspector may mark a checklist item (docs/protocol.md, "inspection")."""


def inspection_payload(item: str, result: str, now: datetime, note: str = "") -> dict[str, Any]:
    """``{"ts", "item", "result"}`` and ``"note"`` when there is one: a checklist marking
    (permit:C, D and F; docs/protocol.md, "inspection").

    A ``deficient`` mark must say what was found: the aggregator refuses one without a
    note, so it is refused here first, before anything is sent.
    """
    if result not in INSPECTION_RESULTS:
        raise ValueError(f"result must be one of {', '.join(INSPECTION_RESULTS)}, not {result!r}")
    if result == "deficient" and not note.strip():
        raise ValueError("a deficient mark needs a note saying what was found")
    payload: dict[str, Any] = {"ts": iso_utc(now), "item": item, "result": result}
    if note.strip():
        payload["note"] = note.strip()
    return payload


def permit_payload(
    status: str, effective_at: datetime, resolution: str, reason: str, now: datetime
) -> dict[str, Any]:
    """The Clerk's message (docs/protocol.md, "The Town Clerk"): the wire's ``ClerkPermit``,
    fields in its order; ``status`` is ``revoked`` or ``issued`` (reinstated)."""
    if status not in ("revoked", "issued"):
        raise ValueError(f"status must be revoked or issued, not {status!r}")
    if not resolution.strip():
        raise ValueError("a change of the permit's status needs the Town Board's resolution")
    record = wire.ClerkPermit(
        ts=now.astimezone(UTC),
        status=status,  # type: ignore[arg-type]
        effective_at=effective_at.astimezone(UTC),
        resolution=resolution.strip(),
        reason=reason.strip(),
    )
    return msgspec.to_builtins(record)


def action_topic(topics: wire.Topics, kind: str, who: str) -> str:
    """Where an action of ``kind`` by ``who`` is published: the Clerk's topic or the
    inspector's."""
    if kind == CLERK_PERMIT:
        return topics.clerk_permit(who)
    return topics.inspector(who, kind)


Alerts = Mapping[str, wire.Alert]
Entries = frozenset[tuple[Any, ...]]
Finder = Callable[[Mapping[str, Any], str, wire.Status | None, Alerts], Entries]


def _acks(
    payload: Mapping[str, Any], who: str, status: wire.Status | None, alerts: Alerts
) -> Entries:
    alert = alerts.get(str(payload.get("alert")))
    if alert is None:
        return frozenset()
    return frozenset(
        (a.by, a.at, a.comment)
        for a in alert.acknowledged
        if a.by == who and a.comment == payload.get("comment")
    )


def _notes(
    payload: Mapping[str, Any], who: str, status: wire.Status | None, alerts: Alerts
) -> Entries:
    if status is None:
        return frozenset()
    return frozenset(
        (n.by, n.at, n.text)
        for n in status.notes
        if n.by == who
        and n.text == payload.get("text")
        and (n.alert or None) == (payload.get("alert") or None)
    )


def _adjustments(
    payload: Mapping[str, Any], who: str, status: wire.Status | None, alerts: Alerts
) -> Entries:
    if status is None:
        return frozenset()
    return frozenset(
        (a.by, a.at, a.attendance, a.reason)
        for a in status.adjustments
        if a.by == who
        and a.attendance == payload.get("attendance")
        and a.reason == payload.get("reason")
    )


def _inspections(
    payload: Mapping[str, Any], who: str, status: wire.Status | None, alerts: Alerts
) -> Entries:
    entry = status.checklist.get(str(payload.get("item"))) if status is not None else None
    if entry is None:
        return frozenset()
    if (
        entry.by == who
        and entry.result == payload.get("result")
        and entry.note == (payload.get("note") or "")
    ):
        return frozenset({(payload.get("item"), entry.by, entry.at)})
    return frozenset()


def _permit_changes(
    payload: Mapping[str, Any], who: str, status: wire.Status | None, alerts: Alerts
) -> Entries:
    """The status's permit, when it stands as the Clerk asked (the status does not say who)."""
    if status is None:
        return frozenset()
    permit = status.permit
    if permit.status == payload.get("status") and permit.resolution == payload.get("resolution"):
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
    kind: str, payload: Mapping[str, Any], who: str, status: wire.Status | None, alerts: Alerts
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
    payload: dict[str, Any]
    inspector: str
    """Who signed it: the inspector's id, or the Clerk's for a change of the permit."""
    sent_at: datetime
    state: ActionState = "sent"
    recorded_at: datetime | None = None
    baseline: Entries = field(default_factory=frozenset)
    """Matching entries that were already there when it was sent (a repeated note)."""


def update_recorded(
    action: SentAction, status: wire.Status | None, alerts: Alerts, now: datetime
) -> SentAction:
    """The action marked ``recorded`` once a new matching entry shows up; else unchanged."""
    if action.state in ("recorded", "unsent"):
        return action
    found = recorded_entries(action.kind, action.payload, action.inspector, status, alerts)
    if found - action.baseline:
        return replace(action, state="recorded", recorded_at=now)
    return action


def describe(kind: str, payload: Mapping[str, Any], zone: tzinfo = UTC) -> str:
    """One line saying what an action does, for the confirmation and the action log.

    Times (the Clerk's ``effective_at``) are shown in ``zone``, the event's.
    """
    if kind == "ack":
        return f"acknowledge {payload.get('alert')}: “{payload.get('comment')}”"
    if kind == "note":
        about = f" about {payload['alert']}" if payload.get("alert") else ""
        return f"note{about}: “{payload.get('text')}”"
    if kind == "adjust":
        return f"set attendance to {payload.get('attendance'):,}: “{payload.get('reason')}”"
    if kind == "inspection":
        found = f": “{payload['note']}”" if payload.get("note") else ""
        return f"mark {payload.get('item')} {payload.get('result')}{found}"
    if kind == CLERK_PERMIT:
        verb = "revoke" if payload.get("status") == "revoked" else "reinstate"
        return (
            f"{verb} the permit from {_local(payload.get('effective_at'), zone)} "
            f"by resolution {payload.get('resolution')}"
        )
    return f"{kind}: {dict(payload)}"


def _local(value: object, zone: tzinfo) -> str:
    """An ISO time from a payload as ``14:30:00`` in the event's zone."""
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    if moment.tzinfo is None:
        return str(value)
    return moment.astimezone(zone).strftime("%H:%M:%S")
