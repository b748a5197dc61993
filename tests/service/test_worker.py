"""The worker: one flush path, tick records, hashes on alerts, a refusing disk, a restart.

A real engine and a real evidence log; the link is a recording stand-in (see
service_support), and the wall clock is moved by hand, so every step is exact.
"""

from __future__ import annotations

import json
from pathlib import Path

from live_support import TOPICS, write_permit
from service_support import HandClock, message, open_worker
from wire_support import gate_count, note

from kent_ops.core.permit import load_permit
from kent_ops.evidence.log import EvidenceRecord, read_records, verify
from kent_ops.evidence.replay import replay
from kent_ops.service.rhythm import Timing
from kent_ops.service.worker import rebuild

GATE = TOPICS.gate_count("north")


def count(seq: int, seconds: float, in_total: int, out_total: int = 0) -> bytes:
    return gate_count(seq, f"2027-07-04T14:00:{seconds:02.0f}Z", in_total, out_total)


def kinds_after(path: Path, record: int) -> list[str]:
    return [r.kind for r in read_records(path, start=record + 1)]


def records(path: Path) -> list[EvidenceRecord]:
    return list(read_records(path))


def test_alerts_are_published_after_the_commit_with_the_hash_of_the_record_they_cite(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    worker, link = open_worker(path, load_permit(write_permit(tmp_path)), "wall", now)
    worker.handle([message(GATE, count(1, 1, 800), now.at(1), mid=7)])
    assert link.acked == [(1, 7)]
    now.at(5)  # the conditions have held for pending_s: raised by the tick
    worker.timers()
    logged = {json.loads(r.payload)["id"]: r.payload for r in records(path) if r.kind == "alert"}
    published = {t.rsplit("/", 1)[1]: p for t, p in link.published if "/alerts/" in t}
    assert logged
    assert published == logged  # the same bytes: the same hash in both
    by_id = {r.id: r for r in records(path)}
    cited = [json.loads(p)["evidence"] for p in logged.values()]
    cited = [evidence for evidence in cited if evidence["record"] is not None]
    assert cited  # nurses and the doctor: raised by the message's attendance
    for evidence in cited:
        assert by_id[evidence["record"]].kind == "message"
        assert evidence["hash"] == by_id[evidence["record"]].hash


def test_a_tick_is_written_down_before_the_records_it_causes(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    worker, _ = open_worker(path, load_permit(write_permit(tmp_path)), "wall", now)
    head = worker.evidence.head[0]
    worker.handle([message(GATE, count(1, 1, 10), now.at(1))])
    # Nothing of the service's own followed the batch's tick: no tick record.
    assert kinds_after(path, head) == ["message"]
    head = worker.evidence.head[0]
    worker.handle([message(GATE, count(2, 2, 800), now.at(2))])
    now.at(5)
    worker.timers()
    written = list(read_records(path, start=head + 1))
    kinds = [r.kind for r in written]
    assert kinds[0] == "message"
    ticks = [i for i, kind in enumerate(kinds) if kind == "tick"]
    assert ticks
    for i in ticks:  # each one is followed by the records of the service's own it caused
        assert kinds[i + 1] in ("alert", "command", "status", "system")
        assert written[i + 1].received_at == written[i].received_at
    last = written[ticks[-1]]
    assert json.loads(last.payload) == {"engine_time": "2027-07-04T14:00:05.000000+00:00"}
    assert worker.engine.now == last.received_at


def test_while_a_message_waits_the_engine_time_does_not_pass(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    worker, link = open_worker(
        path, load_permit(write_permit(tmp_path)), "wall", now, Timing(snapshot_s=0)
    )
    worker.handle([message(GATE, count(1, 1, 10), now.at(1))])
    head = worker.evidence.head[0]
    link.waiting = True
    now.at(9)
    worker.timers()  # a snapshot is due, but no tick: a message received before 9 waits
    written = list(read_records(path, start=head + 1))
    assert "tick" not in [r.kind for r in written]
    assert worker.engine.now is not None
    assert worker.engine.now.second == 1
    assert all(r.received_at == worker.engine.now for r in written)


def test_the_sensor_clock_writes_no_tick_records(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    worker, _ = open_worker(
        path, load_permit(write_permit(tmp_path)), "sensor", now, Timing(snapshot_s=0)
    )
    worker.handle([message(GATE, count(1, 1, 800), now.at(1))])
    worker.handle([message(GATE, count(2, 9, 800), now.at(9))])
    worker.timers()
    worker.shutdown()
    kinds = [r.kind for r in records(path)]
    assert "tick" not in kinds
    assert "alert" in kinds
    assert verify(path).ok


def test_a_refused_commit_acknowledges_and_publishes_nothing_and_holds_the_batch(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    timing = Timing(retry_first_s=0, retry_max_s=0)
    worker, link = open_worker(path, load_permit(write_permit(tmp_path)), "sensor", now, timing)
    conn = worker.evidence._conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages}")  # the disk is now full
    batch = [
        message(TOPICS.inspector("insp-1", "note"),
                note(f"2027-07-04T14:00:0{i}Z", "n" * 3900), now.at(i), mid=10 + i)
        for i in range(1, 4)
    ] + [message(GATE, count(1, 5, 800), now.at(5), mid=20)]  # fmt: skip
    before = len(link.published)
    worker.handle(batch)
    assert link.acked == []
    assert worker.backlog == batch
    assert worker.outage.failing
    assert [t for t, _ in link.published[before:]] == [link.topics.alert("S-0001")]
    assert worker.engine.status().attendance.entries == 0  # rebuilt from the log
    assert not any(r.kind == "message" for r in records(path))

    conn.execute("PRAGMA max_page_count=1073741823")  # space again
    worker.timers()  # the retry's probe is committed
    assert not worker.outage.failing
    assert link.last("alerts/S-0001")["state"] == "cleared"
    worker.handle(worker._take(0.0))
    assert sorted(link.acked) == [(1, 11), (1, 12), (1, 13), (1, 20)]
    assert worker.engine.status().attendance.entries == 800
    assert [r.payload for r in records(path) if r.kind == "message"] == [m[1] for m in batch]
    assert verify(path).ok


def test_a_restart_stands_exactly_where_the_live_worker_stood(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    permit = load_permit(write_permit(tmp_path, pending_s=2, clear_s=3))
    now = HandClock()
    worker, _ = open_worker(path, permit, "wall", now, Timing(snapshot_s=3, checkpoint_s=7))
    worker.handle([message(GATE, count(1, 1, 800), now.at(1))])
    for second in range(2, 12):
        now.at(second + 0.5)
        worker.timers()
    worker.handle([message(GATE, count(2, 12, 800, 800), now.at(12))])  # everyone has left
    now.at(14)
    worker.shutdown()
    live = worker.engine
    again = rebuild(permit, path, "wall", worker.topics, worker.outage).engine
    assert again.now == live.now
    assert again.status() == live.status()
    assert again.alerts == live.alerts
    assert any(a.state != "active" or a.ended_at for a in live.alerts.values())
    assert replay(permit, path).engine.status() == live.status()
