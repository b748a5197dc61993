"""The Textual messages a feed record becomes on its way into an app.

Kept apart from the feed so the feed thread stays free of Textual. Messages are
``@dataclass`` classes (Posting's habit); a status defines ``can_replace`` so a newer
snapshot supersedes one still waiting in the queue (Toolong's habit): at 10 statuses
a second a slow redraw never falls behind, it skips to the latest.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from textual.message import Message

from dashboards.common.feed import (
    AlertUpdate,
    AvailabilityUpdate,
    CommandUpdate,
    FeedEvent,
    LinkUpdate,
    StatusUpdate,
)
from kent_ops.core import wire

__all__ = [
    "AlertReceived",
    "AvailabilityChanged",
    "CommandReceived",
    "LinkChanged",
    "StatusReceived",
    "to_message",
]


@dataclass(eq=False)
class StatusReceived(Message):
    """A whole status snapshot arrived; a newer one replaces it while it waits."""

    status: wire.Status
    received_at: datetime

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StatusReceived)


@dataclass(eq=False)
class AlertReceived(Message):
    """One alert changed (or its retained message was cleared: ``alert`` None)."""

    alert_id: str
    alert: wire.Alert | None


@dataclass(eq=False)
class CommandReceived(Message):
    """The aggregator's order for one gate changed."""

    gate: str
    command: wire.GateCommand | None


@dataclass(eq=False)
class AvailabilityChanged(Message):
    """The aggregator said it is online, or its last will said offline."""

    online: bool


@dataclass(eq=False)
class LinkChanged(Message):
    """The broker link came up or went down."""

    connected: bool
    reason: str | None = None
    refused: bool = False
    """The broker turned the account away (``reason`` names it), not unreachable."""
    unknown_host: bool = False
    """The broker's host name does not resolve (``reason`` says which)."""


def to_message(event: FeedEvent) -> Message:
    """The message for one feed record."""
    match event:
        case StatusUpdate(status, received_at):
            return StatusReceived(status, received_at)
        case AlertUpdate(alert_id, alert):
            return AlertReceived(alert_id, alert)
        case CommandUpdate(gate, command):
            return CommandReceived(gate, command)
        case AvailabilityUpdate(online):
            return AvailabilityChanged(online)
        case LinkUpdate(connected, reason, refused, unknown_host):
            return LinkChanged(connected, reason, refused, unknown_host)
    raise TypeError(f"not a feed event: {event!r}")
