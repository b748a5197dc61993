"""One sensor's password against the evidence log's disk, through a real Mosquitto.

Two layers hold: the broker (every shipped configuration sets ``max_packet_size`` to
256 KiB) drops a client that publishes more, before holding it; and the aggregator keeps
of a rejected payload over 64 KiB only its size, SHA-256 and first 1,024 bytes, and of a
source past its budget for rejected records only a count and the hashes, with a
``flood-started`` record and an ``evidence-flood`` alert. Accepted messages stay whole;
``kent-ops verify`` passes and the report lists what was kept in part or counted.
docs/security.md, "Flooding the log".
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_support import FAST, ROOT, TOPICS, Publisher, Watcher, permit_text, ts
from mosquitto_support import mosquitto_options
from wire_support import gate_count

from kent_ops.broker.bridge import BridgeSettings, bridge_config
from kent_ops.broker.client import BrokerAddress, make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import load_permit
from kent_ops.evidence.log import read_records
from kent_ops.evidence.records import EXCERPT_KEPT, Excerpt
from kent_ops.service.aggregator import Aggregator

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]

LIMIT = 256 * 1024


@contextlib.contextmanager
def serving(agg: Aggregator) -> Iterator[Aggregator]:
    agg.start()
    try:
        assert agg.connected.wait(15), "the aggregator did not connect"
        yield agg
    finally:
        agg.stop()
        assert agg.wait(30), "the aggregator did not stop"
    assert agg.failure is None, agg.failure


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.name.startswith("evidence"))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", *args],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip


def junk(i: int, size: int) -> bytes:
    """A payload of ``size`` bytes the decoder rejects unread, each one different."""
    head = f"junk {i} ".encode()
    return head + bytes([65 + i % 26]) * (size - len(head))


@pytest.mark.slow
def test_a_sensor_flooding_oversized_junk_grows_the_log_by_its_budget_not_its_bytes(
    tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    permit_path = tmp_path / "permit.toml"
    permit_path.write_text(permit_text())
    evidence = tmp_path / "evidence.sqlite"
    timing = dataclasses.replace(FAST, flood_period_s=3.0)  # the 64 KiB budget, as shipped
    agg = Aggregator(
        load_permit(permit_path), evidence, parse_broker_url(broker.url), "sensor", timing=timing
    )
    sent: list[bytes] = []
    good: list[bytes] = []
    with serving(agg):
        publisher.gate("north", 1, 1, 100, 0)
        watcher.status(lambda s: s["attendance"]["entries"] == 100)
        before = folder_bytes(tmp_path)
        for i in range(300):  # 300 x 200 KiB: 60 MB, under the broker's limit, over ours
            payload = junk(i, 200 * 1024)
            sent.append(payload)
            publisher.send(TOPICS.gate_count("north"), payload)
            if i % 50 == 49:  # the same sensor's readings go on meanwhile, kept whole
                good.append(gate_count(2 + i // 50, ts(2 + i), 101 + i))
                publisher.send(TOPICS.gate_count("north"), good[-1])
        assert publisher.all_acknowledged(60)
        status = watcher.status(lambda s: s["attendance"]["entries"] == 101 + 299)
        assert status["rejected"] == 300  # stored in part or counted, each one counts
        grown = folder_bytes(tmp_path) - before
        alert = watcher.alert("S-0001")
        assert (alert["rule"], alert["subject"], alert["severity"], alert["state"]) == (
            "evidence-flood", "sensor-north", "data", "active"
        )  # fmt: skip
        assert "S-0001" in status["active_alerts"]
        # A period with nothing over the budget: the count is written, the alert cleared.
        watcher.alert("S-0001", lambda a: a["state"] == "cleared")

    assert grown < 2 * 1024 * 1024, f"the evidence folder grew by {grown:,} bytes"
    records = list(read_records(evidence))
    excerpts = [r for r in records if r.kind == "message" and not r.accepted]
    assert 10 < len(excerpts) < 60  # the budget's worth
    for record, payload in zip(excerpts, sent, strict=False):
        kept = Excerpt.parse(record.payload, record.reason)
        assert kept == Excerpt(len(payload), hashlib.sha256(payload).hexdigest(),
                               payload[:EXCERPT_KEPT])  # fmt: skip
        assert record.reason is not None
        assert record.reason.startswith(f"payload of {len(payload):,} bytes is over the 64 KiB")
        assert record.payload == payload[:EXCERPT_KEPT]
    accepted = [r.payload for r in records if r.kind == "message" and r.accepted]
    assert accepted[1:] == good  # every reading, whole
    bodies = [json.loads(r.payload) for r in records if r.kind == "system"]
    started = [b for b in bodies if b["event"] == "flood-started"]
    assert [(b["source"], b["budget_bytes"], b["alert"]) for b in started] == [
        ("sensor-north", 64 * 1024, "S-0001")
    ]
    summaries = [b for b in bodies if b["event"] == "flood-summary"]
    counted = sent[len(excerpts) :]
    assert sum(b["messages"] for b in summaries) == len(counted)
    assert sum(b["bytes"] for b in summaries) == sum(len(p) for p in counted)
    at = 0
    for summary in summaries:  # each one's hash covers its messages' hashes, in order
        mine = counted[at : at + summary["messages"]]
        digests = b"".join(hashlib.sha256(p).digest() for p in mine)
        assert summary["sha256"] == hashlib.sha256(digests).hexdigest()
        at += summary["messages"]

    verified = run("verify", str(evidence))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("OK ")
    out = tmp_path / "report"
    done = run("report", "--permit", str(permit_path), "--evidence", str(evidence),
               "--out", str(out))  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    first = Excerpt.parse(excerpts[0].payload, excerpts[0].reason)
    assert first is not None
    assert first.sha256 in page
    assert f"{first.size:,}" in page
    assert summaries[0]["sha256"] in page
    assert f"{len(counted):,} rejected messages" in page


def test_the_broker_drops_a_client_that_publishes_100_mb(
    tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    permit_path = tmp_path / "permit.toml"
    permit_path.write_text(permit_text())
    evidence = tmp_path / "evidence.sqlite"
    agg = Aggregator(
        load_permit(permit_path), evidence, parse_broker_url(broker.url), "sensor", timing=FAST
    )
    with serving(agg):
        flooder = make_client(parse_broker_url(broker.url))
        gone = threading.Event()
        flooder.on_disconnect = lambda *a: gone.set()
        flooder.connect(broker.host, broker.port)
        flooder.loop_start()
        try:
            info = flooder.publish(TOPICS.gate_count("north"), bytes(100_000_000), qos=1)
            assert gone.wait(30), "the broker kept the client that sent 100 MB"
            assert not info.is_published()
        finally:
            flooder.disconnect()
            flooder.loop_stop()
        publisher.gate("north", 1, 1, 70, 0)  # the service is still there and counting
        watcher.status(lambda s: s["attendance"]["entries"] == 70)
    rows = [r for r in read_records(evidence) if r.kind == "message"]
    assert [len(r.payload) for r in rows] == [len(publisher.sent[0][1])]
    assert folder_bytes(tmp_path) < 10 * 1024 * 1024


def test_every_shipped_broker_configuration_refuses_packets_over_256_kib(
    broker: MosquittoBroker,
) -> None:
    two = load_permit(ROOT / "examples" / "permit-two-properties.toml")
    bridge = bridge_config(
        two,
        BridgeSettings(
            property_id="camping-meadow",
            central=BrokerAddress("broker.local", 8883, tls=True),
            password="bridge-secret",
        ),
    )
    configs: dict[str, str] = {
        p.name: p.read_text() for p in sorted((ROOT / "deploy" / "mosquitto").glob("*.conf"))
    }
    configs["deploy bridge"] = bridge
    configs["the tests' and the demo's broker"] = broker.config_path.read_text()
    assert len(configs) == 4
    for name, text in configs.items():
        assert mosquitto_options(text).get("max_packet_size") == [str(LIMIT)], name


def test_a_payload_just_under_the_broker_limit_still_reaches_the_log_as_an_excerpt(
    tmp_path: Path, broker: MosquittoBroker, watcher: Watcher, publisher: Publisher
) -> None:
    """What the broker lets through is still recorded: the rejection is evidence."""
    permit_path = tmp_path / "permit.toml"
    permit_path.write_text(permit_text())
    evidence = tmp_path / "evidence.sqlite"
    agg = Aggregator(
        load_permit(permit_path), evidence, parse_broker_url(broker.url), "sensor", timing=FAST
    )
    payload = junk(1, LIMIT - 1024)
    with serving(agg):
        publisher.send(TOPICS.gate_count("north"), payload)
        watcher.status(lambda s: s["rejected"] == 1)
    (kept,) = [r for r in read_records(evidence) if r.kind == "message"]
    found = Excerpt.parse(kept.payload, kept.reason)
    assert found is not None
    assert (found.size, found.sha256) == (len(payload), hashlib.sha256(payload).hexdigest())
