"""The adapter service: device messages in, kent-ops payloads and raw records out.

Two MQTT connections: one to the devices' broker (the event's own, or a LoRaWAN network
server's), subscribed to each device's topic with a persistent session and manual
acknowledgement, and one to the event's broker for what the adapter publishes. One
worker thread takes the device messages in order; for each it

1. reads and translates it (the pure core, :mod:`kent_ops.core.devices`);
2. publishes the translation on the sensor's kent-ops topic and the raw record on
   ``kent/{e}/adapter/{sensor}/raw``, QoS 1, and waits until the broker has both;
3. writes the device's new state (:mod:`kent_ops.adapter.state`);
4. only then acknowledges the device's message to its broker.

HTTP devices (:mod:`kent_ops.adapter.http`) hand their posts to the same worker.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import paho.mqtt.client as mqtt

from kent_ops.adapter.state import StateFile
from kent_ops.broker.client import BrokerAddress, make_client, on_connack
from kent_ops.broker.delivery import Deliveries
from kent_ops.core.devices.formats import READERS
from kent_ops.core.devices.source import SourceSpec
from kent_ops.core.devices.translate import Translation, translate
from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics, encode_reading, format_ts
from kent_ops.core.wire.adapter import encode_raw, unreadable

__all__ = ["Adapter", "Inbound"]

log = logging.getLogger("adapter")
ACK_WAIT_S = 1.0


@dataclass
class Inbound:
    """One device message waiting for the worker."""

    spec: SourceSpec
    topic: str
    payload: bytes
    received: datetime
    dup: bool = False
    ack: Callable[[], None] | None = None
    """Acknowledge the message to the device's broker (manual PUBACK)."""
    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False
    """Its translation and raw record are on the event's broker (or it was a repeat)."""
    unreadable: str | None = None
    """Why it could not be read, once recorded: an HTTP device is told (not a repeat)."""


def _refusal(whose: str, address: BrokerAddress) -> Callable[[mqtt.ReasonCode], None]:
    """What a refusal by the devices' or the event's broker logs."""

    def refused(reason: mqtt.ReasonCode) -> None:
        log.error("the %s broker %s refused us: %s", whose, address.url, reason)

    return refused


