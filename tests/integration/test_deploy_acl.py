"""The generated ACL, TLS and passwords against a real Mosquitto running that config."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from live_support import wait_until
from paho.mqtt.enums import CallbackAPIVersion

from dashboards.common.feed import LinkUpdate, MqttFeed
from kent_ops.broker.acl import People, acl_text, users_for
from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.commands.deploy import make_certs
from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]
PASSWORD = "field-secret"
PEOPLE = People(inspectors=["insp-1", "insp-2"], clerks=["clerk-1"], notifiers=["notify-1"])


@pytest.fixture
def secure_broker(tmp_path: Path, example_permit: Permit) -> Iterator[MosquittoBroker]:
    """Mosquitto with TLS, a password file and the ACL generated for the example permit."""
    if shutil.which("mosquitto_passwd") is None:
        pytest.fail("mosquitto_passwd is needed (Debian package mosquitto)")
    certs = make_certs(tmp_path / "certs", ["localhost", "127.0.0.1"])
    acl = tmp_path / "acl"
    acl.write_text(acl_text(example_permit, PEOPLE))
    passwords = tmp_path / "passwords"
    passwords.touch()
    for user in users_for(example_permit, PEOPLE):
        subprocess.run(
            ["mosquitto_passwd", "-b", str(passwords), user, PASSWORD], check=True, timeout=10
        )
    for path in (tmp_path, tmp_path / "certs", *tmp_path.glob("**/*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    port = free_port()
    listener = (
        "log_type all\n"  # debug lines name every publish the ACL denies
        "per_listener_settings false\n"
        "allow_anonymous false\n"
        f"password_file {passwords}\n"
        f"acl_file {acl}\n"
        f"listener {port} 127.0.0.1\n"
        f"cafile {certs['ca_crt']}\n"
        f"certfile {certs['server_crt']}\n"
        f"keyfile {certs['server_key']}\n"
    )
    broker = MosquittoBroker(tmp_path / "broker", port=port, listener_config=listener)
    broker.start()
    broker.ca_file = str(certs["ca_crt"])  # type: ignore[attr-defined]
    try:
        yield broker
    finally:
        broker.stop()


def _connect(
    broker: MosquittoBroker, user: str | None, password: str | None = PASSWORD
) -> tuple[mqtt.Client, int]:
    """Connect over TLS as ``user``; return the client and the CONNACK reason code."""
    address = BrokerAddress("localhost", broker.port, tls=True, username=user, password=password)
    client = make_client(address, ca_file=broker.ca_file)  # type: ignore[attr-defined]
    result: dict[str, int] = {}
    done = threading.Event()

    def on_connect(c: mqtt.Client, u: object, flags: object, rc: object, props: object) -> None:
        result["rc"] = int(rc.value) if hasattr(rc, "value") else int(rc)  # type: ignore[arg-type]
        done.set()

    client.on_connect = on_connect
    client.connect(address.host, address.port)
    client.loop_start()
    done.wait(10)
    return client, result.get("rc", -1)


def _stop(client: mqtt.Client) -> None:
    client.disconnect()
    client.loop_stop()


def _denied(broker: MosquittoBroker, user: str, topic: str, body: bytes) -> None:
    """Publish where ``user`` may not, on a connection of its own, and wait for the PUBACK.

    Mosquitto acknowledges a QoS 1 publish it refuses (MQTT 3.1.1 has no way to say no),
    so once the PUBACK is back the broker has decided: anything published after it
    reaches a subscriber after the refused message would have.
    """
    client, rc = _connect(broker, user)
    assert rc == 0
    client.publish(topic, body, qos=1).wait_for_publish(5)
    _stop(client)


def _wait_for(got: list[tuple[str, bytes]], n: int) -> None:
    wait_until(lambda: len(got) >= n, 10, lambda: f"{n} message(s); got {got!r}", every=0.02)


def _collect(client: mqtt.Client, topic: str) -> list[tuple[str, bytes]]:
    got: list[tuple[str, bytes]] = []
    client.on_message = lambda c, u, m: got.append((m.topic, m.payload))
    subscribed = threading.Event()
    client.on_subscribe = lambda *a: subscribed.set()
    client.subscribe(topic, qos=1)
    assert subscribed.wait(10)
    return got


def test_anonymous_and_wrong_password_clients_are_refused(secure_broker: MosquittoBroker) -> None:
    anonymous, rc = _connect(secure_broker, None, None)
    _stop(anonymous)
    assert rc != 0
    wrong, rc = _connect(secure_broker, "sensor-north", "guess")
    _stop(wrong)
    assert rc != 0


def test_a_sensor_publishes_its_own_counts_but_not_another_gates(
    secure_broker: MosquittoBroker, example_permit: Permit
) -> None:
    t = Topics(example_permit.event_id)
    aggregator, rc = _connect(secure_broker, "kent-ops-aggregator")
    assert rc == 0
    got = _collect(aggregator, t.gate_count("+"))
    body = b'{"seq":1,"ts":"2027-07-04T14:00:00Z","in_total":5,"out_total":0}'
    _denied(secure_broker, "sensor-north", t.gate_count("south"), body)
    north, rc = _connect(secure_broker, "sensor-north")
    assert rc == 0
    north.publish(t.gate_count("north"), body, qos=1).wait_for_publish(5)
    _wait_for(got, 1)  # a wrongly delivered south message would have come first
    _stop(north)
    _stop(aggregator)
    assert [t for t, _ in got] == [t.gate_count("north")]
    log = (secure_broker.workdir / "mosquitto.log").read_text()
    assert "Denied PUBLISH from" in log
    assert f"'{t.gate_count('south')}'" in log


def test_a_badge_reader_writes_its_roster_and_the_aggregator_reads_the_brokers_uptime(
    secure_broker: MosquittoBroker, example_permit: Permit
) -> None:
    """The station's account writes its scans and its roster; the aggregator reads them,
    and Mosquitto's uptime (how it tells a broker restart); a sensor reads no uptime."""
    t = Topics(example_permit.event_id)
    aggregator, rc = _connect(secure_broker, "kent-ops-aggregator")
    assert rc == 0
    got = _collect(aggregator, "$SYS/broker/uptime")
    _wait_for(got, 1)  # retained: at once
    rosters = _collect(aggregator, t.staff_roster("+"))
    reader, rc = _connect(secure_broker, "sensor-first-aid")
    assert rc == 0
    sneaky = _collect(reader, "$SYS/broker/uptime")
    body = b'{"seq":1,"ts":"2027-07-04T14:00:00Z","on_duty":[]}'
    reader.publish(t.staff_roster("first-aid"), body, qos=1).wait_for_publish(5)
    _wait_for(rosters, 1)
    _stop(reader)
    _stop(aggregator)
    assert got[0][1].endswith(b" seconds")
    assert rosters == [(t.staff_roster("first-aid"), body)]
    assert sneaky == []


