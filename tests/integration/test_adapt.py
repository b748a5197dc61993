"""Rented devices end to end: a network server's broker, the event's broker, the adapter
and the aggregator as real processes, paho clients publishing the documented shapes.

The north gate is a people counter on The Things Stack (cumulative totals in
``decoded_payload``); lot A is a parking sensor on ChirpStack v4 (free spaces in
``object``). Each test reads the event's status, alerts and evidence log.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from live_support import T0, TOPICS, Watcher, permit_text, wait_until

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.evidence.log import read_records, verify

pytestmark = pytest.mark.integration

TTN_TOPIC = "v3/kent-gates@ttn/devices/north-counter/up"
CS_TOPIC = "application/7d0c1b6e-8a3f-4c1e-9d51-0a2b3c4d5e6f/device/0004a30b001c1234/event/up"


def _permit(tmp_path: Path) -> Path:
    text = permit_text(gates=("north", "south"), stale_after_s=3600)
    text = text.replace(
        'id = "north"\n',
        'id = "north"\nsource = { format = "ttn-v3", topic = "v3/kent-gates@ttn/devices/+/up", '
        'in = "people_in", out = "people_out" }\n',
        1,
    )
    text = text.replace(
        'id = "lot-a"\ncapacity = 600\n',
        'id = "lot-a"\ncapacity = 600\nsource = { format = "chirpstack-v4", topic = '
        '"application/+/device/0004a30b001c1234/event/up", free = "freeSpaces" }\n',
        1,
    )
    path = tmp_path / "permit.toml"
    path.write_text(text)
    return path


def ttn_uplink(f_cnt: int, at: float, people_in: int, people_out: int) -> bytes:
    """An uplink as The Things Stack's MQTT server publishes it (its data formats page)."""
    when = (T0 + timedelta(seconds=at)).isoformat().replace("+00:00", "Z")
    uplink: dict[str, Any] = {
        "session_key_id": "AXBSH1Pk6Z0G166RlH16CQ==",
        "f_port": 2,
        "frm_payload": "AQID",
        "decoded_payload": {"people_in": people_in, "people_out": people_out},
        "rx_metadata": [{"gateway_ids": {"gateway_id": "gw-north"}, "rssi": -71, "snr": 9.5}],
        "settings": {"frequency": "904300000", "timestamp": 1234},
        "received_at": when,
        "consumed_airtime": "0.061696s",
    }
    if f_cnt:  # The Things Stack leaves out fields at 0
        uplink["f_cnt"] = f_cnt
    return json.dumps(
        {
            "end_device_ids": {
                "device_id": "north-counter",
                "application_ids": {"application_id": "kent-gates"},
                "dev_eui": "70B3D57ED005B89A",
            },
            "correlation_ids": ["as:up:01HX6YGQ7E0V83YRZ7K4S5J4ZN"],
            "received_at": when,
            "uplink_message": uplink,
        }
    ).encode()


def chirpstack_up(f_cnt: int, at: float, free: int) -> bytes:
    """An ``up`` event as ChirpStack v4's MQTT integration publishes it (JSON mapping)."""
    when = (T0 + timedelta(seconds=at)).isoformat().replace("+00:00", "Z")
    return json.dumps(
        {
            "deduplicationId": "3ac7e3c4-4401-4b8d-9386-a5c902f9202d",
            "time": when,
            "deviceInfo": {
                "tenantId": "52f14cd4-c6f1-4fbd-8f87-4025e1d49242",
                "tenantName": "Kent",
                "applicationId": "7d0c1b6e-8a3f-4c1e-9d51-0a2b3c4d5e6f",
                "applicationName": "parking",
                "deviceProfileName": "parking-sensor",
                "deviceName": "lot-a-sensor",
                "devEui": "0004a30b001c1234",
            },
            "devAddr": "00189440",
            "dr": 3,
            "fCnt": f_cnt,
            "fPort": 1,
            "data": "AQ==",
            "object": {"freeSpaces": free},
            "rxInfo": [{"gatewayId": "0016c001f153a14c", "rssi": -52, "snr": 13.75}],
            "txInfo": {"frequency": 904500000},
        }
    ).encode()


def adapter_raw_records(evidence: Path) -> list[dict[str, Any]]:
    """The adapter's raw records in the log, each with whether it was accepted and why not."""
    return [
        {**json.loads(r.payload), "accepted": r.accepted, "log_reason": r.reason}
        for r in read_records(evidence)
        if r.kind == "message" and "/adapter/" in (r.topic or "")
    ]


