"""The report's findings equal what a real aggregator published live, through a real broker.

A real Mosquitto (the ``broker`` fixture), the real :class:`Aggregator` in-process with
the sensor clock, real paho clients publishing a short scripted day and subscribing to
``kent/{e}/alerts/+``; then ``kent-ops report`` on the log the aggregator wrote.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
import wire_support
from live_support import wait_until, whole_topic
from report_support import EVENT, TOPICS, utc, write_permit

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core import wire
from kent_ops.core.permit import load_permit
from kent_ops.evidence.log import read_records
from kent_ops.report.build import build_report
from kent_ops.report.compare import COMPARED_FIELDS
from kent_ops.service.aggregator import Aggregator, Timing

pytestmark = pytest.mark.integration

T0 = utc(2027, 7, 4, 14, 0)
FAST = Timing(heartbeat_s=1.0, snapshot_s=1.0, checkpoint_s=1.0, tick_s=0.2)


class AlertSubscriber:
    """Keeps the latest payload of every ``alerts/+`` topic it receives."""

    def __init__(self, broker: MosquittoBroker) -> None:
        self.alerts: dict[str, wire.Alert] = {}
        self.online = threading.Event()
        self._lock = threading.Lock()
        self.client = make_client(parse_broker_url(broker.url))
        self.client.on_connect = lambda c, *a: c.subscribe(
            [(TOPICS.alerts_wildcard, 1), (TOPICS.aggregator_availability, 1)]
        )
        self.client.on_message = self._on_message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        if msg.topic.endswith("/aggregator/availability"):
            if msg.payload == b"online":
                self.online.set()
            return
        alert = wire.decode_json(wire.Alert, msg.payload)
        with self._lock:
            self.alerts[alert.id] = alert

    def snapshot(self) -> dict[str, wire.Alert]:
        with self._lock:
            return dict(self.alerts)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class Sender:
    """One QoS 1 publisher, so the broker keeps the script's order."""

    def __init__(self, broker: MosquittoBroker) -> None:
        self.client = make_client(parse_broker_url(broker.url))
        self.client.max_inflight_messages_set(100)
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        self.seqs: dict[str, int] = {}

    def send(self, topic: str, payload: bytes) -> None:
        info = self.client.publish(whole_topic(topic), payload, qos=1)
        info.wait_for_publish(timeout=10)

    def _seq(self, sensor: str) -> int:
        self.seqs[sensor] = self.seqs.get(sensor, 0) + 1
        return self.seqs[sensor]

    def gate(self, gate: str, at: float, in_total: int, out_total: int = 0) -> None:
        reading = wire_support.gate_count(
            self._seq(gate), T0 + timedelta(seconds=at), in_total, out_total
        )
        self.send(TOPICS.gate_count(gate), reading)

    def badge(self, at: float, badge: str, role: str, action: str = "on") -> None:
        scan = wire_support.badge(
            self._seq("first-aid"), T0 + timedelta(seconds=at), badge, role, action
        )
        self.send(TOPICS.staff_badge("first-aid"), scan)

    def inspector(self, who: str, action: str, at: float, **fields: Any) -> None:
        body = wire_support.inspector_action(action, T0 + timedelta(seconds=at), **fields)
        self.send(TOPICS.inspector(who, action), body)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def last_logged_alerts(evidence: Path) -> dict[str, wire.Alert]:
    out: dict[str, wire.Alert] = {}
    for rec in read_records(evidence):
        if rec.kind == "alert":
            alert = wire.decode_json(wire.Alert, rec.payload)
            out[alert.id] = alert
    return out


@pytest.mark.timeout(90)
def test_report_findings_equal_the_alerts_a_real_aggregator_published(
    broker: MosquittoBroker, tmp_path: Path
) -> None:
    permit_path = write_permit(tmp_path, pending_s=2, clear_s=3)
    permit = load_permit(permit_path)
    evidence = tmp_path / "evidence.sqlite"
    subscriber = AlertSubscriber(broker)
    sender = Sender(broker)
    agg = Aggregator(permit, evidence, parse_broker_url(broker.url), clock="sensor", timing=FAST)
    agg.start()
    try:
        assert subscriber.online.wait(15), "the aggregator did not come online"
        sender.badge(0, "DR-1", "doctor")
        sender.badge(0, "RN-1", "nurse")
        sender.gate("north", 0, 0)
        sender.gate("south", 0, 0)
        sender.gate("north", 10, 400)
        sender.gate("south", 20, 300)  # 700 present: 2 nurses needed, 1 on duty
        sender.gate("north", 30, 400)
        sender.badge(40, "RN-2", "nurse")  # nurse-ratio ends at 40
        sender.gate("north", 50, 4300)  # 4,600 present: over the 4,000, 10 nurses short
        sender.gate("south", 60, 300)
        sender.inspector("insp-1", "ack", 61, alert="A-0002", comment="on it")
        sender.inspector("insp-1", "note", 62, text="crowd at the <north> gate")
        sender.gate("north", 70, 4300, 1000)  # 3,600: max ends; nurses still short
        sender.seqs["south"] = 0  # the south counter restarts: seq 1 again
        sender.gate("south", 80, 5)
        for k in range(6):
            sender.badge(90, f"RN-{k + 3}", "nurse")
        sender.inspector(
            "insp-1",
            "inspection",
            95,
            item="C(2)(a)",
            result="deficient",
            note="toilets overflowing",
        )
        sender.inspector("insp-1", "inspection", 110, item="C(2)(a)", result="ok")
        for at in (120, 130, 140):
            sender.gate("north", at, 4300, 1000)
        # Every alert has ended and cleared by 140; wait until the subscriber has them all.
        wait_until(
            lambda: (
                len(got := subscriber.snapshot()) >= 5
                and all(a.state == "cleared" for a in got.values())
            ),
            20,
            "every alert cleared at the subscriber",
        )
    finally:
        agg.stop()
        assert agg.wait(20), "the aggregator did not stop"
        sender.close()
    assert agg.failure is None
    published = subscriber.snapshot()
    subscriber.close()
    assert {a.rule for a in published.values()} >= {
        "nurse-ratio",
        "max-at-one-time",
        "counter-reset",
        "facility-deficient",
    }

    outcome = build_report(permit_path, evidence, tmp_path / "report")
    data = outcome.data
    replayed = data.replay.engine.alerts
    logged = last_logged_alerts(evidence)

    def fields(alerts: dict[str, wire.Alert]) -> dict[str, tuple[Any, ...]]:
        return {aid: tuple(getattr(a, f) for f in COMPARED_FIELDS) for aid, a in alerts.items()}

    assert fields(replayed) == fields(published)
    assert fields(replayed) == fields(logged)
    assert data.comparison.equal, data.comparison.problems
    assert [f.id for f in data.findings] == sorted(published)
    for f in data.findings:
        live = published[f.id]
        assert f.start == live.since
        assert f.end == live.ended_at
        assert f.worst_observed == live.worst.observed
        assert f.acknowledged == live.acknowledged
        assert f.evidence_record == live.evidence.record
        assert f.evidence_hash == live.evidence.hash
    assert data.collector.notes[0].text == "crowd at the <north> gate"
    assert data.checkpoints
    assert all(c.matched for c in data.checkpoints)
    assert EVENT in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
