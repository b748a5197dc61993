"""Engine snapshots in the log and the restart that starts from them.

A real engine and a real evidence log, the link a recording stand-in (service_support),
the wall clock moved by hand: a restart from the last snapshot stands exactly where the
live worker stood and where a replay of the whole log stands, at every point; a
snapshot of another program version is ignored; the storage alerts' numbering goes on;
a log an earlier run found broken is refused at once.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import msgspec
import pytest
from live_support import TOPICS, write_permit
from service_support import HandClock, message, open_worker
from wire_support import gate_count, lot_occupancy

from kent_ops.core.engine import Engine
from kent_ops.core.permit import load_permit
from kent_ops.core.snapshot import differences
from kent_ops.evidence.log import ChainBroken, EvidenceLog, read_records, verify
from kent_ops.evidence.replay import replay
from kent_ops.evidence.system import VerificationFailed
from kent_ops.service.flush import FlushPlan
from kent_ops.service.restore import rebuild
from kent_ops.service.rhythm import Timing
from kent_ops.service.worker import Worker

GATE = TOPICS.gate_count("north")
LOT = TOPICS.lot_occupancy("lot-a")
ALWAYS = Timing(engine_snapshot_s=1e-9, snapshot_s=3, checkpoint_s=7)
"""An engine snapshot at every timer pass."""


def count(seq: int, seconds: float, in_total: int, out_total: int = 0) -> bytes:
    return gate_count(seq, f"2027-07-04T14:00:{seconds:02.0f}Z", in_total, out_total)


def snapshots(path: Path) -> list[int]:
    return [r.id for r in read_records(path) if r.kind == "snapshot"]


def restarted(worker: Worker, path: Path) -> Engine:
    """What a restart on the log as it stands now would start serving with."""
    permit = worker.engine.permit
    again = rebuild(permit, path, worker.clock, worker.topics, worker.outage)
    assert again.snapshot == snapshots(path)[-1]
    return again.engine


def same_as_live(live: Engine, again: Engine) -> None:
    assert again.now == live.now
    assert again.status() == live.status()
    assert again.alerts == live.alerts
    assert differences(again, live.snapshot()) == []


@pytest.mark.parametrize("clock", ["wall", "sensor"])
def test_a_restart_from_any_snapshot_stands_where_the_live_worker_stood(
    tmp_path: Path, clock: str
) -> None:
    path = tmp_path / "e.sqlite"
    permit = load_permit(write_permit(tmp_path, pending_s=2, clear_s=3, stale_after_s=6))
    now = HandClock()
    worker, _ = open_worker(path, permit, clock, now, ALWAYS)  # type: ignore[arg-type]
    lot = lot_occupancy(1, "2027-07-04T14:00:03Z", 590)
    empty = lot_occupancy(2, "2027-07-04T14:00:22Z", 10)
    stream = [
        (1, GATE, count(1, 1, 800)),
        (3, LOT, lot),
        (8, GATE, count(2, 8, 900, 50)),
        (15, GATE, count(3, 15, 900, 900)),
        (22, LOT, empty),
    ]
    checked = 0
    for second in range(1, 25):
        for at, topic, payload in stream:
            if at == second:
                worker.handle([message(topic, payload, now.at(second))])
        now.at(second + 0.5)
        worker.timers()  # a snapshot every time: each one a point a crash could restart from
        if clock == "wall" or second in (1, 3, 8, 15, 22):
            same_as_live(worker.engine, restarted(worker, path))
            checked += 1
    worker.shutdown()
    kinds = [r.kind for r in read_records(path)]
    assert kinds[-1] == "snapshot"  # the clean stop writes one last
    assert kinds.count("snapshot") >= 20
    again = restarted(worker, path)
    same_as_live(worker.engine, again)
    whole = replay(permit, path).engine  # the report's way: from the start, verifying
    assert whole.status() == worker.engine.status()
    assert whole.alerts == worker.engine.alerts
    assert any(a.state == "cleared" for a in worker.engine.alerts.values())
    assert checked >= 5
    assert verify(path).ok


def test_a_snapshot_after_a_tick_no_record_followed_still_restores_the_engines_time(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    permit = load_permit(write_permit(tmp_path, pending_s=2, clear_s=3))
    now = HandClock()
    worker, link = open_worker(
        path, permit, "wall", now, Timing(snapshot_s=1e6, checkpoint_s=1e6, tick_s=1e-9)
    )
    worker.handle([message(GATE, count(1, 1, 10), now.at(1))])
    now.at(1.1)
    worker.timers()  # the first checkpoint, the gate command
    head = worker.evidence.head[0]
    now.at(1.5)
    worker.timers()  # a tick nothing followed: not written
    assert worker.engine.now == now()
    assert worker.evidence.head[0] == head
    link.waiting = True  # a message waits: this flush cannot let time pass
    worker.flush(FlushPlan(state=True))
    written = [r for r in read_records(path)][-2:]
    assert [r.kind for r in written] == ["tick", "snapshot"]
    assert json.loads(written[0].payload)["engine_time"] == "2027-07-04T14:00:01.500000+00:00"
    same_as_live(worker.engine, restarted(worker, path))


def test_a_snapshot_of_another_program_version_is_ignored_and_the_whole_log_replayed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    permit = load_permit(write_permit(tmp_path, pending_s=2, clear_s=3))
    now = HandClock()
    worker, _ = open_worker(path, permit, "wall", now)
    worker.handle([message(GATE, count(1, 1, 800), now.at(1))])
    now.at(6)
    worker.timers()
    worker.shutdown()
    last = [r for r in read_records(path) if r.kind == "snapshot"][-1]
    doc = msgspec.json.decode(last.payload)
    doc["version"] = "0.0.1"
    with EvidenceLog.open(path, event_id=permit.event_id, permit_sha256="ab" * 32) as log:
        log.append("snapshot", last.received_at, payload=msgspec.json.encode(doc))
        log.commit()
    again = rebuild(permit, path, "wall", worker.topics, worker.outage)
    assert again.snapshot is None
    assert again.refused is not None
    assert "kent-ops 0.0.1" in again.refused
    assert again.messages == 1  # the whole log was replayed
    same_as_live(worker.engine, again.engine)
    # The next start writes a snapshot of its own version at once.
    worker2, _ = open_worker(path, permit, "wall", now)
    assert snapshots(path)[-1] == worker2.evidence.head[0]
    assert worker2.rebuilt_from is None


def test_the_storage_alerts_numbering_goes_on_across_a_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    permit = load_permit(write_permit(tmp_path))
    now = HandClock()
    worker, _ = open_worker(path, permit, "sensor", now)
    worker.outage.issued = 3  # three outages, long before the last snapshot
    worker.shutdown()
    worker2, _ = open_worker(path, permit, "sensor", now)
    assert worker2.rebuilt_from == snapshots(path)[-1]
    assert worker2.outage.issued == 3


def test_a_restart_republishes_every_alert_and_command_as_the_log_holds_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    permit = load_permit(write_permit(tmp_path, pending_s=2, clear_s=3))
    now = HandClock()
    worker, link = open_worker(path, permit, "wall", now)
    worker.handle([message(GATE, count(1, 1, 800), now.at(1))])
    now.at(6)
    worker.timers()
    worker.shutdown()
    published = {t: p for t, p in link.published if "/alerts/" in t or t.endswith("/command")}
    assert any("/alerts/" in t for t in published)
    worker2, link2 = open_worker(path, permit, "wall", now)
    assert worker2.rebuilt_from is not None
    again = {t: p for t, p in link2.published if "/alerts/" in t or t.endswith("/command")}
    assert {t: json.loads(p) for t, p in again.items() if "/alerts/" in t} == {
        t: json.loads(p) for t, p in published.items() if "/alerts/" in t
    }
    assert {t for t in again if t.endswith("/command")} == {
        t for t in published if t.endswith("/command")
    }


def test_a_log_an_earlier_run_found_broken_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    permit = load_permit(write_permit(tmp_path))
    now = HandClock()
    worker, _ = open_worker(path, permit, "sensor", now)
    worker.handle([message(GATE, count(1, 1, 10), now.at(1))])
    worker.flush(FlushPlan(lead=[VerificationFailed(record=3, problem="it was changed")]))
    worker.evidence.close()
    with pytest.raises(ChainBroken, match=r"record 3: it was changed \(found by an earlier run"):
        rebuild(permit, path, "sensor", worker.topics, worker.outage)


def test_a_changed_record_after_the_snapshot_is_refused_at_the_start(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    permit = load_permit(write_permit(tmp_path))
    now = HandClock()
    worker, _ = open_worker(path, permit, "sensor", now, ALWAYS)
    worker.timers()
    worker.handle([message(GATE, count(1, 1, 10), now.at(1))])
    worker.evidence.close()
    bad = [r.id for r in read_records(path) if r.kind == "message"][-1]
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("UPDATE records SET payload = replace(payload, '10', '99') WHERE id = ?", (bad,))
    conn.commit()
    conn.close()
    assert snapshots(path)[-1] < bad
    with pytest.raises(ChainBroken) as refused:
        rebuild(permit, path, "sensor", worker.topics, worker.outage)
    assert refused.value.record == bad
