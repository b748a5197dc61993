"""What an inspector's or the Clerk's page sends: actions, each with an id, checked here.

A page keeps every action the person confirmed (``Send``) in its own storage, with a
random id and the moment it was made, until the aggregator has recorded it, and sends
what it keeps whenever its link returns: an action may therefore arrive twice, or
after a restart of ``kent-ops serve``. The hub publishes each id once
(:mod:`kent_ops.web.inspector_hub`). An action the phone has already heard was
delivered comes back marked ``delivered``: the hub only follows it to its record, it
never publishes it again.

Each action becomes the very payload the terminal's dashboard sends
(:mod:`kent_ops.core.inspector_actions`), stamped with the moment the person confirmed
it on the phone (on the event's clock, docs/protocol.md), so one sent twice is the
same bytes, which the aggregator also takes once. A comment, a reason, a deficiency's
note and a resolution are required, as on the terminal; anything else malformed is
refused with one sentence, and nothing is published.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, TypeGuard, get_args

from kent_ops.core import wire
from kent_ops.core.inspector_actions import (
    ActionPayload,
    ack_payload,
    adjust_payload,
    inspection_payload,
    note_payload,
    permit_payload,
)

__all__ = [
    "CLERK_KINDS",
    "INSPECTOR_KINDS",
    "MOST_ACTIONS",
    "ActionKind",
    "PageAction",
    "build_payload",
    "kind_allowed",
    "parse_actions",
    "stamp_for",
]

ActionKind = Literal["ack", "note", "adjust", "inspection", "clerk-permit"]
INSPECTOR_KINDS: tuple[ActionKind, ...] = ("ack", "note", "adjust", "inspection")
CLERK_KINDS: tuple[ActionKind, ...] = ("clerk-permit",)
"""What each role's page may send (the broker's access list would refuse the rest)."""
MOST_ACTIONS = 200
"""Actions in one message from a page: more than a person makes offline in a day."""
_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_MOST_FIELD = wire.MAX_TEXT + 100
FUTURE_S = 5.0
"""A phone's stamp later than the hub's clock by more than this is taken as the hub's."""


@dataclass(frozen=True, slots=True)
class PageAction:
    """One action from a page, its fields as the page sent them (checked for type only)."""

    id: str
    kind: ActionKind
    fields: dict[str, str | int | None]
    ts: datetime | None
    """When the person confirmed it, on the event's clock; None if the page did not say."""
    delivered: bool = False
    """The page heard it was delivered before: follow it, never publish it again."""


def _field(value: object) -> str | int | None | bool:
    """A field's value if it is a plain string, whole number or null; False otherwise."""
    if value is None or (isinstance(value, str) and len(value) <= _MOST_FIELD):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return False


def _stamp(value: object) -> datetime | None:
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


_KNOWN = ("alert", "comment", "text", "attendance", "reason", "item", "result", "note",
          "status", "resolution")  # fmt: skip


def _is_kind(kind: object) -> TypeGuard[ActionKind]:
    return kind in get_args(ActionKind)


def _action(entry: object) -> PageAction | None:
    if not isinstance(entry, dict):
        return None
    action_id, kind = entry.get("id"), entry.get("kind")
    if not isinstance(action_id, str) or not _ID.match(action_id):
        return None
    if not _is_kind(kind):
        return None
    fields: dict[str, str | int | None] = {}
    for name in _KNOWN:
        value = _field(entry.get(name))
        if value is False or isinstance(value, bool):
            return None
        fields[name] = value
    return PageAction(
        action_id, kind, fields, _stamp(entry.get("ts")), delivered=entry.get("delivered") is True
    )


def parse_actions(value: object) -> list[PageAction] | None:
    """The actions of a page's message, in order; None if it is not a list of them."""
    if not isinstance(value, list) or not 0 < len(value) <= MOST_ACTIONS:
        return None
    actions = []
    for entry in value:
        action = _action(entry)
        if action is None:
            return None
        actions.append(action)
    return actions


def stamp_for(action: PageAction, now: datetime) -> datetime:
    """The action's time: the phone's stamp, but never later than the hub's clock allows."""
    stamp = action.ts
    if stamp is None or stamp > now + timedelta(seconds=FUTURE_S):
        return now
    return stamp


def _text(fields: dict[str, str | int | None], name: str) -> str:
    value = fields.get(name)
    return value.strip() if isinstance(value, str) else ""


def build_payload(action: PageAction, stamp: datetime, now: datetime) -> ActionPayload:
    """The payload the action publishes (stamped ``stamp``; the Clerk's change takes
    effect ``now``, when it reaches the command post).

    Raises:
        ValueError: one sentence saying what is missing or wrong.
    """
    f = action.fields
    match action.kind:
        case "ack":
            if not _text(f, "comment"):
                raise ValueError("an acknowledgement needs a comment")
            return ack_payload(_text(f, "alert"), _text(f, "comment"), stamp)
        case "note":
            if not _text(f, "text"):
                raise ValueError("a note needs its text")
            return note_payload(_text(f, "text"), stamp, _text(f, "alert") or None)
        case "adjust":
            attendance = f.get("attendance")
            if not isinstance(attendance, int) or attendance < 0:
                raise ValueError("an adjustment needs the counted attendance, a whole number")
            if not _text(f, "reason"):
                raise ValueError("an adjustment needs its reason")
            return adjust_payload(attendance, _text(f, "reason"), stamp)
        case "inspection":
            return inspection_payload(_text(f, "item"), _text(f, "result"), stamp, _text(f, "note"))
        case "clerk-permit":
            if not _text(f, "resolution"):
                raise ValueError("a change of the permit needs the Town Board's resolution")
            status, resolution, reason = (
                _text(f, "status"),
                _text(f, "resolution"),
                _text(f, "reason"),
            )
            return permit_payload(status, now, resolution, reason, stamp)
    raise ValueError(f"unknown action {action.kind!r}")  # pragma: no cover - parse refuses


def kind_allowed(kind: str, role: str) -> bool:
    """Whether a person of ``role`` may send ``kind`` (else the broker would refuse it)."""
    return kind in (CLERK_KINDS if role == "clerk" else INSPECTOR_KINDS)