def test_an_inspector_writes_only_its_own_topics_and_dashboards_only_read(
    secure_broker: MosquittoBroker, example_permit: Permit
) -> None:
    t = Topics(example_permit.event_id)
    aggregator, _ = _connect(secure_broker, "kent-ops-aggregator")
    got = _collect(aggregator, t.inspector("+", "+"))
    note = b'{"ts":"2027-07-04T14:00:00Z","text":"water ok"}'
    # Denied publishes first, each on its own connection (a broker may drop a client
    # that publishes where it may not), then the allowed one.
    for user, topic in (
        ("inspector-insp-1", t.inspector("insp-2", "note")),
        ("dashboard", t.inspector("insp-1", "note")),
    ):
        _denied(secure_broker, user, topic, note)
    insp, rc = _connect(secure_broker, "inspector-insp-1")
    assert rc == 0
    insp.publish(t.inspector("insp-1", "note"), note, qos=1).wait_for_publish(5)
    _wait_for(got, 1)
    for c in (insp, aggregator):
        _stop(c)
    assert [t for t, _ in got] == [t.inspector("insp-1", "note")]
    log = (secure_broker.workdir / "mosquitto.log").read_text()
    assert log.count(f"'{t.inspector('insp-2', 'note')}'") >= 1
    assert log.count("Denied PUBLISH from") >= 2


