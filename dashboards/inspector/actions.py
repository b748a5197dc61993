"""Inspector actions: their exact payloads (docs/protocol.md), and how to see they were recorded.

An acknowledgement, a note or an attendance adjustment is published once, at QoS 1,
on ``kent/{e}/inspector/{who}/{kind}``. "Sent" is not "recorded": the inspector is
told an action counts only when the aggregator's next status or alert shows it (an
ack in the alert's ``acknowledged``, a note in the status ``notes``, an adjustment in
the status ``adjustments``). Each kind registers the function that finds it there,
so the checklist (kind ``inspection``, found in the status ``checklist``, which keeps
each item's latest marking) is one more entry in ``RECORDED_IN``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from kent_ops.core import wire

__all__ = [
    "INSPECTION_RESULTS",
    "RECORDED_IN",
    "ActionState",
    "SentAction",
    "ack_payload",
    "adjust_payload",
    "describe",
    "inspection_payload",
    "iso_utc",
    "note_payload",
    "recorded_entries",
    "update_recorded",
]

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


RECORDED_IN: dict[str, Finder] = {
    "ack": _acks,
    "note": _notes,
    "adjust": _adjustments,
    "inspection": _inspections,
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


def describe(kind: str, payload: Mapping[str, Any]) -> str:
    """One line saying what an action does, for the confirmation and the action log."""
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
    return f"{kind}: {dict(payload)}"
