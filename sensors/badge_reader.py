"""A badge reader at a staff station: doctors, nurses and security going on and off duty.

It publishes only when a badge is scanned (docs/protocol.md, Badge reader); its
liveness is its availability topic. Scans made while the broker is away are kept and
sent in order, each with the time it was made, when the connection returns.

As a library::

    reader = BadgeReader("kent-summer-fest-2027", "first-aid")
    reader.connect(parse_broker_url("mqtt://broker:1883"))
    reader.scan("RN-0042", "nurse", "on")

From the command line, one scan per line on stdin: ``RN-0042 nurse on``::

    python -m sensors.badge_reader --permit permit.toml --id first-aid
"""

from __future__ import annotations

import sys
from datetime import datetime
from functools import partial
from typing import Literal, TypeGuard, Unpack

from kent_ops.core.sensor_kinds import STATION, Badge
from kent_ops.core.wire import ROLES, Role
from sensors.device import Device, EventOptions, Unstamped
from sensors.device_cli import DeviceSpec

__all__ = ["ACTIONS", "BadgeReader", "main", "parse_line"]

Action = Literal["on", "off"]
ACTIONS: tuple[Action, ...] = ("on", "off")


def _is_role(role: str) -> TypeGuard[Role]:
    return role in ROLES


def _is_action(action: str) -> TypeGuard[Action]:
    return action in ACTIONS


class BadgeReader(Device):
    """Publishes one message per badge scan; no heartbeat."""

    kind = STATION.name

    def __init__(self, event_id: str, sensor_id: str, **options: Unpack[EventOptions]) -> None:
        self._backlog: list[tuple[Unstamped, datetime]] = []
        super().__init__(event_id, sensor_id, heartbeat_s=None, **options)

    @property
    def backlog(self) -> int:
        """Scans waiting for the broker."""
        return len(self._backlog)

    def scan(self, badge: str, role: str, action: str) -> bool:
        """Publish one scan (True), or keep it until the broker is back (False)."""
        badge = badge.strip()
        if not badge:
            raise ValueError("a badge id must not be empty")
        if not _is_role(role):
            raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
        if not _is_action(action):
            raise ValueError(f"action must be 'on' or 'off', not {action!r}")
        reading = partial(Badge, badge=badge, role=role, action=action)
        with self._lock:
            if not self._backlog and self._send(reading):
                return True
            self._backlog.append((reading, self.clock()))
            return False

    def _link_up(self) -> None:
        """Send the scans kept while the broker was away, oldest first, at their times."""
        while self._backlog:
            reading, at = self._backlog[0]
            if not self._send(reading, ts=at):
                return
            self._backlog.pop(0)


def parse_line(line: str) -> tuple[str, str, str]:
    """``RN-0042 nurse on`` → ("RN-0042", "nurse", "on"); raise ValueError."""
    words = line.split()
    if len(words) != 3:
        raise ValueError(f"expected 'BADGE ROLE on|off', got {line.strip()!r}")
    badge, role, action = words
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    if action not in ACTIONS:
        raise ValueError(f"action must be 'on' or 'off', not {action!r}")
    return badge, role, action


def _handle(device: Device, line: str) -> None:
    assert isinstance(device, BadgeReader)
    device.scan(*parse_line(line))


COMMAND = DeviceSpec.of(
    STATION,
    BadgeReader,
    _handle,
    "A staff badge reader: reads 'BADGE ROLE on|off' lines from stdin (e.g. 'RN-0042 "
    "nurse on') and publishes each scan (docs/protocol.md, Badge reader).",
)
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
