"""A restart from the last engine snapshot, with a real Mosquitto and a real evidence log.

The service runs as ``python -m kent_ops run``, as in the field:

- stopped (it writes a snapshot at the stop) and started again, it starts from that
  snapshot, replays nothing, and publishes the status it stood at;
- a snapshot of another program version is ignored: the whole log is replayed (and a
  snapshot of this version written at once);
- a record changed behind the snapshot: the restarted service serves from the
  snapshot, its background verification finds the record, it raises and publishes an
  ``evidence-storage`` alert naming it and exits 1; the next start refuses the log.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from live_support import EVENT, TOPICS, Publisher, Watcher, permit_text, ts, wait_until
from wire_support import badge, gate_count, lot_occupancy

from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.evidence.log import EvidenceLog, read_records, verify

pytestmark = pytest.mark.integration


@pytest.fixture
def permit_path(tmp_path: Path) -> Path:
    path = tmp_path / "permit.toml"
    path.write_text(permit_text(gates=("north", "south"), pending_s=1, clear_s=2))
    return path


@pytest.fixture
def evidence(tmp_path: Path) -> Path:
    return tmp_path / "evidence.sqlite"


def spawn(
    permit: Path, evidence: Path, broker: MosquittoBroker, log: Path
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "kent_ops", "run", "--permit", str(permit), "--evidence",
         str(evidence), "--broker", broker.url, "--clock", "sensor"],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip


class Service:
    """``kent-ops run`` on one permit, log and broker, started as often as a test likes."""

    def __init__(self, permit: Path, evidence: Path, broker: MosquittoBroker, log: Path) -> None:
        self.permit, self.evidence, self.broker, self.log = permit, evidence, broker, log
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        self.procs.append(spawn(self.permit, self.evidence, self.broker, self.log))
        return self.procs[-1]

    def text(self) -> str:
        return self.log.read_text()


@pytest.fixture
def service(
    permit_path: Path, evidence: Path, broker: MosquittoBroker, tmp_path: Path
) -> Iterator[Service]:
    s = Service(permit_path, evidence, broker, tmp_path / "aggregator.log")
    yield s
    for proc in s.procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def first_run(service: Service, watcher: Watcher, publisher: Publisher) -> dict[str, Any]:
    """A run that counts, raises alerts and stops cleanly; the last status it published."""
    proc = service.start()
    watcher.wait_for(TOPICS.aggregator_availability, lambda b: b == b"online", 30)
    publisher.send(TOPICS.staff_badge("first-aid"), badge(1, ts(0), "DR-1", "doctor"))
    for seq in range(1, 21):
        publisher.send(TOPICS.gate_count("north"), gate_count(seq, ts(seq), 60 * seq, seq))
    publisher.send(TOPICS.lot_occupancy("lot-a"), lot_occupancy(1, ts(21), 590))
    publisher.send(TOPICS.gate_count("south"), gate_count(1, ts(30), 5))
    watcher.status(lambda s: s["gates"]["south"]["in"] == 5, timeout=30)
    assert watcher.alerts(), "the run raised no alert"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert [r.kind for r in read_records(service.evidence)][-1] == "snapshot"
    return watcher.statuses[-1]  # the one it published as it stopped


def started_records(path: Path) -> list[dict[str, Any]]:
    events = [json.loads(r.payload) for r in read_records(path) if r.kind == "system"]
    return [e for e in events if e["event"] == "started"]


def snapshot_ids(path: Path) -> list[int]:
    return [r.id for r in read_records(path) if r.kind == "snapshot"]


def restarted_status(watcher: Watcher, starts: int) -> dict[str, Any]:
    """The first status the ``starts``-th run publishes."""
    seen = len(watcher.statuses)
    wait_until(lambda: watcher.availability.count(b"online") >= starts, 30, "the restart online")
    wait_until(lambda: len(watcher.statuses) > seen, 30, "a status from the restarted run")
    return watcher.statuses[-1]


@pytest.mark.timeout(120)
def test_a_restart_starts_from_the_snapshot_and_stands_where_it_stood(
    service: Service, watcher: Watcher, publisher: Publisher, evidence: Path
) -> None:
    live = first_run(service, watcher, publisher)
    stop_snapshot = snapshot_ids(evidence)[-1]
    proc = service.start()
    again = restarted_status(watcher, 2)
    verified = "evidence verified in the background: OK"
    wait_until(lambda: verified in service.text(), 60, "the background verification")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert again == live
    started = started_records(evidence)
    assert [(s["snapshot"], s["replayed"]) for s in started] == [(None, 0), (stop_snapshot, 0)]
    assert f"rebuilt from the engine snapshot in record {stop_snapshot}" in service.text()
    assert verify(evidence).ok


@pytest.mark.timeout(120)
def test_a_snapshot_of_another_program_version_is_ignored(
    service: Service, watcher: Watcher, publisher: Publisher, evidence: Path
) -> None:
    live = first_run(service, watcher, publisher)
    last = [r for r in read_records(evidence) if r.kind == "snapshot"][-1]
    doc = msgspec.json.decode(last.payload)
    doc["version"] = "0.0.1"
    conn = sqlite3.connect(f"file:{evidence}?mode=ro", uri=True)
    sha = conn.execute("SELECT value FROM meta WHERE key = 'permit_sha256'").fetchone()[0]
    conn.close()
    with EvidenceLog.open(evidence, event_id=EVENT, permit_sha256=sha) as log:
        log.append("snapshot", last.received_at, payload=msgspec.json.encode(doc))
        log.commit()
    proc = service.start()
    again = restarted_status(watcher, 2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert again == live
    second = started_records(evidence)[-1]
    assert second["snapshot"] is None
    assert "kent-ops 0.0.1" in second["snapshot_refused"]
    assert second["replayed"] > 20  # every message of the log, again
    assert "replaying the whole log" in service.text()
    assert snapshot_ids(evidence)[-1] > last.id  # one of this version, written at the start
    assert verify(evidence).ok


@pytest.mark.timeout(120)
def test_a_changed_record_behind_the_snapshot_stops_the_running_service_with_exit_1(
    service: Service, watcher: Watcher, publisher: Publisher, evidence: Path
) -> None:
    first_run(service, watcher, publisher)
    bad = [r.id for r in read_records(evidence) if r.kind == "message"][5]
    assert bad < snapshot_ids(evidence)[-1]
    conn = sqlite3.connect(evidence)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("UPDATE records SET payload = replace(payload, '0', '9') WHERE id = ?", (bad,))
    conn.commit()
    conn.close()
    assert verify(evidence).first_bad == bad

    proc = service.start()
    assert proc.wait(60) == 1
    alert = watcher.alert("S-0001")
    assert (alert["rule"], alert["state"], alert["severity"]) == (
        "evidence-storage",
        "active",
        "data",
    )
    assert alert["observed"]["record"] == bad
    assert f"does not verify at record {bad}" in alert["message"]
    assert watcher.availability.count(b"online") == 2  # it had started serving
    assert watcher.availability[-1] == b"offline"
    text = service.text()
    assert f"EVIDENCE LOG BROKEN: {evidence} does not verify: record {bad}" in text
    assert "Traceback" not in text
    events = [json.loads(r.payload) for r in read_records(evidence) if r.kind == "system"]
    failed = [e for e in events if e["event"] == "verification-failed"]
    assert [e["record"] for e in failed] == [bad]
    logged = [json.loads(r.payload) for r in read_records(evidence) if r.kind == "alert"]
    assert any(a["id"] == "S-0001" and a["observed"]["record"] == bad for a in logged)

    # The next start refuses the log at once, in one sentence.
    again = subprocess.run(
        [sys.executable, "-m", "kent_ops", "run", "--permit", str(service.permit),
         "--evidence", str(evidence), "--broker", service.broker.url, "--clock", "sensor"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert again.returncode == 1, again.stderr
    lines = again.stderr.strip().splitlines()
    assert len(lines) == 1, again.stderr
    assert f"record {bad}" in lines[0]
    assert "earlier run" in lines[0]
