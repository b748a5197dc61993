"""The dashboards' MQTT feed: a plain paho thread that turns messages into typed records.

Like Toolong's file watcher, it imports nothing from Textual: it reads each topic with
:meth:`Topics.parse` and decodes each payload once, at the edge, into the wire's frozen
Struct (:class:`~kent_ops.core.wire.Status`, :class:`~kent_ops.core.wire.Alert`,
:class:`~kent_ops.core.wire.GateCommand`), then hands it to a callback; everything
downstream reads attributes, never a dict. The app decides how records reach the
screen (``post_message``, which is thread-safe). A payload that is not what
docs/protocol.md says is logged and counted, never raised into paho's loop, so one bad
retained message cannot take a dashboard down.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin

import msgspec
import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.delivery import Deliveries, Delivery
from kent_ops.broker.refusal import host_problem, refusal
from kent_ops.broker.witness import WitnessKeeper, watch_checkpoints
from kent_ops.core import wire
from kent_ops.core.wire import TopicRef, Topics

__all__ = [
    "AlertUpdate",
    "AvailabilityUpdate",
    "BadPayload",
    "CommandUpdate",
    "FeedEvent",
    "LinkUpdate",
    "MqttFeed",
    "StatusUpdate",
    "classify",
]

log = logging.getLogger(__name__)

R = TypeVar("R", bound=msgspec.Struct)


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """A whole status snapshot (docs/protocol.md); rendered as one, never half of one."""

    status: wire.Status
    received_at: datetime


@dataclass(frozen=True, slots=True)
class AlertUpdate:
    """One alert in its latest form; ``alert`` None when its retained message was cleared."""

    alert_id: str
    alert: wire.Alert | None


@dataclass(frozen=True, slots=True)
class CommandUpdate:
    """The aggregator's order for one gate; None when its retained message was cleared."""

    gate: str
    command: wire.GateCommand | None


@dataclass(frozen=True, slots=True)
class AvailabilityUpdate:
    """The aggregator's retained availability: ``online`` or not."""

    online: bool


@dataclass(frozen=True, slots=True)
class LinkUpdate:
    """The broker connection came up or went down (with the client's reason)."""

    connected: bool
    reason: str | None = None
    """Said only when the broker refused us (credentials, ACL): "unreachable" says the rest."""
    refused: bool = False
    """The broker answered and turned the account away (``reason`` names the account)."""
    unknown_host: bool = False
    """The broker's host name does not resolve (``reason`` says which)."""


FeedEvent = StatusUpdate | AlertUpdate | CommandUpdate | AvailabilityUpdate | LinkUpdate


class BadPayload(ValueError):
    """A message on one of our topics that is not what docs/protocol.md says it is."""


Check = Callable[[object, str], str | None]
"""Returns the path of the first time without an offset in a value, or None."""


@lru_cache(maxsize=64)
def _time_check(tp: object) -> Check | None:
    """A check for times without an offset in values of type ``tp``; None if it holds none.

    Built once per type from the Struct's annotations, so a status with 200 gates is
    checked by looking only at the fields that can hold a time.
    """
    if tp is datetime:
        return lambda value, path: (
            path if isinstance(value, datetime) and value.tzinfo is None else None
        )
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return _struct_check(tp)
    origin, args = get_origin(tp), get_args(tp)
    if origin in (list, tuple) and args:
        return _items_check(_time_check(args[0]), origin)
    if origin is dict and len(args) == 2:
        return _values_check(_time_check(args[1]))
    if origin in (Union, UnionType):
        checks = [c for c in map(_time_check, args) if c is not None]
        return _first_of(checks) if checks else None
    return None


def _naive(value: object, path: str) -> str | None:
    return path if isinstance(value, datetime) and value.tzinfo is None else None


def _struct_check(cls: type[msgspec.Struct]) -> Check | None:
    fields = [(f.name, c) for f in msgspec.structs.fields(cls) if (c := _time_check(f.type))]
    if not fields:
        return None

    def check(value: object, path: str) -> str | None:
        if not isinstance(value, cls):
            return None
        for name, field_check in fields:
            found = field_check(getattr(value, name), f"{path}.{name}" if path else name)
            if found is not None:
                return found
        return None

    return check


def _items_check(item: Check | None, kind: type) -> Check | None:
    if item is None:
        return None

    def check(value: object, path: str) -> str | None:
        if isinstance(value, kind) and isinstance(value, Iterable):
            entry: object
            for index, entry in enumerate(value):
                found = item(entry, f"{path}[{index}]")
                if found is not None:
                    return found
        return None

    return check


def _values_check(item: Check | None) -> Check | None:
    if item is None:
        return None

    def check(value: object, path: str) -> str | None:
        if isinstance(value, dict):
            for key, entry in value.items():
                found = item(entry, f"{path}.{key}")
                if found is not None:
                    return found
        return None

    return check


def _first_of(checks: list[Check]) -> Check:
    def check(value: object, path: str) -> str | None:
        for one in checks:
            found = one(value, path)
            if found is not None:
                return found
        return None

    return check


def _naive_time(record: msgspec.Struct) -> str | None:
    """The field of the first time without an offset in a decoded record, if any.

    The dashboards subtract and sort these times; one without an offset cannot be
    compared with the others, so the record is refused here rather than fail later.
    """
    check = _time_check(type(record))
    return check(record, "") if check is not None else None


def _decode(cls: type[R], payload: bytes) -> R:
    """One outbound record, or :class:`BadPayload` naming the field at fault."""
    try:
        record = wire.decode_json(cls, payload)
    except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
        raise BadPayload(f"not a valid {cls.__name__.lower()}: {exc}") from None
    naive = _naive_time(record)
    if naive is not None:
        raise BadPayload(f"{cls.__name__.lower()} time {naive} has no UTC offset")
    return record


