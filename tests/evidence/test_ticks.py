"""The engine's time, written down: replay ticks at ``tick`` records and nowhere else.

A wall-clock log written the way the service writes one (a live engine fed each
message, a ``tick`` record whenever its time is let pass before records of its own),
then replayed as it is, without its tick records, and with one tick moved: only the
log as written reproduces the live engine.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from live_support import TOPICS, permit_text
from wire_support import gate_count

from kent_ops.core import wire
from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit, load_permit
from kent_ops.evidence.cite import with_hash
from kent_ops.evidence.log import (
    EvidenceError,
    EvidenceLog,
    EvidenceRecord,
    format_time,
    json_bytes,
    read_records,
    verify,
)
from kent_ops.evidence.replay import replay

T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
SHA = "ab" * 32


@pytest.fixture
def permit(tmp_path: Path) -> Permit:
    path = tmp_path / "permit.toml"
    path.write_text(permit_text(pending_s=2, clear_s=3))
    return load_permit(path)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def live_day(path: Path, permit: Permit) -> Engine:
    """Messages and ticks as the service logs them; returns the live engine."""
    engine = Engine(permit, clock="wall")
    log = EvidenceLog.open(path, event_id=permit.event_id, permit_sha256=SHA)

    def tick(seconds: float) -> None:
        engine.tick(at(seconds))
        log.append_json("tick", at(seconds), {"engine_time": format_time(at(seconds))})
        for alert in engine.collect_changes().alerts:
            log.append("alert", at(seconds), payload=wire.encode(with_hash(alert, log.hash_of)))
        log.append("status", at(seconds), payload=wire.encode(engine.status()))

    def send(seconds: float, seq: int, in_total: int, out_total: int = 0) -> None:
        data = gate_count(seq, at(seconds), in_total, out_total)
        r = engine.feed(TOPICS.gate_count("north"), data, at(seconds), log.head[0] + 1)
        log.append("message", at(seconds), topic=TOPICS.gate_count("north"), payload=data,
                   accepted=r.accepted, reason=r.reason)  # fmt: skip

    log.append_json("system", at(0), {"event": "started", "clock": "wall"})
    tick(0)
    send(1, 1, 800)  # too few nurses and no doctor: pending from 1, raised at 3
    tick(5)
    send(6, 2, 800, 800)  # everyone has left: the alerts end at 6, clear at 9
    tick(8)
    tick(12)
    log.commit()
    log.close()
    return engine


def rewrite(
    path: Path, out: Path, change: Callable[[EvidenceRecord], EvidenceRecord | None]
) -> None:
    """A new log, chained afresh, holding ``change`` of every record after the opening one."""
    with EvidenceLog.open(out, event_id="kent-summer-fest-2027", permit_sha256=SHA) as log:
        for rec in list(read_records(path))[1:]:
            new = change(rec)
            if new is not None:
                log.append(new.kind, new.received_at, topic=new.topic, payload=new.payload,
                           accepted=new.accepted, reason=new.reason)  # fmt: skip
        log.commit()
    assert verify(out).ok


def state(permit: Permit, path: Path) -> tuple[Any, ...]:
    engine = replay(permit, path).engine
    return engine.now, engine.status(), engine.alerts


def test_replay_reproduces_the_live_engine_from_the_tick_records(
    tmp_path: Path, permit: Permit
) -> None:
    path = tmp_path / "live.sqlite"
    live = live_day(path, permit)
    now, status, alerts = state(permit, path)
    assert now == live.now == at(12)
    assert status == live.status()
    assert alerts == live.alerts
    medical = [a for a in alerts.values() if a.rule in ("doctor-on-duty", "nurse-ratio")]
    assert [a.state for a in medical] == ["cleared", "cleared"]


def test_without_its_tick_records_a_log_replays_to_another_state(
    tmp_path: Path, permit: Permit
) -> None:
    path = tmp_path / "live.sqlite"
    live = live_day(path, permit)
    stripped = tmp_path / "stripped.sqlite"
    rewrite(path, stripped, lambda rec: None if rec.kind == "tick" else rec)
    now, status, alerts = state(permit, stripped)
    # The status and alert records at 12 are still there; their times move nothing.
    assert now == at(6)  # the last message
    assert status != live.status()
    assert alerts != live.alerts
    medical = [a for a in alerts.values() if a.rule in ("doctor-on-duty", "nurse-ratio")]
    assert [a.state for a in medical] == ["active", "active"]  # ended, never seen cleared


def test_a_moved_tick_record_replays_to_another_state(tmp_path: Path, permit: Permit) -> None:
    path = tmp_path / "live.sqlite"
    live = live_day(path, permit)

    def earlier(rec: EvidenceRecord) -> EvidenceRecord:
        if rec.kind == "tick" and json.loads(rec.payload)["engine_time"].startswith(
            "2027-07-04T14:00:12"
        ):
            moved = {"engine_time": format_time(at(8.5))}
            return EvidenceRecord(rec.id, rec.kind, rec.received_at, None, json_bytes(moved),
                                  None, None, "")  # fmt: skip
        return rec

    moved = tmp_path / "moved.sqlite"
    rewrite(path, moved, earlier)
    now, status, alerts = state(permit, moved)
    assert now == at(8.5)
    assert alerts != live.alerts  # not yet cleared at 8.5
    assert status != live.status()


def test_a_tick_record_without_an_engine_time_is_refused(tmp_path: Path, permit: Permit) -> None:
    path = tmp_path / "live.sqlite"
    live_day(path, permit)
    bad = tmp_path / "bad.sqlite"
    rewrite(
        path,
        bad,
        lambda rec: (
            EvidenceRecord(rec.id, rec.kind, rec.received_at, None, b"{}", None, None, "")
            if rec.kind == "tick"
            else rec
        ),
    )
    with pytest.raises(EvidenceError, match="tick record without an engine time"):
        replay(permit, bad)


def test_the_sensor_clock_is_never_ticked(tmp_path: Path, permit: Permit) -> None:
    path = tmp_path / "live.sqlite"
    live_day(path, permit)
    engine = replay(permit, path, clock="sensor").engine
    assert engine.now == at(6)  # the last message's ts: the tick records are not its time
