"""Real paho clients for the dashboard tests: publish retained fixtures, collect what is sent."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from typing import Any

import msgspec
import paho.mqtt.client as mqtt
from live_support import wait_until
from paho.mqtt.enums import CallbackAPIVersion

from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core import wire


def _client(broker: MosquittoBroker, name: str) -> mqtt.Client:
    client = mqtt.Client(
        callback_api_version=CallbackAPIVersion.VERSION2,
        client_id=f"test-{name}-{uuid.uuid4().hex[:6]}",
    )
    client.connect(broker.host, broker.port)
    client.loop_start()
    return client


def publish(
    broker: MosquittoBroker,
    messages: list[tuple[str, bytes | str | msgspec.Struct]],
    *,
    retain: bool = True,
) -> None:
    """Publish each (topic, payload) at QoS 1 and wait until the broker has it.

    A wire record (a status, an alert, a gate command) goes as the aggregator encodes it;
    bytes and text go as they are (availability, Mosquitto's bridge word)."""
    client = _client(broker, "publisher")
    try:
        for topic, payload in messages:
            body = wire.encode(payload) if isinstance(payload, msgspec.Struct) else payload
            client.publish(topic, body, qos=1, retain=retain).wait_for_publish(timeout=5)
    finally:
        client.disconnect()
        client.loop_stop()


class Collector:
    """Subscribes to topics and keeps every message received, decoded when JSON."""

    def __init__(self, broker: MosquittoBroker, *topics: str) -> None:
        self.messages: list[tuple[str, Any, bool]] = []
        self.raw: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()
        self._subscribed = threading.Event()
        self.client = mqtt.Client(
            callback_api_version=CallbackAPIVersion.VERSION2,
            client_id=f"test-collector-{uuid.uuid4().hex[:6]}",
        )
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        self.client.subscribe([(t, 1) for t in topics])
        if not self._subscribed.wait(5):
            raise TimeoutError("the collector could not subscribe")

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        try:
            payload: Any = json.loads(msg.payload)
        except ValueError:
            payload = msg.payload.decode()
        with self._lock:
            self.messages.append((msg.topic, payload, bool(msg.retain)))
            self.raw.append((msg.topic, bytes(msg.payload)))

    def on(self, topic: str) -> list[Any]:
        with self._lock:
            return [p for t, p, _ in self.messages if t == topic]

    def wait_for(self, check: Callable[[], bool], timeout: float = 10.0) -> None:
        wait_until(check, timeout, lambda: f"the check; received {self.messages}", every=0.02)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
