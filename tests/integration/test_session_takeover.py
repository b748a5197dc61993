"""Taking over the aggregator's broker session, tried against a real Mosquitto.

Mosquitto 2.0 finds a persistent session by client id alone, whoever connects. With the
old fixed id any account could kick the aggregator off and take its queue, or wipe it
with a clean session while the aggregator was down. Now:

- on a field broker (passwords and the generated ACL) a gate counter's account, and on
  a broker without passwords anyone, connecting with the old id reaches nothing: every
  reading the broker acknowledged is in the evidence log;
- a session the broker no longer holds (wiped, or its data lost) is recorded and raised
  as a ``broker-session`` alert on the restart, never silent;
- a connection taken again and again (someone who has the id) is recorded and alerted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_support import FAST, TOPICS, Watcher, permit_text, ts, wait_until
from security_support import (
    OLD_ID,
    account,
    acl_broker,
    connect,
    hang_up,
    logged_alerts,
    logged_messages,
    system_events,
)
from wire_support import gate_count

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import Permit, load_permit
from kent_ops.evidence.log import read_records, verify
from kent_ops.service.aggregator import Aggregator

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture
def permit(tmp_path: Path) -> Permit:
    path = tmp_path / "permit.toml"
    path.write_text(permit_text(gates=("north", "south")))
    return load_permit(path)


@pytest.fixture
def field_broker(tmp_path: Path, permit: Permit) -> Iterator[MosquittoBroker]:
    broker = acl_broker(tmp_path / "field", permit)
    yield broker
    broker.stop()


def run_once(permit: Permit, evidence: Path, address: BrokerAddress) -> Aggregator:
    agg = Aggregator(permit, evidence, address, "sensor", timing=FAST)
    agg.start()
    assert agg.connected.wait(15), "the aggregator did not connect"
    return agg


def stop(agg: Aggregator) -> None:
    agg.stop()
    assert agg.wait(30)
    assert agg.failure is None


def send_readings(address: BrokerAddress, count: int, every_s: float = 0.0) -> None:
    """Gate south's counter: ``count`` readings, each acknowledged by the broker."""
    client = make_client(address, "kent-summer-fest-2027-gate-south")
    client.connect(address.host, address.port)
    client.loop_start()
    try:
        for seq in range(1, count + 1):
            body = gate_count(seq, ts(seq), 10 * seq)
            info = client.publish(TOPICS.gate_count("south"), body, qos=1)
            info.wait_for_publish(timeout=10)
            assert info.is_published(), "the broker did not acknowledge a reading"
            time.sleep(every_s)
    finally:
        hang_up(client)


def connections(evidence: Path) -> int:
    return [e["event"] for e in system_events(evidence)].count("broker-connected")


def logged_seqs(evidence: Path) -> list[int]:
    return sorted({m["seq"] for m in logged_messages(evidence, TOPICS.gate_count("south"))})


