"""What every sensor shares: its link to the broker, availability and will, ``seq``, state.

A device never talks to paho directly; it sends through a :class:`Link`. On the field
that is an :class:`MqttLink` (QoS 1, availability ``online`` retained on every connect,
last will ``offline`` retained). In the simulator and in unit tests it is a
:class:`MemoryLink` that keeps what it was sent, so the simulator drives the very same
device classes a Raspberry Pi runs, with a simulated clock and no broker.

While the link is down a device keeps its readings: gate counters and lot sensors keep
counting and, when the link comes back, publish their latest figures once (coalesced,
with the next ``seq``); badge readers keep each scan and send them in order.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, ClassVar, Protocol

import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.delivery import Deliveries, Delivery
from kent_ops.core.wire import Topics, encode_payload, format_ts

__all__ = [
    "Clock",
    "Device",
    "Link",
    "MemoryLink",
    "MqttLink",
    "Sent",
    "utc_now",
]

Clock = Callable[[], datetime]
"""Returns the current (timezone-aware) time; the simulator passes simulated time."""

ONLINE = b"online"
OFFLINE = b"offline"
CATCH_UP_WAIT_S = 30.0
"""After a reconnection, how long what waited waits for the resent messages' PUBACK."""


def utc_now() -> datetime:
    """The wall clock, in UTC: the default clock of a real device."""
    return datetime.now(UTC)


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
                self.sent.append(Sent(self.will_topic, OFFLINE, True))

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
            will_payload=OFFLINE,
            will_retain=True,
        )
        self._client.on_connect = self._on_connect
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

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason_code: mqtt.ReasonCode,
        properties: mqtt.Properties | None,
    ) -> None:
        if reason_code.is_failure:
            self.last_error = str(reason_code)
            return
        self.last_error = None
        self._up.set()
        if self.on_up is not None:
            self.on_up()

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


