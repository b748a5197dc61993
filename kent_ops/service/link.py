"""The aggregator's MQTT link: paho in, a queue out; acknowledgements and publishes back.

paho's network thread only moves bytes: :meth:`Link._on_message` stamps the receive
time and enqueues; it never touches the disk or the rules, so a slow disk cannot make
the broker drop or back up anything at the socket. The worker thread takes the queue,
and after each commit acknowledges what it recorded (:meth:`Link.ack`) and publishes.

Three promises live here:

- **Receive stamps never fall behind a tick.** Stamps are taken under one lock and
  never fall below the last instant :meth:`Link.claim_now` handed out, and
  ``claim_now`` refuses while a message waits; so the engine's time never passes a
  message not yet fed, and every message is fed at its own receive time.
- **An acknowledgement goes out only on the connection it belongs to.** Each
  (re)connection starts a new generation; an ack for an older one is dropped (the
  broker redelivers that message, the engine sees a repeat, the log records it again),
  since its packet id could name a different message on the new connection.
- **"Connected" means subscribed.** :attr:`Link.connected` is set only after the
  SUBACK, so a sensor's publish is then sure to reach the service.

The service's own events on the network thread (connected, disconnected, the broker's
uptime after each connection: :mod:`kent_ops.service.broker_restart`) go through the
same queue, stamped the same way, so the log holds them in order with the messages.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.core.errors import UsageError
from kent_ops.core.wire import Topics, encode_availability
from kent_ops.evidence.system import (
    BrokerConnected,
    BrokerDisconnected,
    BrokerUptime,
    SystemRecord,
)
from kent_ops.service.broker_restart import UPTIME_EVERY_S, UPTIME_TOPIC, parse_uptime

__all__ = ["WAKE", "Item", "Link"]

log = logging.getLogger("aggregator")

Item = tuple[str | None, Any, datetime, int, int]
"""One queued item: (topic, payload, received_at, connection generation, mid).
``topic`` None marks the service's own event (payload: its system record)."""
WAKE: Item = (None, None, datetime.min.replace(tzinfo=UTC), -1, 0)
"""Put on the queue to wake the worker (to stop); never recorded."""


