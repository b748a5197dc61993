"""Instants the engine and the report cannot hold, sent through a real Mosquitto.

A gate counter's password is enough to send ``"ts": "9999-12-31T23:59:59-14:00"``; a
Clerk's to revoke the permit from that instant. Each is refused at the wire with its
reason, recorded and acknowledged: the aggregator (on the sensor clock, where the ts is
the engine's time) stays up, starts again on the same log, and ``kent-ops report`` on
it (and on a log an earlier version wrote with such a Clerk message accepted) writes a
report without a traceback. docs/security.md, "Instants the engine cannot hold".
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from live_support import FAST, ROOT, T0, TOPICS, Publisher, Watcher, permit_text, ts
from wire_support import gate_count

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import load_permit
from kent_ops.evidence.log import EvidenceLog, read_records, verify
from kent_ops.service.aggregator import Aggregator, permit_sha256

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

FAR = "9999-12-31T23:59:59-14:00"
"""The latest instant ISO 8601 can write: after 10000-01-01 in UTC."""
EARLY = "0001-01-01T00:00:00+14:00"
"""The earliest: before 0001-01-01 in UTC."""


@contextlib.contextmanager
def serving(agg: Aggregator) -> Iterator[Aggregator]:
    agg.start()
    try:
        assert agg.connected.wait(15), "the aggregator did not connect"
        yield agg
    finally:
        agg.stop()
        assert agg.wait(30), "the aggregator did not stop"


def report(permit: Path, evidence: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", "report", "--permit", str(permit),
         "--evidence", str(evidence), "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip


def gate(seq: int, at: str, in_total: int) -> dict[str, Any]:
    """A gate count carrying ``at`` as written: the instants here lie outside the years
    kent-ops holds, and their text is what the refusal quotes, so it is hand-made."""
    return {"seq": seq, "ts": at, "in_total": in_total, "out_total": 0}


def rows(evidence: Path) -> list[tuple[str, bytes, bool | None, str | None]]:
    return [
        (r.topic or "", r.payload, r.accepted, r.reason)
        for r in read_records(evidence)
        if r.kind == "message"
    ]


# Hand-made: each carries an instant outside the years kent-ops holds, which is the subject.
BAD: list[tuple[str, dict[str, Any], str]] = [
    (TOPICS.gate_count("north"), gate(2, FAR, 900), "ts"),
    (TOPICS.gate_count("north"), gate(3, EARLY, 900), "ts"),
    (TOPICS.lot_occupancy("lot-a"), {"seq": 1, "ts": FAR, "occupied": 5}, "ts"),
    (TOPICS.staff_badge("first-aid"),
     {"seq": 9, "ts": FAR, "badge": "DR-9", "role": "doctor", "action": "on"}, "ts"),
    (TOPICS.inspector("insp-1", "note"), {"ts": FAR, "text": "from the far future"}, "ts"),
    (TOPICS.clerk_permit("town"), {"ts": ts(3), "status": "revoked", "effective_at": FAR,
                           "resolution": "TB-9999"}, "effective_at"),
    (TOPICS.clerk_permit("town"), {"ts": FAR, "status": "revoked", "effective_at": ts(3),
                           "resolution": "TB-9998"}, "ts"),
    (TOPICS.notifier_sent("n1"), {"ts": FAR, "alert": "A-0001", "state": "active", "to": "insp-1",
                          "channel": "sms", "ok": True}, "ts"),
]  # fmt: skip


def test_on_the_sensor_clock_an_instant_out_of_range_is_refused_and_the_service_lives_on(
    tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    permit_path = tmp_path / "permit.toml"
    permit_path.write_text(permit_text())
    permit = load_permit(permit_path)
    evidence = tmp_path / "evidence.sqlite"
    address = parse_broker_url(broker.url)

    first = Aggregator(permit, evidence, address, "sensor", timing=FAST)
    with serving(first):
        publisher.send(TOPICS.gate_count("north"), gate_count(1, ts(1), 100))
        watcher.status(lambda s: s["attendance"]["entries"] == 100)
        for topic, body, _ in BAD:
            publisher.send(topic, json.dumps(body).encode())
        publisher.send(TOPICS.gate_count("north"), gate_count(4, ts(4), 250))
        status = watcher.status(lambda s: s["attendance"]["entries"] == 250)
        assert status["rejected"] == len(BAD)
        assert status["ts"].startswith("2027-07-04T14:00:04")  # the engine's time held
        assert status["permit"]["status"] == "issued"
    assert first.failure is None, first.failure

    logged = rows(evidence)
    refused = [r for r in logged if r[2] is False]
    assert len(refused) == len(BAD)
    for (topic, body, field), (log_topic, payload, _, reason) in zip(BAD, refused, strict=True):
        assert log_topic == topic
        assert json.loads(payload) == body
        assert reason is not None
        assert reason.startswith(f"bad timestamp: {field} ")
        assert "is outside the years kent-ops holds (1970 to 2099, UTC)" in reason

    # A restart on the same log: nothing is redelivered, and the next reading counts.
    second = Aggregator(permit, evidence, address, "sensor", timing=FAST)
    watcher.forget(TOPICS.status)
    with serving(second):
        publisher.send(TOPICS.gate_count("north"), gate_count(5, ts(5), 300))
        watcher.status(lambda s: s["attendance"]["entries"] == 300)
    assert second.failure is None, second.failure
    again = rows(evidence)
    assert len(again) == len(logged) + 1
    assert sum(1 for _, payload, *_ in again if FAR.encode() in payload) == len(BAD) - 1
    assert verify(evidence).ok

    out = tmp_path / "report"
    done = report(permit_path, evidence, out)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    assert (out / "index.html").is_file()


def test_a_revocation_from_the_year_9999_is_refused_live_and_the_report_is_written(
    tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    permit_path = tmp_path / "permit.toml"
    permit_path.write_text(permit_text(window_now=True))
    evidence = tmp_path / "evidence.sqlite"
    agg = Aggregator(
        load_permit(permit_path), evidence, parse_broker_url(broker.url), "wall", timing=FAST
    )
    now = datetime.now(UTC)
    with serving(agg):
        publisher.send(TOPICS.gate_count("north"), gate_count(1, now, 40))
        # Hand-made: its effective_at lies outside the years kent-ops holds (the subject).
        revocation = {"ts": now.isoformat(), "status": "revoked", "effective_at": FAR,
                      "resolution": "TB-9999"}  # fmt: skip
        publisher.send(TOPICS.clerk_permit("town"), json.dumps(revocation).encode())
        publisher.send(TOPICS.gate_count("north"), gate_count(2, now, 50))
        status = watcher.status(lambda s: s["attendance"]["entries"] == 50)
        assert status["rejected"] == 1
        assert status["permit"]["status"] == "issued"
    assert agg.failure is None, agg.failure
    (clerk,) = [r for r in rows(evidence) if "/clerk/" in r[0]]
    assert clerk[2] is False
    assert clerk[3] == (
        f"bad timestamp: effective_at {FAR} is outside the years kent-ops holds (1970 to 2099, UTC)"
    )

    out = tmp_path / "report"
    done = report(permit_path, evidence, out)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "effective_at" in page  # listed among the rejected messages, with its reason


def test_the_report_holds_a_log_that_accepted_such_a_revocation(tmp_path: Path) -> None:
    """A log an earlier version wrote: it accepted the Clerk's message and went on."""
    permit_path = tmp_path / "permit.toml"
    permit_path.write_text(permit_text())
    permit = load_permit(permit_path)
    evidence = tmp_path / "evidence.sqlite"
    log = EvidenceLog.open(evidence, event_id=permit.event_id, permit_sha256=permit_sha256(permit))
    log.append_json("system", T0, {"event": "started", "clock": "wall", "replayed": 0})
    log.append("message", T0 + timedelta(seconds=1), topic=TOPICS.gate_count("north"),
               payload=gate_count(1, ts(1), 40), accepted=True)  # fmt: skip
    # Hand-made: as an earlier version stored them, instants kent-ops now refuses.
    clerk = {"ts": ts(2), "status": "revoked", "effective_at": FAR, "resolution": "TB-9999"}
    log.append("message", T0 + timedelta(seconds=2), topic=TOPICS.clerk_permit("town"),
               payload=json.dumps(clerk).encode(), accepted=True)  # fmt: skip
    late = {"seq": 2, "ts": FAR, "in_total": 45, "out_total": 0}
    log.append("message", T0 + timedelta(seconds=3), topic=TOPICS.gate_count("north"),
               payload=json.dumps(late).encode(), accepted=True)  # fmt: skip
    log.append_json("tick", T0 + timedelta(seconds=9), {"engine_time": ts(9)})
    log.append_json("system", T0 + timedelta(seconds=9), {"event": "stopped"})
    log.commit()
    log.close()

    out = tmp_path / "report"
    done = report(permit_path, evidence, out)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "outside the years kent-ops holds" in page  # the replay refuses them now
