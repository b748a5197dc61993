"""One source's budget for rejected records, oversized payloads kept in part, and a message
the engine raises on: the worker's intake, step by step.

The budget's bookkeeping (:class:`FloodGuard`) runs on a clock the test moves; the worker
runs with a real engine and a real evidence log and a recording stand-in for the link
(see service_support). The same attacks against a real Mosquitto are in
tests/integration/test_flood.py and test_instants.py.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

from live_support import write_permit
from service_support import T0, HandClock, message, open_worker
from wire_support import gate_count

from kent_ops.core import wire
from kent_ops.core.engine import Engine, FeedResult
from kent_ops.core.permit import load_permit
from kent_ops.core.wire import Topics
from kent_ops.evidence.log import read_records, verify
from kent_ops.evidence.records import EXCERPT_KEPT, Excerpt
from kent_ops.evidence.replay import replay
from kent_ops.evidence.system import FloodCountLost, FloodStarted, FloodSummary
from kent_ops.service.flood import FloodGuard, source_of
from kent_ops.service.rhythm import Timing
from kent_ops.service.worker import rebuild

TOPICS = Topics("kent-summer-fest-2027")
P = TOPICS.prefix
GATE = TOPICS.gate_count("north")


class Mono:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def numbers() -> object:
    n = iter(range(1, 1000))
    return lambda: f"S-{next(n):04d}"


def guard(budget: int = 1000, period_s: float = 60.0) -> tuple[FloodGuard, Mono]:
    mono = Mono()
    return FloodGuard(budget, period_s, numbers(), mono), mono  # type: ignore[arg-type]


def count(seq: int, in_total: int, ts: str = "2027-07-04T14:00:05Z") -> bytes:
    return gate_count(seq, ts, in_total)


# -- the guard alone --------------------------------------------------------------------------


def test_sources_are_named_as_the_access_list_names_their_accounts() -> None:
    assert source_of(P, TOPICS.gate_count("north")) == "sensor-north"
    assert source_of(P, TOPICS.availability("north")) == "sensor-north"
    assert source_of(P, TOPICS.lot_occupancy("lot-a")) == "sensor-lot-a"
    assert source_of(P, TOPICS.inspector("insp-1", "note")) == "inspector-insp-1"
    assert source_of(P, TOPICS.clerk_permit("town")) == "clerk-town"
    assert source_of(P, TOPICS.notifier_sent("n1")) == "notifier-n1"
    assert source_of(P, f"{P}/nonsense") == "unknown-topic"
    assert source_of(P, Topics("other-event").gate_count("north")) == "unknown-topic"


def test_over_its_budget_a_source_is_counted_and_alerted_once() -> None:
    g, mono = guard(budget=1000)
    g.begin()
    g.charge("sensor-north", 600, T0)
    assert g.exhausted == set()
    assert g.lead() == []
    g.charge("sensor-north", 600, T0)
    assert g.exhausted == {"sensor-north"}
    lead = g.lead()
    started, alert = lead
    assert isinstance(started, FloodStarted)
    assert started.source == "sensor-north"
    assert isinstance(alert, wire.Alert)
    assert (alert.id, alert.rule, alert.subject, alert.state) == (
        "S-0001", "evidence-flood", "sensor-north", "active"
    )  # fmt: skip
    assert alert.severity == "data"
    g.charge("sensor-north", 600, T0)  # still over: nothing more to say
    assert len(g.lead()) == 2
    assert g.commit() == [alert]
    assert g.active() == [alert]


def test_a_period_ends_with_a_summary_whose_hash_covers_each_payload_in_order() -> None:
    g, mono = guard(budget=10, period_s=60)
    g.begin()
    g.charge("sensor-north", 20, T0)
    payloads = [b"junk %d" % i for i in range(5)] + [b"x" * 70_000]
    for payload in payloads:
        g.count("sensor-north", GATE, payload, "not valid JSON", T0)
    g.commit()
    assert not g.period_due()
    mono.t = 60
    assert g.period_due()
    g.begin()
    g.end_period(T0)
    (summary,) = g.lead()
    assert isinstance(summary, FloodSummary)
    expected = hashlib.sha256(b"".join(hashlib.sha256(p).digest() for p in payloads))
    assert summary.messages == 6
    assert summary.size == sum(len(p) for p in payloads)
    assert summary.largest == 70_000
    assert summary.sha256 == expected.hexdigest()
    assert summary.reasons == {"not valid JSON": 6}
    assert summary.topics == {GATE: 6}
    g.commit()
    assert g.exhausted == set()
    assert [a.state for a in g.active()] == ["active"]  # this period was not quiet

    mono.t = 120  # a quiet period: the alert is cleared, with what was counted
    g.begin()
    g.end_period(T0)
    (cleared,) = g.lead()
    assert isinstance(cleared, wire.Alert)
    assert cleared.state == "cleared"
    assert cleared.observed["counted"] == 6
    assert g.commit() == [cleared]
    assert g.active() == []


def test_a_refused_commit_undoes_the_batch_so_nothing_is_counted_twice() -> None:
    g, _ = guard(budget=10)
    g.begin()
    g.charge("sensor-north", 20, T0)
    g.count("sensor-north", GATE, b"junk", "not valid JSON", T0)
    g.commit()
    g.begin()
    g.count("sensor-north", GATE, b"more junk", "not valid JSON", T0)
    g.charge("sensor-south", 20, T0)
    g.rollback()
    assert g.exhausted == {"sensor-north"}
    g.begin()
    g.end_period(T0)
    summary = g.lead()[0]
    assert isinstance(summary, FloodSummary)
    assert summary.messages == 1
    assert [a.subject for a in g.active()] == ["sensor-north"]


def test_a_closing_stop_clears_every_alert_and_a_restart_adopts_those_left_active(
    tmp_path: Path,
) -> None:
    g, _ = guard(budget=10)
    g.begin()
    g.charge("sensor-north", 20, T0)
    (alert,) = g.commit()
    retained = {TOPICS.alert(alert.id): wire.encode(alert), TOPICS.alert("A-0001"): b"{}"}
    after_a_crash, _ = guard(budget=10)
    (lost,) = after_a_crash.adopt(retained)
    assert isinstance(lost, FloodCountLost)
    assert (lost.source, lost.alert) == ("sensor-north", alert.id)
    assert after_a_crash.active() == [alert]
    status = after_a_crash.decorate(Engine(load_permit(write_permit(tmp_path))).status())
    assert status.active_alerts == [alert.id]
    after_a_crash.begin()
    after_a_crash.end_period(T0, closing=True)
    assert [a.state for a in after_a_crash.commit()] == ["cleared"]


# -- the worker -------------------------------------------------------------------------------


def test_an_oversized_payload_is_kept_as_its_size_hash_and_first_bytes(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    worker, link = open_worker(path, load_permit(write_permit(tmp_path)), "sensor", now)
    pad = b',"pad":"' + b"p" * 1_000_000 + b'"}'
    big = count(1, 5)[:-1] + pad  # by hand: a valid reading grown past the 64 KiB limit
    worker.handle([(GATE, big, now.at(1), 1, 5)])
    assert link.acked == [(1, 5)]
    (kept,) = [r for r in read_records(path) if r.kind == "message"]
    assert kept.accepted is False
    assert kept.topic == GATE
    digest = hashlib.sha256(big).hexdigest()
    assert kept.reason == (
        f"payload of {len(big):,} bytes is over the 64 KiB limit; the log keeps its first "
        f"1,024 bytes and the SHA-256 of all of it, {digest}"
    )
    assert kept.payload == big[:EXCERPT_KEPT]
    assert Excerpt.parse(kept.payload, kept.reason) == Excerpt(len(big), digest, big[:1024])
    assert worker.engine.status().rejected == 1
    worker.shutdown()
    assert verify(path).ok
    result = replay(
        load_permit(write_permit(tmp_path)), path
    )  # the replay takes it as it was taken
    assert (result.messages, result.disagreements, result.engine.rejected) == (1, 0, 1)


def test_past_its_budget_a_sensor_s_rejected_messages_are_counted_not_stored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    timing = Timing(flood_budget_bytes=4000, flood_period_s=3600)
    permit = load_permit(write_permit(tmp_path))
    worker, link = open_worker(path, permit, "sensor", now, timing)
    junk = [(GATE, b"not json %d" % i, now.at(1), 1, 100 + i) for i in range(100)]
    good = message(GATE, count(1, 300), now.at(2), mid=500)
    worker.handle([*junk, good])
    assert len(link.acked) == 101  # every one acknowledged: stored or counted
    assert worker.engine.status().rejected == 100
    stored = [r for r in read_records(path) if r.kind == "message"]
    assert 5 < len(stored) - 1 < 20  # the budget's worth, then the good one, whole
    assert stored[-1].payload == good[1]
    assert stored[-1].accepted
    started = [json.loads(r.payload) for r in read_records(path) if r.kind == "system"]
    assert [s["source"] for s in started if s["event"] == "flood-started"] == ["sensor-north"]
    alert = link.last("alerts/S-0001")
    assert (alert["rule"], alert["state"], alert["subject"]) == (
        "evidence-flood", "active", "sensor-north"
    )  # fmt: skip
    worker.rhythm.status_dirty = True
    worker.link.connected.set()
    worker.publish_status(0.0)
    assert "S-0001" in link.last("/status")["active_alerts"]

    worker.shutdown()  # a clean stop: the count so far, and the alert cleared
    bodies = [json.loads(r.payload) for r in read_records(path) if r.kind == "system"]
    (summary,) = [b for b in bodies if b["event"] == "flood-summary"]
    counted = [p for _, p, *_ in junk[len(stored) - 1 :]]
    assert summary["messages"] == len(counted) == 100 - (len(stored) - 1)
    digests = b"".join(hashlib.sha256(p).digest() for p in counted)
    assert summary["sha256"] == hashlib.sha256(digests).hexdigest()
    assert link.last("alerts/S-0001")["state"] == "cleared"
    assert verify(path).ok
    # The counted messages never reached the engine, live or on replay: the two agree.
    result = replay(permit, path)
    assert result.disagreements == 0
    assert result.engine.status().attendance.entries == 300
    assert result.engine.rejected == 100  # the stored ones, and the summary's count


def test_the_s_numbers_go_on_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    timing = Timing(flood_budget_bytes=100, engine_snapshot_s=3600)
    permit = load_permit(write_permit(tmp_path))
    worker, link = open_worker(path, permit, "sensor", now, timing)
    worker.handle([(GATE, b"junk", now.at(1), 1, 1)])
    assert link.last("alerts/S-0001")["state"] == "active"
    worker.evidence.close()  # a crash: no stop, no snapshot after the alert
    again, link2 = open_worker(path, permit, "sensor", now, timing)
    assert [a.id for a in again.intake.guard.active()] == ["S-0001"]  # adopted, to clear
    assert again.outage.next_id() == "S-0002"
    lost = [json.loads(r.payload) for r in read_records(path) if r.kind == "system"]
    assert [b["source"] for b in lost if b["event"] == "flood-count-lost"] == ["sensor-north"]


class RaisesOn(Engine):
    """An engine with a fault: it raises on one payload (none is known in the real one)."""

    def feed(
        self, topic: str, payload: bytes, received_at: datetime, record_id: int | None = None
    ) -> FeedResult:
        if b"boom" in payload:
            raise OverflowError("date value out of range")
        return super().feed(topic, payload, received_at, record_id)


def test_a_message_the_engine_raises_on_is_recorded_as_rejected_and_acknowledged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    permit = load_permit(write_permit(tmp_path))
    worker, link = open_worker(path, permit, "sensor", now)
    worker.engine = RaisesOn(permit, "sensor")
    batch = [
        message(GATE, count(1, 100), now.at(1), mid=1),
        (GATE, b'{"boom": 1}', now.at(2), 1, 2),
        message(GATE, count(2, 200, "2027-07-04T14:00:06Z"), now.at(3), mid=3),
    ]
    worker.handle(batch)
    assert link.acked == [(1, 1), (1, 2), (1, 3)]
    rows = [r for r in read_records(path) if r.kind == "message"]
    assert [r.accepted for r in rows] == [True, False, True]
    assert rows[1].reason == (
        "the engine could not take this message (OverflowError: date value out of range)"
    )
    assert worker.engine.status().attendance.entries == 200
    worker.shutdown()
    # A replay meets the same fault at the same record and takes it the same way.
    result = replay(permit, path, resume=(RaisesOn(permit, "sensor"), 1))
    assert (result.messages, result.disagreements) == (3, 0)
    assert result.engine.status().attendance.entries == 200
    # The fixed engine (a restart after an upgrade) starts on the same log.
    rebuilt = rebuild(permit, path, "sensor", worker.topics, worker.outage)
    assert rebuilt.engine.status().attendance.entries == 200


def test_what_was_counted_is_written_down_before_an_engine_snapshot_counts_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.sqlite"
    now = HandClock()
    timing = Timing(flood_budget_bytes=100, engine_snapshot_s=1e-9, flood_period_s=3600)
    permit = load_permit(write_permit(tmp_path))
    worker, _ = open_worker(path, permit, "sensor", now, timing)
    worker.handle([(GATE, b"junk %d" % i, now.at(1), 1, i) for i in range(1, 30)])
    live = worker.engine.status().rejected
    assert live == 29
    worker.timers()  # an engine snapshot is due
    kinds = [(r.kind, json.loads(r.payload).get("event") if r.kind == "system" else None)
             for r in read_records(path)]  # fmt: skip
    assert kinds.index(("system", "flood-summary")) < kinds.index(("snapshot", None))
    worker.evidence.close()  # and then a crash: the restart starts from that snapshot
    again, _ = open_worker(path, permit, "sensor", now, timing)
    assert again.rebuilt_from is not None
    assert again.engine.status().rejected == live
    assert replay(permit, path).engine.rejected == live
