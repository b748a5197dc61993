"""A broker that restarted is told by its uptime: read after each connection, compared with
the broker the aggregator saw before (in this run, or in its log), recorded, and handed
to the engine where it stands in the log.

The link's side is driven as paho's network thread would drive it (a fake client, as in
test_link); a real Mosquitto SIGKILLed between its saves is in tests/integration.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

from live_support import write_permit
from service_support import HandClock, message, open_worker
from test_link import OK, TOPICS, Clock, FakeClient, connect, drain
from wire_support import gate_count

from kent_ops.broker.client import parse_broker_url
from kent_ops.core.permit import load_permit
from kent_ops.evidence.log import EvidenceLog, read_records
from kent_ops.evidence.replay import replay
from kent_ops.evidence.system import BrokerConnected, BrokerRestarted, BrokerUptime
from kent_ops.service.broker_restart import MARGIN_S, Seen, UptimeWatch, last_seen, parse_uptime
from kent_ops.service.link import Link
from kent_ops.service.watch import Watch

T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
GATE = TOPICS.gate_count("north")


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_mosquittos_uptime_is_read_and_nothing_else() -> None:
    assert parse_uptime(b"3600 seconds") == 3600.0
    assert parse_uptime(b"0 seconds") == 0.0
    for bad in (b"", b"3600", b"-1 seconds", b"1.5 seconds", b"ten seconds", b"3600 s"):
        assert parse_uptime(bad) is None


def test_an_uptime_that_fell_is_a_restart() -> None:
    watch = UptimeWatch(Seen(3600.0, at(0)))
    restarted = watch.read(4.0, at(10))
    assert restarted == BrokerRestarted(
        how="its uptime fell from 3,600 s to 4 s",
        uptime_s=4.0,
        previous_uptime_s=3600.0,
        previous_at=at(0).isoformat(),
    )
    assert watch.read(14.0, at(20)) is None  # the same broker, seen again


def test_a_broker_that_started_after_the_one_seen_before_restarted_though_its_uptime_rose() -> None:
    """Seen up 5 s at 14:00; at 15:00 up 1,800 s: it started at 14:30, not at 13:59:55."""
    watch = UptimeWatch(Seen(5.0, at(0)))
    restarted = watch.read(1800.0, at(3600))
    assert restarted is not None
    assert (
        restarted.how == "it had run 1,800 s, though the aggregator saw it running 3,600 s before"
    )


def test_the_same_broker_read_late_by_its_retained_uptime_is_no_restart() -> None:
    """A retained uptime lags by up to sys_interval: a start later by the margin is not."""
    assert UptimeWatch(Seen(600.0, at(0))).read(600.0, at(MARGIN_S)) is None
    assert UptimeWatch(Seen(600.0, at(0))).read(600.0, at(MARGIN_S + 1)) is not None
    assert UptimeWatch(Seen(600.0, at(0))).read(3600.0 + 600, at(3600)) is None


def test_a_broker_younger_than_the_connection_the_log_records_restarted() -> None:
    """An older log knows no uptime: the broker was up when the aggregator connected."""
    watch = UptimeWatch(Seen(None, at(0)))
    assert watch.read(3000.0, at(60)) is None  # up since before that connection
    watch = UptimeWatch(Seen(None, at(0)))
    restarted = watch.read(20.0, at(600))
    assert restarted is not None
    assert restarted.previous_uptime_s is None


def test_nothing_seen_before_is_no_restart() -> None:
    assert UptimeWatch(None).read(2.0, at(0)) is None


def test_the_log_says_what_was_seen_last(tmp_path: Path) -> None:
    path = tmp_path / "evidence.sqlite"
    log = EvidenceLog.open(path, event_id="kent-summer-fest-2027", permit_sha256="0" * 64)
    assert last_seen(path) is None
    log.append_system(at(0), BrokerConnected(broker="mqtt://b:1883", session_present=False))
    log.commit()
    assert last_seen(path) == Seen(None, at(0))
    log.append_system(at(1), BrokerUptime(uptime_s=50.0))
    log.append_system(at(2), BrokerConnected(broker="mqtt://b:1883", session_present=True))
    log.commit()
    assert last_seen(path) == Seen(50.0, at(1))
    log.close()


def test_the_link_records_the_first_uptime_of_each_connection_each_minute_and_any_fall() -> None:
    clock = Clock()
    link = Link(
        parse_broker_url("mqtt://127.0.0.1:9"),
        TOPICS,
        "kent-ops-aggregator-test",
        ca_file=None,
        now=clock,
        connected=threading.Event(),
    )
    link.client = FakeClient()  # type: ignore[assignment]

    def uptime(text: bytes) -> None:
        msg = SimpleNamespace(topic="$SYS/broker/uptime", payload=text, mid=0)
        link._on_message(link.client, None, msg)  # type: ignore[arg-type]

    connect(link)
    link._on_subscribe(link.client, None, 1, [OK] * len(link.subscriptions), None)
    drain(link)
    uptime(b"100 seconds")
    uptime(b"110 seconds")  # the same broker, ten seconds on: not recorded
    uptime(b"150 seconds")
    uptime(b"160 seconds")  # a minute since the last recorded: recorded again
    uptime(b"3 seconds")  # fell without a disconnection: recorded
    events = [item[1] for item in drain(link)]
    assert events == [BrokerUptime(uptime_s=u) for u in (100.0, 160.0, 3.0)]
    connect(link)  # a reconnection: its first uptime is recorded again
    drain(link)
    uptime(b"13 seconds")
    assert [item[1] for item in drain(link)] == [BrokerUptime(uptime_s=13.0)]
    assert link.client.acked == []  # type: ignore[attr-defined]  # QoS 0: nothing to ack


def test_the_watch_answers_an_uptime_with_the_record_of_a_restart() -> None:
    watch = Watch(uptime=UptimeWatch(Seen(7200.0, at(0))))
    assert watch.on_event(BrokerUptime(uptime_s=7210.0), at(10)) == []
    (restarted,) = watch.on_event(BrokerUptime(uptime_s=1.0), at(20))
    assert isinstance(restarted, BrokerRestarted)
    assert restarted.how == "its uptime fell from 7,210 s to 1 s"


def test_the_worker_records_a_restart_and_its_engine_takes_it_where_a_replay_does(
    tmp_path: Path,
) -> None:
    """The uptime event, the ``broker-restarted`` it leads to, the engine told right after:
    a replay of the log stands where the live engine stood, alerts and all."""
    path = tmp_path / "e.sqlite"
    now = HandClock()
    permit = load_permit(write_permit(tmp_path))
    worker, _ = open_worker(path, permit, "wall", now)
    worker.watch = Watch(uptime=UptimeWatch(Seen(3600.0, now.at(0))))
    worker.handle([message(GATE, gate_count(1, "2027-07-04T14:00:01Z", 600), now.at(1))])
    own = (None, BrokerUptime(uptime_s=2.0), now.at(3), -1, 0)
    worker.handle([own])
    assert worker.engine.counts.broker_restart == "its uptime fell from 3,600 s to 2 s"
    assert worker.engine.status().attendance.uncertain is True
    worker.handle([message(GATE, gate_count(2, "2027-07-04T14:00:04Z", 610), now.at(4))])
    now.at(9)
    worker.timers()
    worker.shutdown()
    kinds = [(r.kind, r.payload[:30]) for r in read_records(path) if r.kind == "system"]
    assert [k for k, p in kinds if b"broker-restarted" in p] == ["system"]
    replayed = replay(permit, path).engine
    assert replayed.counts.broker_restart == worker.engine.counts.broker_restart
    assert replayed.alerts == worker.engine.alerts
    (alert,) = [a for a in replayed.alerts.values() if a.rule == "broker-restarted"]
    assert (alert.since, alert.ended_at) == (now.at(3), None)  # south, the lots: not heard
