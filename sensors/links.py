"""A device's links to the broker: a paho connection on the field, a list in memory.

:class:`Link` is all a :class:`~sensors.device.Device` knows of where its messages go.
An :class:`MqttLink` is one paho connection (QoS 1, last will ``offline`` retained,
reconnecting by itself); a :class:`MemoryLink` keeps what it is sent, and plays the
broker's part (the will) when told the connection dropped, so the simulator and the unit
tests drive the very device classes the field runs, without a broker.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client, on_connack
from kent_ops.broker.delivery import Deliveries, Delivery
from kent_ops.core.wire import encode_availability

__all__ = ["Link", "MemoryLink", "MqttLink", "Sent"]


class Link(Protocol):
    """Where a device's messages go: a broker connection, or a list in memory."""

    on_up: Callable[[], None] | None
    """Called (by the link) each time the link comes up, before anything else is sent."""

    on_down: Callable[[], None] | None
    """Called (by the link) each time the link drops."""

    @property
    def online(self) -> bool:
        """True while messages sent now reach the broker."""
        ...

    def send(self, topic: str, payload: bytes, retain: bool) -> None:
        """Send one message, QoS 1."""
        ...


@dataclass(frozen=True, slots=True)
class Sent:
    """One message a :class:`MemoryLink` was given."""

    topic: str
    payload: bytes
    retain: bool


@dataclass
class MemoryLink:
    """A link that keeps what it is sent; the broker's side is played by the caller.

    ``set_online(False)`` stands for the connection dropping: like a broker it then
    publishes the device's last will (``offline``, retained) into :attr:`sent`.
    """

    will_topic: str | None = None
    sent: list[Sent] = field(default_factory=list)
    on_up: Callable[[], None] | None = None
    on_down: Callable[[], None] | None = None
    _online: bool = True

    @property
    def online(self) -> bool:
        return self._online

    def send(self, topic: str, payload: bytes, retain: bool) -> None:
        if not self._online:
            raise ConnectionError("MemoryLink is offline")
        self.sent.append(Sent(topic, payload, retain))

    def set_online(self, online: bool, *, will: bool = True) -> None:
        """Bring the link up (the device then announces itself) or drop it."""
        if online == self._online:
            return
        self._online = online
        if online:
            if self.on_up is not None:
                self.on_up()
        else:
            if self.on_down is not None:
                self.on_down()
            if will and self.will_topic is not None:
                self.sent.append(Sent(self.will_topic, encode_availability(False), True))

    def drain(self) -> list[Sent]:
        """Everything sent since the last drain, oldest first."""
        out, self.sent = self.sent, []
        return out


class MqttLink:
    """A paho connection for one device: QoS 1, last will ``offline`` retained.

    It connects in the background and reconnects by itself (1 s, doubling to 30 s), so a
    device started before the broker, or outliving a broker restart, just carries on.
    """

    def __init__(
        self,
        address: BrokerAddress,
        *,
        client_id: str,
        will_topic: str,
        ca_file: str | None = None,
        keepalive: int = 30,
    ) -> None:
        self.address = address
        self.keepalive = keepalive
        self.on_up: Callable[[], None] | None = None
        self.on_down: Callable[[], None] | None = None
        self.last_error: str | None = None
        self._up = threading.Event()
        self._last_sent: Delivery | None = None
        self._client = make_client(
            address,
            client_id,
            ca_file=ca_file,
            will_topic=will_topic,
            will_payload=encode_availability(False),
            will_retain=True,
        )
        on_connack(self._client, self._on_connected, self._on_refused)
        self._client.on_disconnect = self._on_disconnect
        self._deliveries = Deliveries(self._client)

    @property
    def online(self) -> bool:
        return self._up.is_set()

    def start(self) -> None:
        """Connect in the background; :meth:`wait_online` waits for the first connection."""
        self._client.connect_async(self.address.host, self.address.port, self.keepalive)
        self._client.loop_start()

    def wait_online(self, timeout: float) -> bool:
        return self._up.wait(timeout)

    def send(self, topic: str, payload: bytes, retain: bool) -> None:
        self._last_sent = self._deliveries.publish(topic, payload, retain=retain)

    def in_flight(self) -> Delivery | None:
        """The last message sent, if the broker has not acknowledged it yet.

        paho resends it (and any sent before it) on reconnection, also one it took while
        the link was down (see :mod:`kent_ops.broker.delivery`).
        """
        sent = self._last_sent
        return sent if sent is not None and not sent.done else None

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until the last message sent is acknowledged (True) or ``timeout`` passes."""
        sent = self._last_sent
        return sent is None or sent.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Wait for what was sent, then disconnect cleanly (no will) and stop the thread."""
        if self.online:
            self.flush(timeout)
        self._up.clear()
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connected(self, client: mqtt.Client, flags: mqtt.ConnectFlags) -> None:
        self.last_error = None
        self._up.set()
        if self.on_up is not None:
            self.on_up()

    def _on_refused(self, reason: mqtt.ReasonCode) -> None:
        self.last_error = str(reason)

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.DisconnectFlags,
        reason_code: mqtt.ReasonCode,
        properties: mqtt.Properties | None,
    ) -> None:
        self._up.clear()
        if self.on_down is not None:
            self.on_down()
