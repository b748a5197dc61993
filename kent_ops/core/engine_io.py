"""What the engine hands back: the verdict on one message, and what changed to publish."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from kent_ops.core import wire

__all__ = ["Changes", "FeedResult"]


class FeedResult(NamedTuple):
    """What became of one received message.

    ``kind`` is the message's kind (``gate``, ``lot``, ``badge``, ``availability``,
    ``note``, ``ack``, ``inspection``, ``adjust``, or ``unknown`` for a rejection that
    could not be classified). ``time`` is the time the engine took it at (the receive
    time, or the payload's ``ts`` with ``clock="sensor"``).
    """

    accepted: bool
    reason: str | None
    kind: str
    time: datetime


@dataclass(slots=True)
class Changes:
    """Alerts and gate commands that changed since the last ``collect_changes``.

    ``alerts`` holds each changed alert once, in its latest form, ordered by id.
    ``commands`` maps a gate id to its new command.
    """

    alerts: list[wire.Alert] = field(default_factory=list)
    commands: dict[str, wire.GateCommand] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.alerts or self.commands)
