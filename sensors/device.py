"""What every sensor shares: availability and will, ``seq``, its state across reboots.

A device never talks to paho directly; it sends through a link (:mod:`sensors.links`):
on the field an :class:`~sensors.links.MqttLink` (QoS 1, availability ``online``
retained on every connect, last will ``offline`` retained); in the simulator and in unit
tests a :class:`~sensors.links.MemoryLink` that keeps what it was sent, so the simulator
drives the very same device classes a Raspberry Pi runs, with a simulated clock and no
broker.

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
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, ClassVar, TypedDict

from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.delivery import Delivery
from kent_ops.core.sensor_kinds import Reading
from kent_ops.core.wire import Topics, encode_availability, encode_reading
from sensors.links import Link, MemoryLink, MqttLink, Sent

__all__ = [  # the links too, where their users have always found them
    "Clock",
    "Device",
    "EventOptions",
    "Options",
    "Link",
    "MemoryLink",
    "MqttLink",
    "Sent",
    "Unstamped",
    "utc_now",
]

Clock = Callable[[], datetime]
"""Returns the current (timezone-aware) time; the simulator passes simulated time."""

CATCH_UP_WAIT_S = 30.0
"""After a reconnection, how long what waited waits for the resent messages' PUBACK."""


def utc_now() -> datetime:
    """The wall clock, in UTC: the default clock of a real device."""
    return datetime.now(UTC)


class EventOptions(TypedDict, total=False):
    """What every kind of device takes besides its event and id (see :class:`Device`):
    a device that speaks only when something happens (a badge reader) takes these."""

    clock: Clock
    tz: tzinfo | None
    key: bytes | None
    state_file: str | Path | None
    recover_state: bool


class Options(EventOptions, total=False):
    """A device that heartbeats (a gate counter, a lot sensor) also takes its interval."""

    heartbeat_s: float | None


Unstamped = Callable[[int, datetime], Reading]
"""A reading waiting for its ``seq`` and ``ts``: it makes the wire's Struct of the
device's kind (core/sensor_kinds/payloads.py) when :meth:`Device._send` stamps it."""


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
    """The kind of sensor it plays, by its name in core/sensor_kinds/table.py."""

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
        self.last_reading: Reading | None = None
        """The last reading handed to the link."""
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
        """The topic this device's readings go to: its kind's (core/sensor_kinds/table.py)."""
        return self.topics.reading(self.kind, self.sensor_id)

    def _reading(self) -> Unstamped | None:
        """The current reading, to be stamped when sent, or None if it has none."""
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
                link.send(self.availability_topic, encode_availability(False), True)
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
            link.send(self.availability_topic, encode_availability(True), True)
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

    def _send(
        self, reading: Unstamped, ts: datetime | None = None, topic: str | None = None
    ) -> bool:
        """Stamp the next ``seq`` and ``ts``, sign, send (on its topic, or ``topic``: a
        re-statement's); False (nothing used) if offline.

        The new ``seq`` is saved before the message goes out, so a device that reboots
        right after sending never sends that ``seq`` again with other figures.
        """
        with self._lock:
            link = self._link
            if link is None or not link.online or not self._announced.is_set():
                return False
            now = self.clock()
            self.seq += 1
            record = reading(self.seq, ts or now)
            payload = encode_reading(record, self.key, self.tz)
            self._save_state()
            link.send(topic or self.topic, payload, False)
            self._last_sent_at = now
            self.last_reading = record
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