def _status(payload: bytes, received_at: datetime) -> StatusUpdate:
    status = _decode(wire.Status, payload)
    if status.ts is None:
        raise BadPayload("status has no ts")
    return StatusUpdate(status, received_at)


def classify(topics: Topics, topic: str, payload: bytes, received_at: datetime) -> FeedEvent | None:
    """The record for one received message; None for a topic the dashboards do not show.

    Raises:
        BadPayload: the topic is ours but the payload is not a valid one.
    """
    ref = topics.parse(topic)
    if not isinstance(ref, TopicRef):
        return None  # another event's topic, or not a kent-ops topic at all
    match ref.kind:
        case "status":
            return _status(payload, received_at)
        case "alert":
            return AlertUpdate(ref.id, _decode(wire.Alert, payload) if payload else None)
        case "command":
            command = _decode(wire.GateCommand, payload) if payload else None
            return CommandUpdate(ref.id, command)
        case "aggregator-availability":
            return AvailabilityUpdate(wire.decode_availability(payload))
    return None


class MqttFeed:
    """Subscribe to the aggregator's retained topics in a paho network thread.

    ``on_event`` is called from that thread, so it must be thread-safe and quick
    (Textual's ``post_message`` is both). Publishing (inspector actions, the manual
    tally) goes through the same client: paho's ``publish`` is thread-safe and queues
    QoS 1 messages while the link is down. ``will_topic``: an availability topic the
    broker says ``offline`` on, retained, should this client vanish (the gate view's tally).
    """

    def __init__(
        self,
        address: BrokerAddress,
        topics: Topics,
        subscriptions: Sequence[str],
        on_event: Callable[[FeedEvent], None],
        *,
        ca_file: str | None = None,
        client_name: str = "dashboard",
        will_topic: str | None = None,
    ) -> None:
        self.address = address
        self.topics = topics
        self.subscriptions = list(subscriptions)
        self.rejected = 0
        """Payloads on our topics that were not valid; logged, counted, never raised."""
        self._on_event = on_event
        self._lock = threading.Lock()
        self._started = False
        self._refused: str | None = None
        """Why the broker last turned us away, until a connection is accepted."""
        client_id = f"kent-{client_name}-{uuid.uuid4().hex[:8]}"
        self.client = make_client(
            address,
            client_id,
            ca_file=ca_file,
            will_topic=will_topic,
            will_payload=wire.encode_availability(False),
        )
        self.client.on_connect = self._handle_connect
        self.client.on_connect_fail = self._handle_connect_fail
        self.client.on_disconnect = self._handle_disconnect
        self.client.on_message = self._handle_message
        self._deliveries = Deliveries(self.client)

    def start(self) -> None:
        """Connect in the background; paho keeps retrying (1 s to 30 s) until it can."""
        with self._lock:
            if self._started:
                return
            self._started = True
        self.client.connect_async(self.address.host, self.address.port, keepalive=10)
        self.client.loop_start()

    def stop(self) -> None:
        """Disconnect cleanly and join the network thread."""
        with self._lock:
            if not self._started:
                return
            self._started = False
        self.client.disconnect()
        self.client.loop_stop()

    def publish(self, topic: str, payload: bytes | str, *, retain: bool = False) -> Delivery:
        """Publish at QoS 1 (thread-safe); kept in paho's queue while offline."""
        return self._deliveries.publish(topic, payload, retain=retain)

    @property
    def connected(self) -> bool:
        return self.client.is_connected()

    def keep_checkpoints(self, keeper: WitnessKeeper) -> None:
        """Keep every checkpoint of the log this feed receives in a witness file
        (docs/protocol.md, "Witness files"); call before :meth:`start`."""
        if self.topics.checkpoint not in self.subscriptions:
            self.subscriptions.append(self.topics.checkpoint)
        watch_checkpoints(self.client, self.topics, keeper)

    # paho callbacks: run in the network thread ------------------------------------

    def _emit(self, event: FeedEvent) -> None:
        try:
            self._on_event(event)
        except Exception:  # the receiver's bug must not kill paho's thread
            log.exception("dashboard feed callback failed")

    def _handle_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason_code: Any,
        properties: Any,
    ) -> None:
        if reason_code.is_failure:
            # paho then drops the connection and calls _handle_disconnect, which must
            # not lose the refusal: the banner would say "unreachable" instead.
            self._refused = refusal(reason_code, self.address.username)
            self._emit(LinkUpdate(False, self._refused, refused=True))
            return
        self._refused = None
        for topic in self.subscriptions:
            client.subscribe(topic, qos=1)
        self._emit(LinkUpdate(True))

    def _handle_connect_fail(self, client: mqtt.Client, userdata: object) -> None:
        self._refused = None  # no answer at all this time: unreachable, not refused
        problem = host_problem(self.address.host)  # or a name that does not exist
        self._emit(LinkUpdate(False, problem, unknown_host=problem is not None))

    def _handle_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.DisconnectFlags,
        reason_code: Any,
        properties: Any,
    ) -> None:
        self._emit(LinkUpdate(False, self._refused, refused=self._refused is not None))

    def receive(self, topic: str, payload: bytes) -> FeedEvent | None:
        """Decode one message and hand its record on; a bad payload is counted, not raised.

        Returns the record handed on (None for a topic the dashboards do not show, or
        a payload that was refused).
        """
        try:
            event = classify(self.topics, topic, payload, datetime.now(UTC))
        except BadPayload as exc:
            self.rejected += 1
            log.warning("ignored a bad payload on %s: %s", topic, exc)
            return None
        if event is not None:
            self._emit(event)
        return event

    def _handle_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        self.receive(msg.topic, bytes(msg.payload))
