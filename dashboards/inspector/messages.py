"""What the inspector's screens ask of the app, as messages.

A screen never imports its app: it posts one of these and the app, which owns the
feed, the forms and the publishing, handles it (Textual's idiom; no import cycle
between the app and its screens). Messages are ``@dataclass`` classes (Posting's habit).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

__all__ = [
    "AckRequested",
    "AdjustRequested",
    "AlertChosen",
    "ChecklistRequested",
    "InspectionRequested",
    "NoteRequested",
    "PermitChangeRequested",
]


@dataclass(eq=False)
class AckRequested(Message):
    """Acknowledge this alert: ask for a comment, confirm, publish."""

    alert_id: str


@dataclass(eq=False)
class NoteRequested(Message):
    """Add a note, about this alert when one is given: ask, confirm, publish."""

    alert_id: str | None = None


@dataclass(eq=False)
class AdjustRequested(Message):
    """Set attendance to a counted figure: ask for it and a reason, confirm, publish."""


@dataclass(eq=False)
class InspectionRequested(Message):
    """Mark a checklist item ``ok``, ``deficient`` (with a note) or ``n/a``."""

    item: str
    result: str


@dataclass(eq=False)
class AlertChosen(Message):
    """Show this alert in full."""

    alert_id: str


@dataclass(eq=False)
class ChecklistRequested(Message):
    """Show the facilities checklist."""


@dataclass(eq=False)
class PermitChangeRequested(Message):
    """The Town Clerk revokes or reinstates the permit: ask, confirm, publish (permit:G)."""
