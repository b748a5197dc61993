"""Shared helpers for the core tests: permit variants and an engine driver.

Permit variants are the example permit's TOML with a few values changed, so every test
starts from the file organisers actually copy. The driver feeds an :class:`Engine` on
the sensor clock with payloads whose ``ts`` the test chooses, so every instant in an
assertion is one the test wrote down.
"""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import msgspec
import wire_support

from kent_ops.core.engine import Engine, FeedResult
from kent_ops.core.permit import Permit, parse_permit
from kent_ops.core.wire import Topics

EXAMPLE_PATH = Path(__file__).resolve().parents[2] / "examples" / "permit.toml"
EXAMPLE_TEXT = EXAMPLE_PATH.read_text(encoding="utf-8")
NY = ZoneInfo("America/New_York")
EVENT = "kent-summer-fest-2027"
TOPICS = Topics(EVENT)
PREFIX = TOPICS.prefix
WINDOW_START = datetime(2027, 7, 4, 10, 0, tzinfo=NY)
WINDOW_END = datetime(2027, 7, 4, 23, 30, tzinfo=NY)
US = timedelta(microseconds=1)
DELETE = object()
"""A value for :func:`permit_variant` that removes the key."""


def local(hour: int, minute: int = 0, second: int = 0, *, day: int = 4) -> datetime:
    """An instant on the festival day, in the event's zone (America/New_York)."""
    return datetime(2027, 7, day, hour, minute, second, tzinfo=NY)


TIGHT = {
    "limits.max_at_one_time": 60,
    "limits.max_collective": 200,
    "limits.vehicles_at_one_time": 5,
    "staffing.persons_per_nurse": 10,
    "staffing.security_guards": 2,
    "alerting.hold_at": 50,
    "alerting.resume_below": 45,
    "alerting.stale_after_s": 20,
    "lots": [{"id": "lot-a", "capacity": 3}, {"id": "lot-b", "capacity": 4}],
    "windows": [{"start": local(12, 0, 30), "end": local(12, 3)}],
}
"""Small figures, so a short random history crosses many thresholds and the window."""


def when(value: str | None) -> datetime | None:
    """An ISO time from a status or alert dict, as an aware datetime."""
    return None if value is None else datetime.fromisoformat(value)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def _is_table_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def to_toml(data: dict[str, Any]) -> str:
    """Write the permit's shape of TOML back out (tables, arrays of tables, inline tables)."""
    lines = [
        f"{k} = {_toml_value(v)}"
        for k, v in data.items()
        if not isinstance(v, dict) and not _is_table_list(v)
    ]
    for key, value in data.items():
        if isinstance(value, dict):
            lines.append(f"[{key}]")
            lines += [f"{k} = {_toml_value(v)}" for k, v in value.items()]
        elif _is_table_list(value):
            for item in value:
                lines.append(f"[[{key}]]")
                lines += [f"{k} = {_toml_value(v)}" for k, v in item.items()]
    return "\n".join(lines) + "\n"


def permit_data(changes: dict[str, Any] | None = None) -> dict[str, Any]:
    """The example permit as a dict, with dotted-path ``changes`` applied."""
    data = tomllib.loads(EXAMPLE_TEXT)
    for path, value in (changes or {}).items():
        *parents, leaf = path.split(".")
        table = data
        for name in parents:
            table = table.setdefault(name, {})
        if value is DELETE:
            table.pop(leaf, None)
        else:
            table[leaf] = value
    return data


def permit_text(changes: dict[str, Any] | None = None) -> str:
    """The example permit's TOML with ``changes`` (e.g. ``{"alerting.pending_s": 0}``)."""
    return to_toml(permit_data(changes))


def permit_variant(changes: dict[str, Any] | None = None) -> Permit:
    """A validated permit: the example with ``changes`` applied."""
    return parse_permit(permit_text(changes))


QUICK = {"alerting.pending_s": 0, "alerting.clear_s": 0, "alerting.stale_after_s": 864000}
"""Alerts raised and cleared at once and no sensor going stale: for rule boundaries."""


