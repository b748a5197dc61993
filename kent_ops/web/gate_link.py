"""One gate's MQTT connection inside ``kent-ops serve``, as the gate's broker user.

Every phone at a gate is fed by one connection, as ``deputy-{gate}`` with the password
of the deputies signed in there (their web password is that broker password,
docs/security.md): the broker's access list still decides what the gate may read and
publish. It subscribes to the status, the gate's command and the aggregator's
availability, and it is the manual tally's way to the broker (:class:`TallyLink`,
a device link like the sensors' own), with the tally's last will ``offline``.

paho runs the connection in its own thread; everything it hears is handed to the
server's event loop (``call_soon_threadsafe``), so the hub's state is only ever touched
there. A refused account (wrong password, no such user) is said as such, naming the
account, and with another password among the gate's sessions the next attempt uses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import paho.mqtt.client as mqtt

from kent_ops.broker.borrowed import BorrowedLink
from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.delivery import Deliveries, Delivery
from kent_ops.broker.refusal import host_problem, refusal
from kent_ops.broker.tally_sends import TallySends, taps_in
from kent_ops.core import wire
from kent_ops.core.connection import ConnectionState

__all__ = ["GateLink", "Heard", "LinkChange", "TallyLink"]

log = logging.getLogger("kent-ops.serve")


@dataclass(frozen=True, slots=True)
class Heard:
    """A message on one of the gate's topics."""

    topic: str
    payload: bytes


@dataclass(frozen=True, slots=True)
class LinkChange:
    """The connection came up, went down, or was refused (``reason`` names the account)."""

    up: bool
    reason: str | None = None
    refused: bool = False
    unknown_host: bool = False
    """The broker's host name does not resolve (``reason`` says which)."""

    def apply(self, state: ConnectionState) -> None:
        """The hub's connection state after this change (what its view says of the link):
        since when it is up or down, and why down."""
        if self.up:
            if state.link != "up":
                state.up_at = time.monotonic()
            state.link, state.reason, state.refused, state.down_since = "up", None, False, None
            state.unknown_host = False
        else:
            if state.link != "down":
                state.down_since = datetime.now(UTC)
            state.link, state.reason, state.refused = "down", self.reason, self.refused
            state.unknown_host = self.unknown_host


class TallyLink(BorrowedLink):
    """The manual tally's link (:class:`sensors.links.Link`) over the gate's connection.

    Each message on the tally's count topic is followed to the broker's acknowledgement
    with the taps its totals carry (:class:`~kent_ops.broker.tally_sends.TallySends`):
    once the broker has it, every tap up to that number is *sent* (counted is the
    aggregator's word, read from its status).
    """

    def __init__(self, link: GateLink, count_topic: str) -> None:
        super().__init__()
        self.link = link
        self.count_topic = count_topic
        self.sends = TallySends()

    def send(self, topic: str, payload: bytes, retain: bool) -> None:
        delivery = self.link.publish(topic, payload, retain=retain)
        if topic == self.count_topic:
            self.sends.add(taps_in(payload), delivery)