class Device:
    """A network server's MQTT publisher: one real paho connection, QoS 1."""

    def __init__(self, broker: MosquittoBroker) -> None:
        self.client = make_client(parse_broker_url(broker.url), "network-server")
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def send(self, topic: str, payload: bytes) -> None:
        info = self.client.publish(topic, payload, qos=1)
        info.wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def ns_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MosquittoBroker]:
    """The LoRaWAN network server's own broker, a second Mosquitto."""
    b = MosquittoBroker(tmp_path_factory.mktemp("network-server")).start()
    try:
        yield b
    finally:
        b.stop()


def _spawn(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "kent_ops", *args],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


class Rig:
    """The aggregator and the adapter as processes, a device and a watcher."""

    def __init__(self, tmp: Path, broker: MosquittoBroker, ns: MosquittoBroker) -> None:
        self.tmp, self.broker, self.ns = tmp, broker, ns
        self.permit = _permit(tmp)
        self.evidence = tmp / "evidence.sqlite"
        self.state = tmp / "adapt-state"
        self.log = tmp / "services.log"
        self.watcher = Watcher(broker)
        self.aggregator = _spawn(
            ["run", "--permit", str(self.permit), "--evidence", str(self.evidence),
             "--broker", broker.url, "--clock", "sensor"],
            self.log,
        )  # fmt: skip
        self.watcher.status(lambda s: True, timeout=20)
        self.adapter: subprocess.Popen[bytes] | None = None
        self.start_adapter()
        self.device = Device(ns)

    def start_adapter(self) -> None:
        self.adapter = _spawn(
            ["adapt", "--permit", str(self.permit), "--broker", self.broker.url,
             "--source-broker", self.ns.url, "--state-dir", str(self.state)],
            self.log,
        )  # fmt: skip
        wait_until(lambda: self._subscribed(), 20, "the adapter's subscription")

    def _subscribed(self) -> bool:
        return "connected to the devices' broker" in self.log.read_text(errors="replace")

    def status(self, predicate: Any, timeout: float = 20) -> dict[str, Any]:
        return self.watcher.status(predicate, timeout)

    def raw_records(self) -> list[dict[str, Any]]:
        return adapter_raw_records(self.evidence)

    def close(self) -> None:
        self.device.close()
        for proc in (self.adapter, self.aggregator):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        self.watcher.close()


@pytest.fixture
def rig(tmp_path: Path, broker: MosquittoBroker, ns_broker: MosquittoBroker) -> Iterator[Rig]:
    r = Rig(tmp_path, broker, ns_broker)
    try:
        yield r
    finally:
        r.close()


def _attendance(n: int, entries: int) -> Any:
    return lambda s: s["attendance"]["current"] == n and s["attendance"]["entries"] == entries


def test_uplinks_become_attendance_and_parking_with_the_raw_bytes_kept(rig: Rig) -> None:
    rig.device.send(TTN_TOPIC, ttn_uplink(0, 1, 40, 5))
    rig.device.send(CS_TOPIC, chirpstack_up(0, 2, 550))
    rig.device.send(TTN_TOPIC, ttn_uplink(1, 60, 700, 20))
    rig.device.send(CS_TOPIC, chirpstack_up(1, 61, 100))
    status = rig.status(
        lambda s: s["parking"]["occupied"] == 500 and s["attendance"]["entries"] == 700
    )
    assert status["attendance"]["current"] == 680
    assert status["rejected"] == 0
    translated = rig.watcher.wait_for(TOPICS.gate_count("north"))
    assert json.loads(translated)["in_total"] == 700
    wait_until(lambda: len(rig.raw_records()) == 4, 15, "four raw records in the log")
    raws = rig.raw_records()
    assert [r["topic"] for r in raws] == [TTN_TOPIC, CS_TOPIC, TTN_TOPIC, CS_TOPIC]
    assert all(r["accepted"] for r in raws)
    assert base64.b64decode(raws[2]["payload_b64"]) == ttn_uplink(1, 60, 700, 20)
    assert raws[3]["translated"]["occupied"] == 500