def test_a_clerk_and_a_notifier_write_only_their_own_topic(
    secure_broker: MosquittoBroker, example_permit: Permit
) -> None:
    t = Topics(example_permit.event_id)
    aggregator, _ = _connect(secure_broker, "kent-ops-aggregator")
    got = _collect(aggregator, t.everything)
    revoke = (
        b'{"ts":"2027-07-04T14:00:00Z","status":"revoked",'
        b'"effective_at":"2027-07-04T14:00:00Z","resolution":"TB-2027-41"}'
    )
    sent = b'{"ts":"2027-07-04T14:00:00Z","alert":"A-0001","state":"active","to":"insp-1",'
    sent += b'"channel":"mailto","ok":true,"error":null}'
    for user, topic, body in (
        ("clerk-clerk-1", t.clerk_permit("clerk-2"), revoke),
        ("clerk-clerk-1", t.inspector("clerk-1", "note"), b'{"ts":"2027-07-04T14:00:00Z"}'),
        ("inspector-insp-1", t.clerk_permit("insp-1"), revoke),
        ("notifier-notify-1", t.clerk_permit("notify-1"), revoke),
        ("notifier-notify-1", t.status, b"{}"),
    ):
        _denied(secure_broker, user, topic, body)
    for user, topic, body in (
        ("clerk-clerk-1", t.clerk_permit("clerk-1"), revoke),
        ("notifier-notify-1", t.notifier_sent("notify-1"), sent),
    ):
        client, rc = _connect(secure_broker, user)
        assert rc == 0
        client.publish(topic, body, qos=1).wait_for_publish(5)
        _stop(client)
    _wait_for(got, 2)
    _stop(aggregator)
    assert [t for t, _ in got] == [t.clerk_permit("clerk-1"), t.notifier_sent("notify-1")]


def test_clients_without_the_ca_cannot_talk_tls(secure_broker: MosquittoBroker) -> None:
    client = mqtt.Client(callback_api_version=CallbackAPIVersion.VERSION2)
    client.username_pw_set("dashboard", PASSWORD)
    client.tls_set()  # the system CAs do not know our self-signed field CA
    with pytest.raises(OSError, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        client.connect("localhost", secure_broker.port)


def test_every_gates_deputy_reads_its_order_and_only_a_gate_with_a_tally_counts(
    secure_broker: MosquittoBroker, example_permit: Permit
) -> None:
    t = Topics(example_permit.event_id)
    aggregator, _ = _connect(secure_broker, "kent-ops-aggregator")
    order = b'{"admit":false,"attendance":600,"hold_at":550,"resume_below":500,"reason":"r"}'
    aggregator.publish(t.gate_command("south"), order, qos=1, retain=True).wait_for_publish(5)
    got = _collect(aggregator, t.gate_count("+"))
    # The south gate has no manual tally in the example permit: its deputy may read, not count.
    south, rc = _connect(secure_broker, "deputy-south")
    assert rc == 0
    heard = _collect(south, t.gate_command("south"))
    _wait_for(heard, 1)
    assert heard == [(t.gate_command("south"), order)]
    _stop(south)
    body = b'{"seq":1,"ts":"2027-07-04T14:00:00Z","in_total":1,"out_total":0}'
    _denied(secure_broker, "deputy-south", t.gate_count("south-manual"), body)
    _denied(secure_broker, "deputy-south", t.gate_count("north-manual"), body)
    north, rc = _connect(secure_broker, "deputy-north")
    assert rc == 0
    north.publish(t.gate_count("north-manual"), body, qos=1).wait_for_publish(5)
    _wait_for(got, 1)
    _stop(north)
    _stop(aggregator)
    assert [t for t, _ in got] == [t.gate_count("north-manual")]
    assert "deputy-north-manual" not in users_for(example_permit, PEOPLE)


def test_a_refused_account_is_named_by_the_dashboards_feed(
    secure_broker: MosquittoBroker, example_permit: Permit
) -> None:
    updates: list[LinkUpdate] = []
    address = BrokerAddress(
        "localhost", secure_broker.port, tls=True, username="deputy-south", password="wrong"
    )
    feed = MqttFeed(
        address,
        Topics(example_permit.event_id),
        [],
        lambda event: updates.append(event) if isinstance(event, LinkUpdate) else None,
        ca_file=secure_broker.ca_file,  # type: ignore[attr-defined]
    )
    feed.start()
    try:
        wait_until(lambda: len(updates) >= 2, 10, "the refusal and the disconnection", every=0.02)
    finally:
        feed.stop()
    # The refusal, then paho's disconnection: both still say who was refused.
    assert len(updates) >= 2
    for update in updates[:2]:
        assert not update.connected
        assert update.refused
        assert update.reason is not None
        assert update.reason.startswith("not authorised as deputy-south")
