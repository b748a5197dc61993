"""Scripted evidence logs for the report's tests, written with the real EvidenceLog.

:class:`ScriptedLog` writes what the aggregator would: each message fed to a live
engine and appended with the engine's verdict, each alert change appended as an
``alert`` record (its evidence hash filled from the log), with the wall clock a
``tick`` record before the records a tick causes, checkpoints now and then, and a
``stopped`` record at the end. No broker is involved; the integration test does that
with a real one.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from functools import partial
from html import unescape
from pathlib import Path
from typing import Any

import wire_support
from live_support import whole_topic
from live_support import write_permit as write_any_permit

from kent_ops.core import wire
from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.wire import Topics
from kent_ops.evidence.cite import with_hash
from kent_ops.evidence.log import EvidenceLog, format_time
from kent_ops.evidence.system import BrokerRestarted

ROOT = Path(__file__).resolve().parents[2]
EVENT = "kent-summer-fest-2027"
TOPICS = Topics(EVENT)
P = TOPICS.prefix

write_permit = partial(write_any_permit, pending_s=10, clear_s=30, security_guards=0)
"""The example permit with slower alerting, no security roster and chosen windows."""


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ScriptedLog:
    """An evidence log written as the aggregator writes it, one scripted message at a time."""

    def __init__(
        self,
        path: Path,
        permit_path: Path,
        t0: datetime,
        clock: str = "sensor",
        *,
        received_shift: timedelta = timedelta(0),
    ) -> None:
        """``received_shift`` puts every receive time that far from the sensors' clock: a
        rehearsal on the sensor clock, run on another day (the demo's wall clock)."""
        self.permit: Permit = load_permit(permit_path)
        self.t0 = t0
        self.shift = received_shift
        self.log = EvidenceLog.open(
            path, event_id=self.permit.event_id, permit_sha256=sha256_file(permit_path)
        )
        self.engine = Engine(self.permit, clock=clock)  # type: ignore[arg-type]
        self.clock = clock
        started = {"event": "started", "clock": clock, "replayed": 0}
        self.log.append_json("system", t0 + received_shift, started)
        self.log.commit()
        self.published: dict[str, wire.Alert] = {}
        self.seqs: dict[str, int] = {}

    def at(self, seconds: float) -> datetime:
        return self.t0 + timedelta(seconds=seconds)

    def received(self, seconds: float) -> datetime:
        """When a record written ``seconds`` into the script is received (see the shift)."""
        return self.at(seconds) + self.shift

    def send(self, topic: str, data: bytes, seconds: float) -> None:
        """Log and feed ``data`` (from :mod:`wire_support`, or a test's malformed bytes)."""
        received = self.received(seconds)
        rid = self.log.head[0] + 1
        topic = whole_topic(topic)
        r = self.engine.feed(topic, data, received, rid)
        self.log.append(
            "message",
            received,
            topic=topic,
            payload=data,
            accepted=r.accepted,
            reason=r.reason,
        )
        self._changes(received)

    def _changes(self, now: datetime) -> None:
        for change in self.engine.collect_changes().alerts:
            alert = with_hash(change, self.log.hash_of)
            self.log.append("alert", now, payload=wire.encode(alert))
            self.published[alert.id] = alert

    def _tick(self, now: datetime) -> None:
        """With the wall clock, let the engine's time pass and write that down."""
        if self.clock == "wall":
            self.engine.tick(now)
            engine_time = format_time(self.engine.now or now)
            self.log.append_json("tick", now, {"engine_time": engine_time})

    def ts(self, seconds: float) -> str:
        return self.at(seconds).isoformat().replace("+00:00", "Z")

    def _seq(self, key: str) -> int:
        self.seqs[key] = self.seqs.get(key, 0) + 1
        return self.seqs[key]

    def gate(self, gate: str, seconds: float, in_total: int, out_total: int = 0) -> None:
        body = wire_support.gate_count(self._seq(gate), self.at(seconds), in_total, out_total)
        self.send(TOPICS.gate_count(gate), body, seconds)

    def lot(self, lot: str, seconds: float, occupied: int) -> None:
        body = wire_support.lot_occupancy(self._seq(lot), self.at(seconds), occupied)
        self.send(TOPICS.lot_occupancy(lot), body, seconds)

    def badge(
        self, seconds: float, badge: str, role: str, action: str = "on", *, seq: int | None = None
    ) -> None:
        """A scan at first-aid; ``seq`` skips to that number (the ones between lost)."""
        if seq is not None:
            self.seqs["first-aid"] = seq - 1
        seq = self._seq("first-aid")
        body = wire_support.badge(seq, self.at(seconds), badge, role, action)
        self.send(TOPICS.staff_badge("first-aid"), body, seconds)

    def roster(self, seconds: float, *on_duty: tuple[str, str]) -> None:
        """The first-aid reader re-states who is on duty there, with its next seq."""
        entries = tuple(wire.OnDuty(b, r) for b, r in on_duty)  # type: ignore[arg-type]
        body = wire.Roster(self._seq("first-aid"), self.at(seconds), entries)
        self.send(TOPICS.staff_roster("first-aid"), wire.encode_reading(body), seconds)

    def broker_restarted(self, seconds: float, how: str) -> None:
        """What the service writes when the broker's uptime says it restarted, and tells
        its engine there (a replay does too)."""
        now = self.received(seconds)
        self._tick(now)
        self.log.append_system(now, BrokerRestarted(how=how, uptime_s=2.0))
        self.engine.broker_restarted(how)
        self._changes(now)

    def inspector(self, who: str, what: str, seconds: float, **fields: Any) -> None:
        body = wire_support.inspector_action(what, self.at(seconds), **fields)
        self.send(TOPICS.inspector(who, what), body, seconds)

    def tick(self, seconds: float, *, status: bool = True) -> None:
        """What the service's timers do: tick, log alert changes, maybe a status snapshot."""
        now = self.received(seconds)
        self._tick(now)
        self._changes(now)
        if status:
            self.log.append("status", now, payload=wire.encode(self.engine.status()))

    def checkpoint(self, seconds: float) -> None:
        count, head = self.log.head
        now = self.received(seconds)
        point = {"record": count, "hash": head, "ts": now.isoformat()}
        self.log.append_json("system", now, {"event": "checkpoint", **point})

    def close(self, seconds: float) -> None:
        now = self.received(seconds)
        self._tick(now)
        self._changes(now)
        self.log.append("status", now, payload=wire.encode(self.engine.status()))
        self.log.append_json("system", now, {"event": "stopped"})
        self.log.commit()
        self.log.close()


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def page_text(html: str) -> str:
    """What a reader sees of the page: tags dropped, entities decoded, spaces collapsed."""
    text = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S)
    text = re.sub(r"</?(span|b|i|em|strong|code|a)\b[^>]*>", "", text)  # inline: no gap
    text = re.sub(r"<[^>]+>", " ", text)
    return re.sub(r"\s+", " ", unescape(text))


def figures_of(cell: str) -> dict[str, str]:
    """A ``key=value; key=value`` cell of findings.csv as a dict of texts."""
    if not cell:
        return {}
    return dict(part.split("=", 1) for part in cell.split("; "))