def test_a_malformed_uplink_is_recorded_with_its_reason_and_changes_no_figure(rig: Rig) -> None:
    rig.device.send(TTN_TOPIC, ttn_uplink(1, 1, 100, 10))
    rig.status(_attendance(90, 100))
    rig.device.send(
        TTN_TOPIC, b'{"uplink_message": {"f_cnt": 2, "decoded_payload": {"people_in": "lots"}}}'
    )
    rig.device.send(TTN_TOPIC, b"\x00not json")
    status = rig.status(lambda s: s["rejected"] == 2)
    assert status["attendance"]["current"] == 90
    raws = wait_until(lambda: len(rig.raw_records()) == 3 and rig.raw_records(), 15, "3 raw")
    bad = [r for r in raws if not r["accepted"]]
    assert len(bad) == 2
    assert all(r["translated"] is None for r in bad)
    assert "people_in" in bad[0]["reason"]
    assert "not a number" in bad[0]["reason"]
    assert "not valid JSON" in bad[1]["reason"]
    assert bad[1]["log_reason"].startswith("the adapter could not read north's message")
    # the report lists them with the rejected messages and links each figure to its bytes
    rig.aggregator.send_signal(signal.SIGTERM)
    rig.aggregator.wait(30)
    out = rig.tmp / "report"
    done = subprocess.run(
        [sys.executable, "-m", "kent_ops", "report", "--permit", str(rig.permit),
         "--evidence", str(rig.evidence), "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    page = (out / "index.html").read_text()
    assert "2 messages rejected" in page
    assert "the adapter could not read north&#x27;s message" in page
    assert "<h4>north</h4><p>3 messages received: 1 translated, 0 repeats" in page
    assert "seq 1: in 100, out 10" in page


def test_a_frame_counter_reset_is_a_device_restart_stitched_with_a_counter_reset(rig: Rig) -> None:
    rig.device.send(TTN_TOPIC, ttn_uplink(1, 1, 300, 100))
    rig.device.send(TTN_TOPIC, ttn_uplink(2, 60, 500, 150))
    rig.status(_attendance(350, 500))
    rig.device.send(TTN_TOPIC, ttn_uplink(2, 61, 500, 150))  # the same frame again: a repeat
    rig.device.send(TTN_TOPIC, ttn_uplink(0, 120, 20, 5))  # rejoined: counts since restart
    rig.device.send(TTN_TOPIC, ttn_uplink(1, 180, 70, 10))
    status = rig.status(_attendance(350 + 60, 570))
    assert status["rejected"] == 0
    resets = [a for a in rig.watcher.alerts().values() if a["rule"] == "counter-reset"]
    assert [a["subject"] for a in resets] == ["north"]
    raws = wait_until(lambda: len(rig.raw_records()) == 5 and rig.raw_records(), 15, "5 raw")
    assert raws[2]["translated"] is None
    assert raws[2]["reason"].startswith("redelivery")
    assert raws[2]["accepted"]
    translations = [r["translated"] for r in raws]
    assert translations[3] == {
        "seq": 1,
        "ts": translations[3]["ts"],
        "in_total": 20,
        "out_total": 5,
    }


def test_an_adapter_killed_mid_stream_counts_nothing_twice_and_loses_nothing(rig: Rig) -> None:
    total_in = total_out = 0
    for n in range(1, 41):
        total_in, total_out = total_in + 7, total_out + 2
        rig.device.send(TTN_TOPIC, ttn_uplink(n, n * 30, total_in, total_out))
        if n == 15:
            assert rig.adapter is not None
            rig.adapter.send_signal(signal.SIGKILL)
            rig.adapter.wait(10)
        if n == 25:
            rig.start_adapter()
    status = rig.status(_attendance(total_in - total_out, total_in), timeout=40)
    assert status["rejected"] == 0
    time.sleep(1.0)  # anything counted twice would show by now
    assert rig.status(lambda s: True)["attendance"]["entries"] == total_in
    raws = rig.raw_records()
    frames = [
        json.loads(base64.b64decode(r["payload_b64"]))["uplink_message"]["f_cnt"] for r in raws
    ]
    assert sorted(set(frames)) == list(range(1, 41))  # every device message is in the log
    assert verify(rig.evidence).ok


def test_a_permit_without_rented_devices_is_refused_in_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "permit.toml"
    path.write_text(permit_text())
    done = subprocess.run(
        [sys.executable, "-m", "kent_ops", "adapt", "--permit", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "no gate or lot has a source table" in done.stderr