@pytest.mark.parametrize("setup", ["field broker, a gate's account", "no passwords, anyone"])
def test_no_one_else_can_take_or_wipe_the_queue_while_it_is_down(
    setup: str, permit: Permit, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    evidence = tmp_path / "evidence.sqlite"
    users: tuple[str | None, str | None, str | None] = (None, None, None)
    if setup.startswith("field"):
        target: MosquittoBroker = request.getfixturevalue("field_broker")
        users = ("kent-ops-aggregator", "sensor-north", "sensor-south")
    else:
        target = request.getfixturevalue("broker")
    aggregator, attacker, gate = users
    stop(run_once(permit, evidence, account(target, aggregator)))
    send_readings(account(target, gate), 50)  # queued for the aggregator, acknowledged
    # The attacker takes the session with the old id (and acknowledges what it gets),
    # then wipes it with a clean session.
    hang_up(connect(account(target, attacker), OLD_ID, clean=False, subscribe=TOPICS.everything))
    hang_up(connect(account(target, attacker), OLD_ID, clean=True))
    agg = run_once(permit, evidence, account(target, aggregator))
    try:
        wait_until(lambda: len(logged_seqs(evidence)) == 50, 20, "the 50 queued readings")
    finally:
        stop(agg)
    assert logged_seqs(evidence) == list(range(1, 51))
    assert not logged_alerts(evidence, "broker-session")
    assert verify(evidence).ok


def test_a_gates_account_with_the_old_id_does_not_interrupt_it(
    permit: Permit, tmp_path: Path, field_broker: MosquittoBroker
) -> None:
    evidence = tmp_path / "evidence.sqlite"
    agg = run_once(permit, evidence, account(field_broker, "kent-ops-aggregator"))
    try:
        thief = connect(account(field_broker, "sensor-north"), OLD_ID, clean=False)
        send_readings(account(field_broker, "sensor-south"), 60, every_s=0.05)
        hang_up(thief)
        wait_until(lambda: len(logged_seqs(evidence)) == 60, 20, "the 60 readings")
    finally:
        stop(agg)
    assert logged_seqs(evidence) == list(range(1, 61))
    events = [e["event"] for e in system_events(evidence)]
    assert "broker-disconnected" not in events
    assert events.count("broker-connected") == 1


def test_a_session_found_new_is_recorded_and_alerted_with_what_it_lost(
    permit: Permit, tmp_path: Path, broker: MosquittoBroker, watcher: Watcher
) -> None:
    """Someone with the id (or a broker that lost its data) wiped the session meanwhile."""
    evidence = tmp_path / "evidence.sqlite"
    address = account(broker, None)
    first = run_once(permit, evidence, address)
    secret_id = first.client_id
    stop(first)
    send_readings(address, 20)
    hang_up(connect(address, secret_id, clean=True))  # the queue is gone
    agg = run_once(permit, evidence, address)
    try:
        raw = watcher.wait_for(
            TOPICS.alert("S-0001"), lambda b: json.loads(b)["rule"] == "broker-session"
        )
    finally:
        stop(agg)
    alert = json.loads(raw)
    assert alert["severity"] == "data"
    assert alert["id"].startswith("S-")
    assert "may be missing" in alert["message"]
    lost = [e for e in system_events(evidence) if e["event"] == "broker-session-lost"]
    assert len(lost) == 1
    assert lost[0]["session_present"] is False
    assert [a["state"] for a in logged_alerts(evidence, "broker-session")][-1] == "cleared"
    assert logged_seqs(evidence) == []  # what was lost is said, not hidden
    assert verify(evidence).ok


def test_a_connection_taken_again_and_again_is_recorded_and_alerted(
    permit: Permit, tmp_path: Path, broker: MosquittoBroker, watcher: Watcher
) -> None:
    evidence = tmp_path / "evidence.sqlite"
    address = account(broker, None)
    agg = run_once(permit, evidence, address)
    try:
        for _ in range(3):  # someone who has the id connects; the aggregator comes back
            before = connections(evidence)
            hang_up(connect(address, agg.client_id, clean=False))
            wait_until(lambda n=before: connections(evidence) > n, 15, "the aggregator back")
            assert agg.connected.wait(15)
        raw = watcher.wait_for(
            TOPICS.alert("S-0001"), lambda b: json.loads(b)["rule"] == "broker-session"
        )
    finally:
        stop(agg)
    alert = json.loads(raw)
    assert alert["observed"]["cause"] == "disconnects"
    assert "another client may be using its session" in alert["message"]
    events = [e["event"] for e in system_events(evidence)]
    assert events.count("broker-disconnected") >= 3
    assert "broker-session-contested" in events


def test_the_session_id_appears_nowhere_in_the_log(
    permit: Permit, tmp_path: Path, field_broker: MosquittoBroker
) -> None:
    evidence = tmp_path / "evidence.sqlite"
    agg = run_once(permit, evidence, account(field_broker, "kent-ops-aggregator"))
    stop(agg)
    assert agg.client_id != OLD_ID
    assert len(agg.client_id) > len(OLD_ID) + 30
    secret = agg.client_id.rsplit("-", 1)[1].encode()
    assert all(secret not in bytes(r.payload) for r in read_records(evidence))
    started = next(e for e in system_events(evidence) if e["event"] == "started")
    assert started["session"] == agg.session.fingerprint
    assert started["session_keyed_by"] == "password"