class Link:
    """One persistent MQTT session for the service: subscriptions, acks, availability.

    Args:
        address: the broker.
        topics: the event's topics.
        client_id: the persistent session's id (the broker keeps unacknowledged
            messages for it across a crash); a secret (:mod:`kent_ops.service.session`).
        shown_as: what the log lines call the session (never the id itself).
        ca_file: CA certificate for ``mqtts://`` brokers.
        now: the service's clock (UTC) that stamps receive times.
        connected: set while connected with every input subscribed.
        on_connected: called on the network thread after each (re)connection.
        allow_checkpoint: whether a checkpoint may be published (it never moves back).

    Raises:
        UsageError: the client cannot be set up (a bad CA file, say).
    """

    def __init__(
        self,
        address: BrokerAddress,
        topics: Topics,
        client_id: str,
        *,
        ca_file: str | None,
        now: Callable[[], datetime],
        connected: threading.Event,
        on_connected: Callable[[], None] = lambda: None,
        shown_as: str = "",
        allow_checkpoint: Callable[[bytes], bool] = lambda payload: True,
    ) -> None:
        self.address = address
        self.topics = topics
        self.client_id = client_id
        self.shown_as = shown_as or client_id
        self._allow_checkpoint = allow_checkpoint
        self._now = now
        self.connected = connected
        self._on_connected = on_connected
        self.queue: queue.SimpleQueue[Item] = queue.SimpleQueue()
        self.accepting = True
        """False once stopping: messages are then left unacknowledged for the next run."""
        self._ack_lock = threading.Lock()
        self._generation = 0
        self._up = False
        """Connected (a CONNACK) since the last disconnection: its end is recorded."""
        self._uptime: float | None = None
        """The broker's uptime as last read on this connection (None: not yet)."""
        self._uptime_told = 0.0
        """... and as last recorded."""
        self.subscriptions = [(t, 1) for t in topics.inputs] + [(UPTIME_TOPIC, 0)]
        """Every input at QoS 1; the broker's uptime at 0 (nothing to acknowledge)."""
        self._stamp_lock = threading.Lock()
        self._floor = datetime.min.replace(tzinfo=UTC)
        self.client = self._make_client(ca_file)

    def _make_client(self, ca_file: str | None) -> mqtt.Client:
        try:
            client = make_client(
                self.address,
                self.client_id,
                clean_start=False,
                ca_file=ca_file,
                will_topic=self.topics.aggregator_availability,
                will_payload=encode_availability(False),
                will_retain=True,
                manual_ack=True,
            )
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot set up the broker connection: {exc}") from None
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_subscribe = self._on_subscribe
        return client

    # -- the worker's side ----------------------------------------------------------------

    def start(self) -> None:
        """Connect in the background; paho retries until the broker answers."""
        log.info("connecting to %s (session %s)", self.address.url, self.shown_as)
        self.client.connect_async(self.address.host, self.address.port, keepalive=30)
        self.client.loop_start()

    def publish(self, topic: str, payload: bytes) -> None:
        """Publish retained at QoS 1 (queued by paho while offline); a checkpoint only if
        it does not move back."""
        if topic == self.topics.checkpoint and not self._allow_checkpoint(payload):
            return
        self.client.publish(topic, payload, qos=1, retain=True)

    def ack(self, acks: list[tuple[int, int]]) -> None:
        """Acknowledge recorded messages, each on the connection it came in on."""
        with self._ack_lock:
            current = self._generation
            for generation, mid in acks:
                if generation == current:
                    self.client.ack(mid, 1)

    def claim_now(self, busy: bool) -> datetime | None:
        """The wall-clock instant every message so far was received by, or None.

        None when a message waits (in the queue, or ``busy``: held by the worker); else
        no later message will be stamped before the instant returned, so the engine's
        time may pass to it.
        """
        with self._stamp_lock:
            if busy or not self.queue.empty():
                return None
            now = self._now()
            self._floor = now
        return now

    def wake(self) -> None:
        self.queue.put(WAKE)

    def go_offline(self, settle: float = 0.0) -> None:
        """Say ``offline`` (retained) while still connected, then disconnect.

        ``settle``: wait up to so many seconds for a connection first, when what was
        just published must reach the broker (a broken log's alert, at the start).
        """
        client = self.client
        if settle > 0:
            self.connected.wait(settle)
        if self.connected.is_set():
            info = client.publish(
                self.topics.aggregator_availability,
                encode_availability(False),
                qos=1,
                retain=True,
            )
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(timeout=5.0)
        client.disconnect()
        client.loop_stop()

    # -- paho's network thread ------------------------------------------------------------

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason_code: Any,
        properties: object,
    ) -> None:
        if reason_code.is_failure:
            log.error("broker %s refused the connection: %s", self.address.url, reason_code)
            return
        with self._ack_lock:
            self._generation += 1
        self._up = True
        self._uptime = None
        self._on_connected()
        client.subscribe(self.subscriptions)
        client.publish(
            self.topics.aggregator_availability, encode_availability(True), qos=1, retain=True
        )
        log.info(
            "connected to %s (session %s)",
            self.address.url,
            "resumed" if flags.session_present else "new",
        )
        self._own_event(
            BrokerConnected(broker=self.address.url, session_present=bool(flags.session_present))
        )

    def _on_subscribe(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reason_codes: list[Any],
        properties: object,
    ) -> None:
        for (topic, _), code in zip(self.subscriptions, reason_codes, strict=False):
            if code.is_failure:
                log.error("broker %s refused the subscription to %s", self.address.url, topic)
        self.connected.set()

    def _on_connect_fail(self, client: mqtt.Client, userdata: object) -> None:
        log.warning("cannot reach the broker at %s; retrying", self.address.url)

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: object,
        reason_code: Any,
        properties: object,
    ) -> None:
        # A new generation first: no acknowledgement meant for this connection may go out
        # on the next one, where its packet id could name a different message.
        with self._ack_lock:
            self._generation += 1
        was_connected, self._up = self._up, False
        self.connected.clear()
        if not self.accepting:
            return  # stopping: the service records its own stop
        if was_connected:
            log.warning("disconnected from %s (%s); reconnecting", self.address.url, reason_code)
            self._own_event(BrokerDisconnected(broker=self.address.url, reason=str(reason_code)))

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        if not self.accepting:
            return  # not acknowledged: the broker keeps it for the next session
        try:
            topic = message.topic
        except UnicodeDecodeError:
            topic = bytes(message._topic).decode("utf-8", "replace")  # noqa: SLF001
        if topic == UPTIME_TOPIC:
            self._broker_uptime(bytes(message.payload))
            return
        with self._stamp_lock:
            received_at = max(self._now(), self._floor)
            self.queue.put((topic, message.payload, received_at, self._generation, message.mid))

    def _broker_uptime(self, payload: bytes) -> None:
        """The broker's first uptime on a connection is recorded (was it restarted?), then
        one every ``UPTIME_EVERY_S`` of it, and any that fell."""
        uptime = parse_uptime(payload)
        if uptime is None:
            return
        last, self._uptime = self._uptime, uptime
        if last is None or uptime < last or uptime >= self._uptime_told + UPTIME_EVERY_S:
            self._uptime_told = uptime
            self._own_event(BrokerUptime(uptime_s=uptime))

    def post(self, event: SystemRecord) -> None:
        """Queue an event of the service's own from another thread (a late check)."""
        self._own_event(event)

    def _own_event(self, event: SystemRecord) -> None:
        """Queue the service's own event, stamped like a message."""
        with self._stamp_lock:
            self.queue.put((None, event, max(self._now(), self._floor), -1, 0))
