"""A badge reader at a staff station: doctors, nurses and security going on and off duty.

It publishes each scan (docs/protocol.md, Badge reader), and re-states who is on duty
at its station (its roster) every minute and whenever its connection returns, on the
station's roster topic with the next ``seq``: a scan lost between the reader and the
log then leaves the station's roster unknown for a minute at most. Its liveness is its
availability topic. Scans made while the broker is away are kept and sent in order,
each with the time it was made, when the connection returns. Who is on duty there and
``seq`` survive a reboot through ``state_file``.

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
from typing import Any, Literal, TypeGuard, Unpack

from kent_ops.core.sensor_kinds import STATION, Badge, OnDuty, Roster
from kent_ops.core.wire import ROLES, Role
from sensors.device import Device, EventOptions, Unstamped
from sensors.device_cli import DeviceSpec

__all__ = ["ACTIONS", "RESTATE_S", "BadgeReader", "main", "parse_line"]

RESTATE_S = 60.0
"""How often a badge reader re-states who is on duty at its station."""

Action = Literal["on", "off"]
ACTIONS: tuple[Action, ...] = ("on", "off")


def _is_role(role: str) -> TypeGuard[Role]:
    return role in ROLES


def _is_action(action: str) -> TypeGuard[Action]:
    return action in ACTIONS


class BadgeReader(Device):
    """Publishes one message per badge scan, and its station's roster every ``restate_s``
    (None: never); no heartbeat."""

    kind = STATION.name

    def __init__(
        self,
        event_id: str,
        sensor_id: str,
        *,
        restate_s: float | None = RESTATE_S,
        **options: Unpack[EventOptions],
    ) -> None:
        self._backlog: list[tuple[Unstamped, datetime]] = []
        self.on_duty: dict[str, Role] = {}
        """Who is on duty here by this reader's own scans: badge -> role."""
        if restate_s is not None and restate_s <= 0:
            raise ValueError("restate_s must be more than 0")
        self.restate_s = restate_s
        self._restated_at: datetime | None = None
        super().__init__(event_id, sensor_id, heartbeat_s=None, **options)

    @property
    def backlog(self) -> int:
        """Scans waiting for the broker."""
        return len(self._backlog)

    @property
    def roster_topic(self) -> str:
        return self.topics.staff_roster(self.sensor_id)

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
            if action == "on":
                self.on_duty[badge] = role
            else:
                self.on_duty.pop(badge, None)
            self._save_state()
            if not self._backlog and self._send(reading):
                return True
            self._backlog.append((reading, self.clock()))
            return False

    def tick(self, *, force: bool = False) -> bool:
        """Re-state the roster if ``restate_s`` has passed since it last was (or now with
        ``force``); True if sent."""
        if self.restate_s is None and not force:
            return False
        with self._lock:
            last = self._restated_at
            due = last is None or (self.clock() - last).total_seconds() >= (self.restate_s or 0)
            if not (due or force) or self._backlog:
                return False
            return self._restate()

    def _restate(self) -> bool:
        roster = tuple(OnDuty(b, r) for b, r in sorted(self.on_duty.items()))
        if not self._send(partial(Roster, on_duty=roster), topic=self.roster_topic):
            return False
        self._restated_at = self.clock()
        return True

    def _link_up(self) -> None:
        """Send the scans kept while the broker was away, oldest first, at their times;
        then re-state the roster (a broker that restarted may have lost some)."""
        while self._backlog:
            reading, at = self._backlog[0]
            if not self._send(reading, ts=at):
                return
            self._backlog.pop(0)
        if self.restate_s is not None:
            self._restate()

    def _state_fields(self) -> dict[str, Any]:
        return {"on_duty": dict(self.on_duty)}

    def _load_fields(self, data: dict[str, Any]) -> None:
        on_duty = data.get("on_duty", {})
        if not isinstance(on_duty, dict) or not all(
            isinstance(b, str) and _is_role(r) for b, r in on_duty.items()
        ):
            raise ValueError(f"state file {self.state_file} has a bad on_duty")
        self.on_duty = dict(on_duty)


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
    "nurse on'), publishes each scan and re-states who is on duty at its station every "
    "minute (docs/protocol.md, Badge reader).",
)
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
