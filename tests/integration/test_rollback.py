"""Rolling the evidence log back, tried on ``kent-ops run`` against a real Mosquitto.

- A log whose last records were cut (an older copy put back) is refused at the start:
  exit 2 and one sentence, because the broker's retained checkpoint names a later
  record; the checkpoint is left as it was.
- A broker that did not answer at the start is asked again; when it answers, the cut
  log is found, recorded and alerted, and the service stops (exit 2).
- ``--accept-rollback`` goes on with it, recording the finding and raising an
  ``evidence-rollback`` alert, and still never publishes a lower checkpoint.
- A ``-wal`` file deleted after a SIGKILL loses committed records: the head file beside
  the log says so, with no broker checkpoint to go by, and the start is refused.
- An honest restart of a complete log is not disturbed by any of it.
"""

from __future__ import annotations

import json
import shutil
import signal

import pytest
from live_support import TOPICS, Publisher, Watcher, wait_until
from runs_support import Runs
from security_support import logged_alerts, system_events

from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.evidence.log import read_records, verify

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def cut_back(runs: Runs, watcher: Watcher, publisher: Publisher) -> tuple[int, dict[str, object]]:
    """Two runs, then the log as it stood after the first put back (its head file gone
    too): its record count, and the checkpoint the broker retains from the second run."""
    runs.serve(watcher, publisher, 1, 5)
    copy = runs.evidence.with_name("copy.sqlite")
    shutil.copy(runs.evidence, copy)
    kept = len(list(read_records(copy)))
    runs.serve(watcher, publisher, 6, 40)
    point = runs.checkpoint()
    assert point is not None
    assert point["record"] > kept
    shutil.move(copy, runs.evidence)
    runs.evidence.with_name("evidence.sqlite.head").unlink(missing_ok=True)
    return kept, point


def test_a_cut_log_is_refused_and_the_checkpoint_kept(
    runs: Runs, watcher: Watcher, publisher: Publisher
) -> None:
    kept, point = cut_back(runs, watcher, publisher)
    proc = runs.start()
    assert proc.wait(60) == 2
    err = runs.stderr.read_text()
    assert err.count("\n") == 1, err
    assert err.startswith("kent-ops: refusing to run: ")
    assert f"holds {kept:,} records" in err
    assert f"names record {point['record']:,}" in err
    assert "--accept-rollback" in err
    assert runs.checkpoint() == point
    assert len(list(read_records(runs.evidence))) == kept  # nothing written


def test_accept_rollback_goes_on_loudly_and_never_lowers_the_checkpoint(
    runs: Runs, watcher: Watcher, publisher: Publisher
) -> None:
    kept, point = cut_back(runs, watcher, publisher)
    watcher.forget(TOPICS.aggregator_availability)
    proc = runs.start("--accept-rollback")
    watcher.wait_for(TOPICS.aggregator_availability, lambda b: b == b"online", 30)
    alerts = wait_until(lambda: logged_alerts(runs.evidence, "evidence-rollback"), 20, "alert")
    publisher.gate("north", 41, 41, 410, 0)
    watcher.status(lambda s: s["gates"]["north"]["in"] == 410, timeout=30)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0, runs.stderr.read_text()
    assert "EVIDENCE ROLLED BACK" in runs.stderr.read_text()
    alert = alerts[0]
    assert alert["severity"] == "data"
    assert alert["observed"] == {
        "records": kept,
        "source": "the broker's retained checkpoint",
        "accepted": True,
    }
    assert alert["required"] == {"record": point["record"], "hash": point["hash"]}
    published = json.loads(watcher.wait_for(TOPICS.alert(alert["id"])))
    assert published["rule"] == "evidence-rollback"
    accepted = [e for e in system_events(runs.evidence) if e["event"] == "rollback-accepted"]
    assert accepted[0]["claim"]["record"] == point["record"]
    assert len(list(read_records(runs.evidence))) < point["record"]  # type: ignore[operator]
    assert runs.checkpoint() == point  # a lower one was never published
    assert verify(runs.evidence).ok


@pytest.mark.slow
def test_a_broker_that_answers_late_still_finds_the_cut_log_and_stops_it(
    runs: Runs, watcher: Watcher, publisher: Publisher, broker: MosquittoBroker
) -> None:
    kept, point = cut_back(runs, watcher, publisher)
    broker.stop()  # it keeps the retained checkpoint on disk
    proc = runs.start()
    wait_until(lambda: "could not read" in runs.stderr.read_text(), 30, "the start to go on")
    broker.start()
    assert proc.wait(60) == 2
    err = runs.stderr.read_text().splitlines()
    assert err[-1].startswith("kent-ops: refusing to run: ")
    assert f"names record {point['record']:,}" in err[-1]
    found = [e for e in system_events(runs.evidence) if e["event"] == "rollback-found"]
    assert found[0]["records"] == kept
    (alert,) = logged_alerts(runs.evidence, "evidence-rollback")
    assert alert["observed"]["accepted"] is False
    assert "the service stopped" in alert["message"]
    assert runs.checkpoint() == point  # never lowered while it ran
    assert verify(runs.evidence).ok


def test_a_lost_wal_after_a_crash_is_refused_by_the_head_file(
    runs: Runs, watcher: Watcher, publisher: Publisher, broker: MosquittoBroker
) -> None:
    runs.serve(watcher, publisher, 1, 5)  # a clean stop: the records are in the main file
    watcher.forget(TOPICS.aggregator_availability)
    proc = runs.start()
    watcher.wait_for(TOPICS.aggregator_availability, lambda b: b == b"online", 30)
    for seq in range(6, 60):
        publisher.gate("north", seq, seq, 10 * seq, 0)
    watcher.status(lambda s: s["gates"]["north"]["in"] == 590, timeout=30)
    head = runs.evidence.with_name("evidence.sqlite.head")
    count = len(list(read_records(runs.evidence)))
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    runs.evidence.with_name("evidence.sqlite-wal").unlink()
    runs.evidence.with_name("evidence.sqlite-shm").unlink(missing_ok=True)
    # No broker checkpoint to go by: a broker that lost its data.
    broker.stop()
    shutil.rmtree(broker.workdir / "data")
    broker.start()
    assert runs.checkpoint() is None
    left = len(list(read_records(runs.evidence)))
    assert left < count  # the -wal held committed records
    proc = runs.start()
    assert proc.wait(60) == 2
    err = runs.stderr.read_text()
    assert err.count("\n") == 1, err
    assert f"holds {left:,} records but its head file {head}" in err


def test_an_honest_restart_is_not_disturbed(
    runs: Runs, watcher: Watcher, publisher: Publisher
) -> None:
    runs.serve(watcher, publisher, 1, 5)
    point = runs.checkpoint()
    runs.serve(watcher, publisher, 6, 10)
    later = runs.checkpoint()
    assert point is not None
    assert later is not None
    assert later["record"] > point["record"]  # type: ignore[operator]
    events = [e["event"] for e in system_events(runs.evidence)]
    assert "rollback-accepted" not in events
    assert "rollback-found" not in events
    started = [e for e in system_events(runs.evidence) if e["event"] == "started"]
    assert started[1]["checkpoint"]["record"] == point["record"]
    assert not logged_alerts(runs.evidence, "evidence-rollback")
    assert verify(runs.evidence).ok