class Driver:
    """Feeds one engine with payloads whose ``ts`` the test controls (sensor clock)."""

    ROLES = {"doctor": "D", "nurse": "RN", "security": "S"}

    def __init__(self, permit: Permit, clock: str = "sensor") -> None:
        self.permit = permit
        self.engine = Engine(permit, clock=clock)  # type: ignore[arg-type]
        self.topics = Topics(permit.event_id)
        self.seq: dict[str, int] = {}
        self.totals: dict[str, tuple[int, int]] = {g: (0, 0) for g in permit.gates}
        self.on_duty: dict[str, list[str]] = {role: [] for role in self.ROLES}
        self.badges_issued = 0

    # -- raw ----------------------------------------------------------------------------

    def feed(
        self,
        topic: str,
        payload: bytes | str,
        t: datetime,
        *,
        received: datetime | None = None,
        record_id: int | None = None,
    ) -> FeedResult:
        """Feed ``payload`` (from :mod:`wire_support`, or a test's malformed bytes) on
        ``topic`` (built with :attr:`topics`), received at ``received`` (or ``t``)."""
        if isinstance(payload, str):
            payload = payload.encode()
        return self.engine.feed(topic, payload, received or t, record_id)

    def next_seq(self, sensor: str, seq: int | None = None) -> int:
        value = self.seq.get(sensor, 0) + 1 if seq is None else seq
        self.seq[sensor] = value
        return value

    # -- sensors ------------------------------------------------------------------------

    def gate(
        self,
        gate: str,
        t: datetime,
        in_total: int,
        out_total: int,
        *,
        seq: int | None = None,
        received: datetime | None = None,
        record_id: int | None = None,
    ) -> FeedResult:
        payload = wire_support.gate_count(self.next_seq(gate, seq), t, in_total, out_total)
        result = self.feed(
            self.topics.gate_count(gate), payload, t, received=received, record_id=record_id
        )
        if result.accepted:
            self.totals[gate] = (in_total, out_total)
        return result

    def present(self, n: int, t: datetime, gate: str = "north") -> FeedResult:
        """Bring attendance to ``n`` through ``gate``'s counter (totals only ever rise)."""
        others = sum(i - o for g, (i, o) in self.totals.items() if g != gate)
        in_total, out_total = self.totals[gate]
        want = n - others
        if want >= in_total - out_total:
            in_total += want - (in_total - out_total)
        else:
            out_total += (in_total - out_total) - want
        return self.gate(gate, t, in_total, out_total)

    def lot(
        self,
        lot: str,
        t: datetime,
        occupied: int,
        *,
        seq: int | None = None,
        received: datetime | None = None,
    ) -> FeedResult:
        payload = wire_support.lot_occupancy(self.next_seq(lot, seq), t, occupied)
        return self.feed(self.topics.lot_occupancy(lot), payload, t, received=received)

    def badge(
        self,
        t: datetime,
        badge: str,
        role: str,
        action: str,
        *,
        station: str = "first-aid",
        seq: int | None = None,
        received: datetime | None = None,
    ) -> FeedResult:
        payload = wire_support.badge(self.next_seq(station, seq), t, badge, role, action)
        return self.feed(self.topics.staff_badge(station), payload, t, received=received)

    def staff(
        self,
        t: datetime,
        *,
        doctors: int | None = None,
        nurses: int | None = None,
        security: int | None = None,
    ) -> None:
        """Badge staff on or off until exactly these many of each role are on duty."""
        for role, want in (("doctor", doctors), ("nurse", nurses), ("security", security)):
            if want is None:
                continue
            badges = self.on_duty[role]
            while len(badges) < want:
                self.badges_issued += 1
                badge = f"{self.ROLES[role]}-{self.badges_issued:04d}"
                assert self.badge(t, badge, role, "on").accepted
                badges.append(badge)
            while len(badges) > want:
                assert self.badge(t, badges.pop(), role, "off").accepted

    def availability(self, sensor: str, t: datetime, state: str) -> FeedResult:
        """Availability carries no ``ts``: on the sensor clock it is taken now, so tick first."""
        self.tick(t)
        return self.feed(self.topics.availability(sensor), state, t)

    def inspector(self, who: str, leaf: str, t: datetime, **fields: Any) -> FeedResult:
        payload = wire_support.inspector_action(leaf, t, **fields)
        return self.feed(self.topics.inspector(who, leaf), payload, t)

    def tick(self, t: datetime) -> None:
        self.engine.tick(t)

    # -- reading --------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The status as its JSON reads (times as text, as :func:`utc` writes them)."""
        return msgspec.to_builtins(self.engine.status())

    def alerts(self, rule: str | None = None, subject: Any = ...) -> list[dict[str, Any]]:
        """Every alert so far (by id order), optionally of one rule and subject."""
        out = [msgspec.to_builtins(a) for _, a in sorted(self.engine.alerts.items())]
        if rule is not None:
            out = [a for a in out if a["rule"] == rule]
        if subject is not ...:
            out = [a for a in out if a["subject"] == subject]
        return out

    def pending(self, rule: str, subject: Any = ...) -> list[dict[str, Any]]:
        return [
            p
            for p in self.status()["pending"]
            if p["rule"] == rule and (subject is ... or p.get("subject") == subject)
        ]

    def holds(self, rule: str, subject: Any = ...) -> bool:
        """The condition holds now: listed as pending, or an alert not yet ended."""
        if self.pending(rule, subject):
            return True
        return any(a["ended_at"] is None for a in self.alerts(rule, subject))

    @property
    def attendance(self) -> int:
        return self.status()["attendance"]["current"]


def utc(value: datetime) -> str:
    """An instant as the wire writes it: ISO 8601 in UTC, ``Z`` for the offset."""
    return msgspec.to_builtins(value.astimezone(UTC))
