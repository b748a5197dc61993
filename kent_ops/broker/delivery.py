"""Following QoS 1 messages to the broker's acknowledgement.

paho keeps a QoS 1 message published while the connection is down and sends it when the
connection returns, but the ``MQTTMessageInfo`` it handed back then says "not connected"
for good: its ``is_published()`` and ``wait_for_publish()`` raise, although the message
does go out and is acknowledged. The acknowledgement always reaches ``on_publish``, so a
:class:`Delivery` follows that instead, whenever the message was published.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import paho.mqtt.client as mqtt

__all__ = ["Deliveries", "Delivery"]


@dataclass(frozen=True)
class Delivery:
    """One QoS 1 message on its way; :attr:`acknowledged` is set when the broker has it."""

    acknowledged: threading.Event = field(default_factory=threading.Event)
    _at: list[float] = field(default_factory=list, repr=False, compare=False)

    @property
    def done(self) -> bool:
        return self.acknowledged.is_set()

    @property
    def acknowledged_at(self) -> float | None:
        """When the broker's acknowledgement came (``time.monotonic``); None if not yet,
        or if it was set without a time."""
        return self._at[0] if self._at else None

    def acknowledge(self) -> None:
        """The broker has it: note when, then say so."""
        if not self._at:
            self._at.append(time.monotonic())
        self.acknowledged.set()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the acknowledgement; whether it came."""
        return self.acknowledged.wait(timeout)


class Deliveries:
    """Publishes QoS 1 through one client and follows each message to its acknowledgement.

    It takes the client's ``on_publish`` callback for itself (:meth:`on_publish`: a
    caller that wants the acknowledgements too sets its own, which calls this one).
    """

    def __init__(self, client: mqtt.Client) -> None:
        self._client = client
        self._pending: dict[int, Delivery] = {}
        self._acked_early: set[int] = set()
        self._lock = threading.Lock()
        client.on_publish = self.on_publish

    def publish(self, topic: str, payload: bytes | str, *, retain: bool = False) -> Delivery:
        """Publish at QoS 1 (thread-safe); kept by paho while offline, sent on return."""
        delivery = Delivery()
        # paho calls on_publish holding a lock of its own that publish() takes too: so
        # ours is never held across publish(), and an acknowledgement that comes before
        # the message is filed here waits in _acked_early.
        info = self._client.publish(topic, payload, qos=1, retain=retain)
        with self._lock:
            if info.rc == mqtt.MQTT_ERR_QUEUE_SIZE or info.mid in self._acked_early:
                self._acked_early.discard(info.mid)  # or never queued: nothing will come
                delivery.acknowledge()
            else:
                self._pending[info.mid] = delivery
        return delivery

    def on_publish(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reason_code: mqtt.ReasonCode,
        properties: mqtt.Properties | None,
    ) -> None:
        with self._lock:
            delivery = self._pending.pop(mid, None)
            if delivery is None:
                self._acked_early.add(mid)
        if delivery is not None:
            delivery.acknowledge()