class GateLink:
    """paho's connection for one gate; events go to ``on_heard`` / ``on_change`` on ``loop``."""

    def __init__(
        self,
        gate: str,
        topics: wire.Topics,
        broker: BrokerAddress,
        password: str,
        *,
        loop: asyncio.AbstractEventLoop,
        on_heard: Callable[[Heard], None],
        on_change: Callable[[LinkChange], None],
        on_acknowledged: Callable[[], None],
        will_topic: str,
        ca_file: str | None = None,
    ) -> None:
        self.gate = gate
        self.topics = topics
        self.user = f"deputy-{gate}"
        self.address = replace(broker, username=self.user, password=password)
        self.loop = loop
        self._on_heard, self._on_change, self._on_acknowledged = (
            on_heard,
            on_change,
            on_acknowledged,
        )
        self.tally: TallyLink | None = None
        self._lock = threading.Lock()
        self._passwords: dict[str, str] = {}
        """The gate's signed-in sessions' passwords, by session (kept while they last)."""
        self._current = password
        self._tried: set[str] = {password}
        self.client = make_client(
            self.address,
            f"kent-serve-{gate}-{secrets.token_hex(4)}",
            ca_file=ca_file,
            will_topic=will_topic,
            will_payload=wire.encode_availability(False),
        )
        self.client.on_connect = self._connected
        self.client.on_disconnect = self._disconnected
        self.client.on_connect_fail = self._failed
        self.client.on_message = self._message
        deliveries = self._deliveries = Deliveries(self.client)

        def on_publish(*args: Any) -> None:
            deliveries.on_publish(*args)
            self._post(self._on_acknowledged)

        self.client.on_publish = on_publish
        self._refused: str | None = None
        self._last: Delivery | None = None

    @property
    def subscriptions(self) -> list[str]:
        return [
            self.topics.status,
            self.topics.gate_command(self.gate),
            self.topics.aggregator_availability,
        ]

    def start(self) -> None:
        self.client.connect_async(self.address.host, self.address.port, keepalive=15)
        self.client.loop_start()

    def stop(self) -> None:
        """Disconnect (no will: a clean goodbye) and end paho's thread; blocks briefly."""
        with contextlib.suppress(Exception):
            self.client.disconnect()
        self.client.loop_stop()

    def add_password(self, session: str, password: str) -> None:
        """A deputy's session at this gate: its password, should ours be refused."""
        with self._lock:
            self._passwords[session] = password

    def drop_password(self, session: str) -> None:
        """That session ended (its phones closed): its password is no longer kept here.

        The connection made with it stays (the broker checked it already); the next one
        uses a password of a session still signed in.
        """
        with self._lock:
            self._passwords.pop(session, None)
            held = set(self._passwords.values())
            if self._current not in held and held:
                self._current = next(iter(held))
                self.client.username_pw_set(self.user, self._current)

    def publish(self, topic: str, payload: bytes, *, retain: bool) -> Delivery:
        """QoS 1, thread-safe; kept by paho while the link is down."""
        self._last = delivery = self._deliveries.publish(topic, payload, retain=retain)
        return delivery

    def flush(self, timeout: float) -> bool:
        """Wait until the broker has the last message published (a goodbye)."""
        last = self._last
        return last is None or last.wait(timeout)

    # paho's thread ---------------------------------------------------------------------

    def _post(self, callback: Callable[..., None], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closing: nobody listens
            self.loop.call_soon_threadsafe(callback, *args)

    def _connected(self, client: mqtt.Client, u: object, f: object, rc: Any, p: object) -> None:
        if rc.is_failure:
            self._refused = refusal(rc, self.user)
            log.warning("gate %s: the broker refused %s: %s", self.gate, self.user, rc)
            self._next_password()
            self._post(self._on_change, LinkChange(False, self._refused, refused=True))
            return
        self._refused = None
        with self._lock:
            self._tried = {self._current}
        for topic in self.subscriptions:
            client.subscribe(topic, qos=1)
        if self.tally is not None:
            self.tally.came_up()
        self._post(self._on_change, LinkChange(True))

    def _next_password(self) -> None:
        """Refused: the next attempt uses another session's password, if one differs."""
        with self._lock:
            untried = [p for p in self._passwords.values() if p not in self._tried]
            if untried:
                self._current = untried[0]
                self._tried.add(self._current)
                self.client.username_pw_set(self.user, self._current)

    def _disconnected(self, client: mqtt.Client, u: object, f: object, rc: Any, p: object) -> None:
        if self.tally is not None:
            self.tally.went_down()
        refused = self._refused is not None
        self._post(self._on_change, LinkChange(False, self._refused, refused=refused))

    def _failed(self, client: mqtt.Client, userdata: object) -> None:
        self._refused = None
        problem = host_problem(self.address.host)  # a name that does not exist, say so
        self._post(self._on_change, LinkChange(False, problem, unknown_host=problem is not None))

    def _message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        self._post(self._on_heard, Heard(msg.topic, bytes(msg.payload)))
