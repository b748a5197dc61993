"""A broker killed between its saves: nothing acknowledged is lost unsaid.

Real processes throughout: a Mosquitto with persistence and a save an hour apart, a real
``kent-ops run`` on the wall clock, a real badge reader from ``sensors/`` on its own
connection. The aggregator crashes; the broker saves (SIGUSR1), so the aggregator's
session comes back "present"; 41 badge scans are sent at QoS 1 and acknowledged; the
broker is SIGKILLed and restarted. Those 41 are gone, as before; now the loss shows,
with its size: the status says the broker restarted and the roster is in doubt until the
reader is heard again, then names the gap (41 numbers) once it is; the report lists it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_support import TOPICS, Watcher, wait_until, write_permit
from runs_support import kent_ops

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.service.broker_restart import MARGIN_S
from sensors.badge_reader import BadgeReader

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]

EVENT = TOPICS.event_id
SAVED_HOURLY = "autosave_interval 3600\nsys_interval 1\n"
"""Persistence on, saved only when told (SIGUSR1) within the test; the uptime every second."""


@pytest.fixture
def saving_broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    broker = MosquittoBroker(tmp_path / "mosquitto", extra_config=SAVED_HOURLY)
    broker.start()
    yield broker
    broker.stop()


def run(
    permit: Path, evidence: Path, broker: MosquittoBroker, log: Path
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "kent_ops", "run", "--permit", str(permit),
         "--evidence", str(evidence), "--broker", broker.url, "--clock", "wall"],
        stdout=subprocess.DEVNULL, stderr=log.open("ab"),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip


def reader(tmp_path: Path, broker: MosquittoBroker) -> BadgeReader:
    """The first-aid badge reader, its seq and roster kept in a state file across reboots."""
    device = BadgeReader(EVENT, "first-aid", state_file=tmp_path / "first-aid.json")
    device.connect(parse_broker_url(broker.url))
    assert device.wait_online(15)
    return device


def save(broker: MosquittoBroker) -> None:
    """Make Mosquitto write its persistence file now, and wait until it has."""
    db = broker.workdir / "data" / "mosquitto.db"
    before = db.stat().st_mtime_ns if db.exists() else 0
    assert broker.process is not None
    os.kill(broker.process.pid, signal.SIGUSR1)
    wait_until(lambda: db.exists() and db.stat().st_mtime_ns != before, 10, "the broker's save")


def kill_and_restart(broker: MosquittoBroker) -> None:
    assert broker.process is not None
    broker.process.kill()  # a power cut, the OOM killer: nothing saved since the last save
    broker.process.wait(10)
    broker.process = None
    broker.start()


def alert_of(watcher: Watcher, rule: str) -> dict[str, Any]:
    """The one alert of ``rule`` the watcher has seen, once it has (a status may reach a
    client that reconnects before the alerts it names: retained, in no set order)."""
    found = wait_until(
        lambda: [a for a in watcher.alerts().values() if a["rule"] == rule] or None,
        30,
        f"a {rule} alert",
    )
    (alert,) = found
    return alert  # type: ignore[no-any-return]


def test_41_acknowledged_scans_lost_by_a_killed_broker_show_with_their_size(
    tmp_path: Path, saving_broker: MosquittoBroker
) -> None:
    broker = saving_broker
    born = time.monotonic()
    permit = write_permit(tmp_path, window_now=True)
    evidence = tmp_path / "evidence.sqlite"
    log = tmp_path / "run.log"
    watcher = Watcher(broker)
    first = run(permit, evidence, broker, log)
    try:
        watcher.wait_for(TOPICS.aggregator_availability, lambda b: b == b"online", 30)
        device = reader(tmp_path, broker)  # its roster on connecting: seq 1
        for k in range(1, 6):  # seq 2–6, recorded
            device.scan(f"RN-{k:04d}", "nurse", "on")
        watcher.status(lambda s: s["medical"]["nurses_on_duty"] == 5, 30)
        first.kill()  # the aggregator crashes (systemd would restart it)
        first.wait(10)
        save(broker)  # the aggregator's session, present, on disk
        for k in range(6, 47):  # seq 7–47: 41 scans, each acknowledged by the broker
            device.scan(f"RN-{k:04d}", "nurse", "on")
        assert device.backlog == 0
        device.close(announce=False)  # waits for every PUBACK; the reader is switched off
        # The aggregator tells a restart from a broker that ran longer than the margin.
        time.sleep(max(0.0, born + MARGIN_S + 8 - time.monotonic()))
        kill_and_restart(broker)
    finally:
        if first.poll() is None:
            first.kill()
    second = run(permit, evidence, broker, log)
    try:
        watcher.forget(TOPICS.status)
        restarted = watcher.status(
            lambda s: s["sensors"]["first-aid"]["doubt"] == "not heard since the broker restarted",
            60,
        )
        broker_alert = alert_of(watcher, "broker-restarted")
        assert broker_alert["id"] in restarted["active_alerts"]
        assert broker_alert["message"].startswith("the event's broker restarted (it had run ")
        assert restarted["medical"]["uncertain"] is True
        assert restarted["medical"]["nurses_on_duty"] == 5  # the 41 never arrived
        assert restarted["attendance"]["uncertain"] is True  # the gates too: not heard since
        # The reader is switched on again: it re-states who is on duty, with seq 48.
        again = reader(tmp_path, broker)
        known = watcher.status(lambda s: s["sensors"]["first-aid"]["missing"] == 41, 30)
        assert known["sensors"]["first-aid"]["gaps"] == 1
        assert known["sensors"]["first-aid"]["last_gap"] == "seq 7–47"
        assert known["medical"]["nurses_on_duty"] == 46  # the roster re-stated them
        assert known["medical"]["uncertain"] is False
        gap = alert_of(watcher, "sensor-gap")
        assert gap["message"] == "badge reader first-aid: seq 7–47 never received"
        again.close()
        second.send_signal(signal.SIGTERM)
        assert second.wait(30) == 0, log.read_text()
    finally:
        if second.poll() is None:
            second.kill()
        watcher.close()
    verified = kent_ops("verify", str(evidence))
    assert verified.returncode == 0, verified.stderr  # the log is whole: the loss is in it
    assert verified.stdout.startswith("OK ")
    # ... and verify says so beside its OK, with the loss's size, never silent about it.
    assert "kent-ops: the log is whole, but it records 2 losses before it" in verified.stderr
    assert "badge reader first-aid: seq 7–47 never received" in verified.stderr
    assert "the event's broker restarted, recorded at" in verified.stderr
    out = tmp_path / "report"
    report = kent_ops("report", "--permit", str(permit), "--evidence", str(evidence),
                      "--out", str(out))  # fmt: skip
    assert report.returncode in (0, 1), report.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Messages never received" in page
    assert "badge reader first-aid" in page
    assert "seq 7–47" in page
    assert "41 messages the sensors sent never reached the log" in page
    assert "The event's broker restarted 1 time" in page
    assert broker_alert["observed"]["how"] in page
    # The replay told the restart where the live service did: the same alerts, the same state.
    assert "replayed alerts equal the" in page
    assert "Engine snapshots that differ from the replay" not in page
