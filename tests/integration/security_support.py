"""What the attack tests share: a field broker with passwords and the generated ACL, an
attacker's client, and reading the evidence log and the broker's retained messages back."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from kent_ops.broker.acl import People, acl_text, users_for
from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.core.permit import Permit
from kent_ops.evidence.log import read_records

PASSWORD = "field-secret-for-every-account"
OLD_ID = "kent-ops-aggregator-kent-summer-fest-2027"
"""The aggregator's client id before it was made secret: fixed, and so guessable."""


def acl_broker(folder: Path, permit: Permit) -> MosquittoBroker:
    """Mosquitto with a password for every account and the ACL ``deploy acl`` writes."""
    if shutil.which("mosquitto_passwd") is None:
        raise AssertionError("mosquitto_passwd is needed (Debian package mosquitto)")
    folder.mkdir(parents=True, exist_ok=True)
    acl = folder / "acl"
    acl.write_text(acl_text(permit, People(inspectors=["insp-1"])))
    passwords = folder / "passwords"
    passwords.touch()
    for user in users_for(permit, People(inspectors=["insp-1"])):
        subprocess.run(
            ["mosquitto_passwd", "-b", str(passwords), user, PASSWORD], check=True, timeout=10
        )
    for path in (folder, acl, passwords):
        path.chmod(0o755 if path.is_dir() else 0o644)
    port = free_port()
    listener = (
        "per_listener_settings false\nallow_anonymous false\n"
        f"password_file {passwords}\nacl_file {acl}\nlistener {port} 127.0.0.1\n"
    )
    return MosquittoBroker(folder / "broker", port=port, listener_config=listener).start()


def account(broker: MosquittoBroker, user: str | None) -> BrokerAddress:
    """The broker as ``user`` (with the shared test password), or anonymous for None."""
    password = PASSWORD if user is not None else None
    return BrokerAddress(broker.host, broker.port, username=user, password=password)


def connect(
    address: BrokerAddress, client_id: str, *, clean: bool, subscribe: str | None = None
) -> mqtt.Client:
    """A client that has connected (and subscribed, if asked); raises if refused."""
    client = make_client(address, client_id, clean_start=clean)
    ready = threading.Event()
    result: dict[str, Any] = {}

    def on_connect(c: mqtt.Client, u: object, flags: Any, rc: Any, p: object) -> None:
        result["rc"] = rc
        result["session_present"] = bool(flags.session_present)
        if subscribe is not None and not rc.is_failure:
            c.subscribe(subscribe, qos=1)
        else:
            ready.set()

    client.on_connect = on_connect
    client.on_subscribe = lambda *a: ready.set()
    client.connect(address.host, address.port, keepalive=30)
    client.loop_start()
    if not ready.wait(10) or result["rc"].is_failure:
        client.loop_stop()
        raise AssertionError(f"{client_id} could not connect: {result.get('rc')}")
    client.session_present = result["session_present"]  # type: ignore[attr-defined]
    return client


def hang_up(client: mqtt.Client) -> None:
    client.disconnect()
    client.loop_stop()


def retained(address: BrokerAddress, topic: str) -> bytes | None:
    """The broker's retained message on ``topic`` now, if any (read as ``address``)."""
    got: list[bytes] = []
    done = threading.Event()
    client = make_client(address)
    client.on_connect = lambda c, *a: c.subscribe(topic, qos=1)
    client.on_subscribe = lambda c, *a: c.unsubscribe(topic)
    client.on_message = lambda c, u, m: got.append(bytes(m.payload))
    client.on_unsubscribe = lambda *a: done.set()
    client.connect(address.host, address.port)
    client.loop_start()
    try:
        if not done.wait(10):
            raise AssertionError("the broker did not answer")
    finally:
        hang_up(client)
    return got[-1] if got else None


def logged_messages(path: Path, topic_end: str) -> list[dict[str, Any]]:
    """The payloads of the message records on topics ending so."""
    return [
        json.loads(r.payload)
        for r in read_records(path)
        if r.kind == "message" and r.topic is not None and r.topic.endswith(topic_end)
    ]


def system_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(r.payload) for r in read_records(path) if r.kind == "system"]


def logged_alerts(path: Path, rule: str) -> list[dict[str, Any]]:
    alerts = [json.loads(r.payload) for r in read_records(path) if r.kind == "alert"]
    return [a for a in alerts if a["rule"] == rule]