class Adapter:
    """``kent-ops adapt`` for one permit.

    Args:
        permit: the permit; its gates and lots with a ``source`` table are adapted.
        event: the event's broker, where the translations go.
        source: the devices' broker (the event's own when it is the same).
        state: the devices' state file.
        keys: the sensors' HMAC keys when the event signs its payloads.
    """

    def __init__(
        self,
        permit: Permit,
        event: BrokerAddress,
        source: BrokerAddress,
        state: StateFile,
        *,
        keys: Mapping[str, bytes] | None = None,
        event_ca: str | None = None,
        source_ca: str | None = None,
        client_id: str | None = None,
    ) -> None:
        self.permit = permit
        self.topics = Topics(permit.event_id)
        self.specs = [s for s in permit.sources.values()]
        self.mqtt_specs = [s for s in self.specs if s.topic is not None]
        self.state = state
        self.keys = dict(keys) if keys is not None else None
        self.stopping = threading.Event()
        self.connected = threading.Event()
        """Set once the event's broker has accepted the connection."""
        self.subscribed = threading.Event()
        """Set once the devices' broker has answered the subscription to their topics."""
        self.translated = 0
        self.unreadable = 0
        self._queue: queue.Queue[Inbound | None] = queue.Queue()
        base = client_id or f"kent-ops-adapt-{permit.event_id}"
        self._event_address = event
        self._out = make_client(event, f"{base}-out", ca_file=event_ca)
        self._deliveries = Deliveries(self._out)
        self._source_address = source
        self._in = make_client(
            source, f"{base}-in", clean_start=False, manual_ack=True, ca_file=source_ca
        )
        on_connack(self._in, self._on_source_connect, _refusal("devices'", source))
        self._in.on_subscribe = self._on_subscribe
        self._in.on_message = self._on_message
        on_connack(self._out, self._on_event_connect, _refusal("event's", event))
        self._worker = threading.Thread(target=self._work, name="adapter-worker", daemon=True)
        self._sub_topics: dict[int, list[str]] = {}

    # -- life ---------------------------------------------------------------------------

    def start(self) -> None:
        """Connect both ways (paho retries while a broker is away) and start the worker."""
        self._worker.start()
        self._out.connect_async(self._event_address.host, self._event_address.port, keepalive=30)
        self._out.loop_start()
        if self.mqtt_specs:
            self._in.connect_async(
                self._source_address.host, self._source_address.port, keepalive=30
            )
            self._in.loop_start()

    def stop(self) -> None:
        """Finish the message in hand, then disconnect (unacknowledged ones are redelivered)."""
        self.stopping.set()
        self._queue.put(None)

    def wait(self, timeout: float | None = None) -> None:
        self._worker.join(timeout)
        for client in (self._in, self._out):
            client.disconnect()
            client.loop_stop()

    def submit(self, item: Inbound) -> None:
        """Hand one message to the worker (HTTP posts come in here)."""
        self._queue.put(item)

    # -- the devices' broker ----------------------------------------------------------

    def _on_source_connect(self, client: mqtt.Client, flags: mqtt.ConnectFlags) -> None:
        topics = sorted({s.topic for s in self.mqtt_specs if s.topic is not None})
        result, mid = client.subscribe([(t, 1) for t in topics])
        if mid is not None:  # None: the link dropped first; the next connect subscribes again
            self._sub_topics[mid] = topics
        log.info("connected to the devices' broker %s", self._source_address.url)

    def _on_subscribe(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reason_codes: list[mqtt.ReasonCode],
        properties: mqtt.Properties | None,
    ) -> None:
        for topic, code in zip(self._sub_topics.pop(mid, []), reason_codes, strict=False):
            if code.is_failure:
                log.error("the devices' broker refused the subscription to %s: %s", topic, code)
            elif code.value == 0:
                log.warning(
                    "the devices' broker offers only QoS 0 on %s: what arrives while adapt is "
                    "down is lost (docs/protocol.md, rented devices)",
                    topic,
                )
        self.subscribed.set()

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        received = datetime.now(UTC)
        spec = self._spec_for(msg.topic)
        if spec is None:  # a topic of ours no longer in the permit: take it off the queue
            client.ack(msg.mid, msg.qos)
            return

        def ack(mid: int = msg.mid, qos: int = msg.qos) -> None:
            client.ack(mid, qos)

        self._queue.put(Inbound(spec, msg.topic, bytes(msg.payload), received, bool(msg.dup), ack))

    def _spec_for(self, topic: str) -> SourceSpec | None:
        for spec in self.mqtt_specs:
            if spec.topic is not None and mqtt.topic_matches_sub(spec.topic, topic):
                return spec
        return None

    def _on_event_connect(self, client: mqtt.Client, flags: mqtt.ConnectFlags) -> None:
        self.connected.set()
        log.info("connected to the event's broker %s", self._event_address.url)

    # -- the worker -------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                item.ok = self._handle(item)
            except Exception:  # noqa: BLE001 - one bad message must not stop the adapter
                log.exception("could not handle a message from %s", item.topic)
                item.ok = False
            item.done.set()
            if not item.ok and self.stopping.is_set():
                return

    def _handle(self, item: Inbound) -> bool:
        """Translate, publish, wait for the broker, write the state, acknowledge."""
        spec = item.spec
        before = self.state.get(spec.sensor)
        reading = READERS[spec.format](spec, item.topic, item.payload)
        digest = hashlib.sha256(item.topic.encode() + b"\0" + item.payload).hexdigest()[:32]
        capacity = self.permit.lots.get(spec.sensor, 0)
        result = translate(
            spec, capacity, before, reading, item.received, digest=digest, redelivered=item.dup
        )
        deliveries = [self._deliveries.publish(t, p) for t, p in self._messages(item, result)]
        while not all(d.wait(ACK_WAIT_S) for d in deliveries):
            if self.stopping.is_set():
                return False  # not acknowledged: the device's broker redelivers it
        self.state.commit(spec.sensor, result.state)
        if item.ack is not None:
            item.ack()
        if result.translated is not None:
            self.translated += 1
        elif unreadable(result.reason):
            item.unreadable = result.reason
            self.unreadable += 1
            log.warning(
                "%s: message on %s not translated: %s", spec.sensor, item.topic, result.reason
            )
        return True

    def _messages(self, item: Inbound, result: Translation) -> list[tuple[str, bytes]]:
        """The translation's readings on the sensor's topic, encoded as a native device of
        its kind encodes them, then the raw record."""
        sensor = item.spec.sensor
        topic = self.topics.reading(item.spec.kind, sensor)
        key = self.keys.get(sensor) if self.keys is not None else None
        out = [(topic, encode_reading(p, key)) for p in result.payloads]
        raw = encode_raw(
            sensor,
            item.topic,
            item.payload,
            format_ts(item.received),
            result.translated,
            result.reason,
        )
        out.append((self.topics.adapter_raw(sensor), raw))
        return out