class Device:
    """The part of a sensor that is the same for every kind.

    Subclasses name their ``kind`` (which gives their topic), say what one reading holds
    (:meth:`_reading`), and what of their state survives a reboot
    (:meth:`_state_fields` / :meth:`_load_fields`). They set their own fields before
    calling ``super().__init__``, which restores the state file over them.

    Args:
        event_id: the event's id; its topics are built by :class:`~kent_ops.core.wire.Topics`.
        sensor_id: this sensor's id as listed in the permit.
        clock: the time to stamp on payloads; simulated time in the simulator.
        tz: show ``ts`` in this zone (the event's); default: the clock's own zone.
        key: if given, every payload carries ``sig``, an HMAC-SHA256 under this key
            (canonical form in :mod:`kent_ops.core.wire.signing`).
        state_file: a small JSON file that keeps ``seq`` and the totals across reboots.
        heartbeat_s: republish the current reading after this long without a message;
            None for devices that only speak when something happens.
        recover_state: when the state file cannot be used (not JSON, another sensor's,
            bad figures), move it aside as ``{name}.unreadable-{UTC stamp}`` and start
            again at ``seq`` 0 (:attr:`recovered_from` says where it went) instead of
            refusing to start. The aggregator sees the next message as a device restart
            and keeps the earlier totals (docs/protocol.md, "Counting").
    """

    kind: ClassVar[str] = ""
    """The kind of sensor it plays, by its name in core/sensor_kinds.py."""

    def __init__(
        self,
        event_id: str,
        sensor_id: str,
        *,
        clock: Clock = utc_now,
        tz: tzinfo | None = None,
        key: bytes | None = None,
        state_file: str | Path | None = None,
        heartbeat_s: float | None = 30.0,
        recover_state: bool = False,
    ) -> None:
        self.event_id = event_id
        self.sensor_id = sensor_id
        self.topics = Topics(event_id)
        self.clock = clock
        self.tz = tz
        self.key = key
        self.state_file = Path(state_file) if state_file is not None else None
        self.heartbeat_s = heartbeat_s
        if heartbeat_s is not None and heartbeat_s <= 0:
            raise ValueError("heartbeat_s must be more than 0")
        self.seq = 0
        self.recover_state = recover_state
        self.recovered_from: Path | None = None
        """Where an unusable state file was moved aside, when ``recover_state`` did so."""
        self.last_reading: dict[str, Any] | None = None
        """The fields (without ``seq`` and ``ts``) of the last message handed to the link."""
        self._lock = threading.RLock()
        self._announced = threading.Event()  # on this connection, caught up: see _on_up
        self._closed = False
        """Reconnected, with older messages still to be resent: new ones wait behind them."""
        self._link: Link | None = None
        self._last_sent_at: datetime | None = None
        self._load_state()

    # -- what subclasses provide -------------------------------------------------------

    @property
    def topic(self) -> str:
        """The topic this device's readings go to: its kind's (core/sensor_kinds.py)."""
        return self.topics.reading(self.kind, self.sensor_id)

    def _reading(self) -> dict[str, Any] | None:
        """The current reading (without ``seq`` and ``ts``), or None if it has none."""
        return None

    def _state_fields(self) -> dict[str, Any]:
        return {}

    def _load_fields(self, data: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Restore what :meth:`_state_fields` saved (nothing, for a stateless device)."""

    def _link_up(self) -> None:
        """After a (re)connection: periodic devices send their latest reading once."""
        reading = self._reading()
        if reading is not None:
            self._send(reading)

    # -- the link ----------------------------------------------------------------------

    @property
    def availability_topic(self) -> str:
        return self.topics.availability(self.sensor_id)

    @property
    def online(self) -> bool:
        """True once the device has announced itself on its connection and caught up."""
        return self._link is not None and self._link.online and self._announced.is_set()

    def wait_online(self, timeout: float) -> bool:
        """Wait until :attr:`online` (what was kept meanwhile has then been sent)."""
        return self._announced.wait(timeout) and self.online

    def attach(self, link: Link) -> None:
        """Send through ``link`` from now on; announce ourselves if it is already up."""
        with self._lock:
            self._link = link
            link.on_up = self._on_up
            link.on_down = self._on_down
            if link.online:
                self._on_up()

    def connect(
        self,
        address: BrokerAddress,
        *,
        client_id: str | None = None,
        ca_file: str | None = None,
        keepalive: int = 30,
    ) -> MqttLink:
        """Connect to a broker in the background (see :class:`MqttLink`) and attach to it."""
        link = MqttLink(
            address,
            client_id=client_id or f"kent-{self.event_id}-{self.kind}-{self.sensor_id}",
            will_topic=self.availability_topic,
            ca_file=ca_file,
            keepalive=keepalive,
        )
        self.attach(link)
        link.start()
        return link

    def close(self, *, announce: bool = True, timeout: float = 5.0) -> None:
        """Stop for good: say ``offline`` (a clean disconnect sends no will) and disconnect."""
        with self._lock:
            link = self._link
            if link is not None and link.online and announce:
                link.send(self.availability_topic, OFFLINE, True)
            self._closed = True  # nothing after "offline", not even a catch-up
            self._announced.clear()
        if isinstance(link, MqttLink):
            link.close(timeout)

    def _on_up(self) -> None:
        """Announce the device, then send what waited, after what was in flight.

        On a reconnection paho resends the messages left unacknowledged only after this
        callback returns: a reading sent from here would overtake them, and the
        aggregator would take the older ``seq`` for a repeat (a badge scan lost). So when
        something is in flight, what waited goes out once it is acknowledged.

        Until then the device keeps what it reads, as while the link was down: the link
        says it is up a moment before this runs, and a reading sent in that moment would
        go out before ``online``, or (with something in flight) overtake it.
        """
        with self._lock:
            link = self._link
            if link is None or self._closed:
                return
            in_flight = link.in_flight() if isinstance(link, MqttLink) else None
            link.send(self.availability_topic, ONLINE, True)
            if in_flight is None:
                self._announced.set()
                self._link_up()
                return
        threading.Thread(
            target=self._catch_up,
            args=(link, in_flight),
            name=f"{self.sensor_id}-catch-up",
            daemon=True,
        ).start()

    def _catch_up(self, link: MqttLink, in_flight: Delivery) -> None:
        in_flight.wait(CATCH_UP_WAIT_S)  # paho resends, then it is acked
        with self._lock:
            if self._link is link and link.online and not self._closed:
                self._announced.set()
                self._link_up()

    def _on_down(self) -> None:
        with self._lock:
            self._announced.clear()

    # -- publishing --------------------------------------------------------------------

    def tick(self, *, force: bool = False) -> bool:
        """Send a heartbeat (the current reading again) if one is due, or now with
        ``force`` (a simulated day's last report); True if sent."""
        if self.heartbeat_s is None and not force:
            return False
        with self._lock:
            last = self._last_sent_at
            due = last is None or (self.clock() - last).total_seconds() >= (self.heartbeat_s or 0)
            if not (due or force):
                return False
            reading = self._reading()
            return reading is not None and self._send(reading)

    def _send(self, fields: dict[str, Any], ts: datetime | None = None) -> bool:
        """Stamp the next ``seq`` and ``ts``, sign, send; False (nothing used) if offline.

        The new ``seq`` is saved before the message goes out, so a device that reboots
        right after sending never sends that ``seq`` again with other figures.
        """
        with self._lock:
            link = self._link
            if link is None or not link.online or not self._announced.is_set():
                return False
            now = self.clock()
            self.seq += 1
            payload = encode_payload(
                {"seq": self.seq, "ts": format_ts(ts or now, self.tz), **fields}, self.key
            )
            self._save_state()
            link.send(self.topic, payload, False)
            self._last_sent_at = now
            self.last_reading = dict(fields)
            return True

    # -- state across reboots ----------------------------------------------------------

    def _save_state(self) -> None:
        """Write the state atomically (temp file, fsync, rename): old or new, never half."""
        if self.state_file is None:
            return
        data = {"sensor": self.sensor_id, "seq": self.seq, **self._state_fields()}
        directory = self.state_file.parent
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{self.state_file.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(data) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.state_file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _load_state(self) -> None:
        path = self.state_file
        if path is None or not path.exists():
            return
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"state file {path} is unreadable: {exc}") from None
        fresh = (self.seq, self._state_fields())
        try:
            self._restore_state(path, text)
        except ValueError:
            if not self.recover_state:
                raise
            self.seq = fresh[0]
            self._load_fields(fresh[1])
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            aside = path.with_name(f"{path.name}.unreadable-{stamp}")
            path.rename(aside)
            self.recovered_from = aside

    def _restore_state(self, path: Path, text: str) -> None:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"state file {path} is unreadable: {exc}") from None
        if not isinstance(data, dict) or data.get("sensor") != self.sensor_id:
            raise ValueError(f"state file {path} belongs to another sensor")
        seq = data.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise ValueError(f"state file {path} has no valid seq")
        self.seq = seq
        self._load_fields(data)
