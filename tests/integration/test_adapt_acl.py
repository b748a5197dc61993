"""The adapter under the access list ``kent-ops deploy acl`` writes, on a real Mosquitto.

The LoRaWAN example permit's devices publish on the event's own broker with their
``sensor-{id}`` accounts; ``kent-ops adapt`` runs as a process with its own account,
``kent-ops-adapter``. The translation and the raw record must get through to the
aggregator's account, and a device must not be able to write the kent-ops topic the
adapter writes for it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from live_support import wait_until
from test_adapt import chirpstack_up
from wire_support import gate_count

from kent_ops.broker.acl import People, acl_text, users_for
from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.core.permit import load_permit
from kent_ops.core.wire import Topics

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]
ROOT = Path(__file__).resolve().parents[2]
PERMIT = ROOT / "examples" / "permit-lorawan.toml"
T = Topics("kent-summer-fest-2027")
PASSWORD = "field-secret"
CS_TOPIC = "application/7d0c1b6e-8a3f-4c1e-9d51-0a2b3c4d5e6f/device/0004a30b001c1234/event/up"


@pytest.fixture
def acl_broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """Mosquitto with a password for every account and the ACL of the LoRaWAN permit."""
    if shutil.which("mosquitto_passwd") is None:
        pytest.fail("mosquitto_passwd is needed (Debian package mosquitto)")
    permit = load_permit(PERMIT)
    acl = tmp_path / "acl"
    acl.write_text(acl_text(permit, People()))
    passwords = tmp_path / "passwords"
    passwords.touch()
    for user in users_for(permit, People()):
        subprocess.run(
            ["mosquitto_passwd", "-b", str(passwords), user, PASSWORD], check=True, timeout=10
        )
    for path in (tmp_path, *tmp_path.glob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    port = free_port()
    listener = (
        "per_listener_settings false\nallow_anonymous false\n"
        f"password_file {passwords}\nacl_file {acl}\nlistener {port} 127.0.0.1\n"
    )
    broker = MosquittoBroker(tmp_path / "broker", port=port, listener_config=listener)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def _client(broker: MosquittoBroker, user: str) -> mqtt.Client:
    address = BrokerAddress("127.0.0.1", broker.port, username=user, password=PASSWORD)
    client = make_client(address, f"test-{user}")
    client.connect(address.host, address.port)
    client.loop_start()
    return client


def test_the_adapters_account_carries_a_device_to_the_aggregator_and_a_device_cannot_forge_it(
    tmp_path: Path, acl_broker: MosquittoBroker
) -> None:
    got: list[tuple[str, bytes]] = []
    subscribed = threading.Event()
    aggregator = _client(acl_broker, "kent-ops-aggregator")
    aggregator.on_message = lambda c, u, m: got.append((m.topic, bytes(m.payload)))
    aggregator.on_subscribe = lambda *a: subscribed.set()
    aggregator.subscribe([(T.gate_count("+"), 1), (T.adapter_raw("+"), 1)])
    assert subscribed.wait(10)
    log = tmp_path / "adapt.log"
    adapter = subprocess.Popen(
        [sys.executable, "-m", "kent_ops", "adapt", "--permit", str(PERMIT),
         "--broker", f"mqtt://kent-ops-adapter@127.0.0.1:{acl_broker.port}",
         "--state-dir", str(tmp_path / "state")],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
        env={**os.environ, "KENT_OPS_BROKER_PASSWORD": PASSWORD, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    device = _client(acl_broker, "sensor-north")
    try:
        wait_until(
            lambda: "connected to the devices' broker" in log.read_text(errors="replace"),
            20,
            "the adapter's subscription",
        )
        # the device forges a kent-ops count: the broker drops it (and acknowledges it)
        forged = gate_count(1, "2027-07-04T14:00:00Z", 9999)
        device.publish(T.gate_count("north"), forged, qos=1).wait_for_publish(5)
        device.publish(CS_TOPIC, _deltas(1, 12, 3), qos=1)
        wait_until(lambda: len(got) >= 2, 20, "the translation and the raw record")
        topics = [t for t, _ in got]
        assert topics == [T.gate_count("north"), T.adapter_raw("north")]
        count = json.loads(got[0][1])
        assert (count["seq"], count["in_total"], count["out_total"]) == (1, 12, 3)
        assert json.loads(got[1][1])["translated"] == count
    finally:
        for client in (device, aggregator):
            client.disconnect()
            client.loop_stop()
        adapter.send_signal(signal.SIGTERM)
        assert adapter.wait(30) == 0
    assert "refused" not in log.read_text(errors="replace")


def _deltas(f_cnt: int, entries: int, exits: int) -> bytes:
    """A ChirpStack ``up`` event of the permit's north counter (deltas in ``object``)."""
    event = json.loads(chirpstack_up(f_cnt, 1, 0))
    event["object"] = {"entries": entries, "exits": exits}
    return json.dumps(event).encode()
