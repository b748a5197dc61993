"""The MQTT link against a fake paho client: generations, acks, stamps, availability.

paho's callbacks are called here as its network thread would call them; the fake client
records what the link asks of it. The same link against a real Mosquitto is exercised by
tests/integration (a broker restart, SIGKILLs, a 30 s outage).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from kent_ops.broker.client import parse_broker_url
from kent_ops.core.wire import Topics
from kent_ops.evidence.system import BrokerConnected, BrokerDisconnected
from kent_ops.service.link import WAKE, Link

T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)
TOPICS = Topics("kent-summer-fest-2027")


@dataclass
class FakeClient:
    """Records subscribe, publish, ack and disconnect calls."""

    subscribed: list[list[tuple[str, int]]] = field(default_factory=list)
    published: list[tuple[str, bytes, int, bool]] = field(default_factory=list)
    acked: list[int] = field(default_factory=list)
    disconnected: bool = False

    def subscribe(self, topics: list[tuple[str, int]]) -> None:
        self.subscribed.append(topics)

    def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False) -> Any:
        self.published.append((topic, payload, qos, retain))
        return SimpleNamespace(wait_for_publish=lambda timeout=None: None)

    def ack(self, mid: int, qos: int) -> None:
        self.acked.append(mid)

    def disconnect(self) -> None:
        self.disconnected = True

    def loop_stop(self) -> None:
        pass


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> datetime:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fresh() -> list[bool]:
    """One entry per call of the link's on_connected hook."""
    return []


@pytest.fixture
def link(clock: Clock, fresh: list[bool]) -> Link:
    link = Link(
        parse_broker_url("mqtt://127.0.0.1:9"),
        TOPICS,
        "kent-ops-aggregator-test",
        ca_file=None,
        now=clock,
        connected=threading.Event(),
        on_connected=lambda: fresh.append(True),
    )
    link.client = FakeClient()  # type: ignore[assignment]
    return link


OK = SimpleNamespace(is_failure=False)
REFUSED = SimpleNamespace(is_failure=True)


def connect(link: Link, session_present: bool = False) -> None:
    flags = SimpleNamespace(session_present=session_present)
    link._on_connect(link.client, None, flags, OK, None)


def subscribed(link: Link) -> None:
    link._on_subscribe(link.client, None, 1, [OK] * len(TOPICS.inputs), None)


def receive(link: Link, mid: int, topic: str = TOPICS.gate_count("north")) -> None:
    msg = SimpleNamespace(topic=topic, payload=b"{}", mid=mid)
    link._on_message(link.client, None, msg)  # type: ignore[arg-type]


def drain(link: Link) -> list[tuple[Any, ...]]:
    out = []
    while not link.queue.empty():
        out.append(link.queue.get_nowait())
    return out


def test_connected_means_subscribed_and_announced_online(link: Link, fresh: list[bool]) -> None:
    connect(link)
    assert fresh == [True]  # the worker then sends a fresh status
    client: FakeClient = link.client  # type: ignore[assignment]
    # every input at QoS 1, and the broker's uptime (a restart: docs/protocol.md) at 0
    assert client.subscribed == [[*((t, 1) for t in TOPICS.inputs), ("$SYS/broker/uptime", 0)]]
    assert (TOPICS.aggregator_availability, b"online", 1, True) in client.published
    assert not link.connected.is_set()  # not before the SUBACK
    subscribed(link)
    assert link.connected.is_set()
    [event] = drain(link)
    assert event[0] is None
    assert event[1] == BrokerConnected(broker="mqtt://127.0.0.1:9", session_present=False)


def test_a_refused_connection_subscribes_nothing(link: Link) -> None:
    link._on_connect(link.client, None, SimpleNamespace(session_present=False), REFUSED, None)
    assert link.client.subscribed == []  # type: ignore[attr-defined]
    assert link.queue.empty()


def test_an_ack_goes_out_only_on_the_connection_the_message_came_in_on(link: Link) -> None:
    connect(link)
    subscribed(link)
    receive(link, mid=5)
    old = [item for item in drain(link) if item[0] is not None]
    link._on_disconnect(link.client, None, None, OK, None)
    assert not link.connected.is_set()
    connect(link, session_present=True)
    receive(link, mid=5)  # the broker redelivers it on the new connection
    new = [item for item in drain(link) if item[0] is not None]
    link.ack([(old[0][3], old[0][4])])
    assert link.client.acked == []  # type: ignore[attr-defined]
    link.ack([(new[0][3], new[0][4])])
    assert link.client.acked == [5]  # type: ignore[attr-defined]


def test_a_disconnect_is_queued_as_the_services_own_event(link: Link) -> None:
    connect(link)
    subscribed(link)
    drain(link)
    link._on_disconnect(link.client, None, None, "keepalive timeout", None)
    [event] = drain(link)
    assert event[1] == BrokerDisconnected(broker="mqtt://127.0.0.1:9", reason="keepalive timeout")


def test_once_stopping_nothing_is_taken_or_recorded(link: Link) -> None:
    connect(link)
    subscribed(link)
    drain(link)
    link.accepting = False
    receive(link, mid=9)  # left unacknowledged: the broker keeps it for the next run
    link._on_disconnect(link.client, None, None, OK, None)
    assert link.queue.empty()


def test_time_may_pass_only_when_no_message_waits(link: Link, clock: Clock) -> None:
    receive(link, mid=1)
    assert link.claim_now(busy=False) is None  # one waits in the queue
    drain(link)
    assert link.claim_now(busy=True) is None  # one waits with the worker
    clock.t = T0 + timedelta(seconds=5)
    assert link.claim_now(busy=False) == clock.t


def test_a_stamp_never_falls_behind_a_claimed_instant(link: Link, clock: Clock) -> None:
    clock.t = T0 + timedelta(seconds=5)
    claimed = link.claim_now(busy=False)
    clock.t = T0 + timedelta(seconds=3)  # the wall clock stepped back
    receive(link, mid=2)
    [item] = drain(link)
    assert item[2] == claimed


def test_going_offline_says_so_only_while_connected(link: Link) -> None:
    client: FakeClient = link.client  # type: ignore[assignment]
    link.go_offline()
    assert (TOPICS.aggregator_availability, b"offline", 1, True) not in client.published
    assert client.disconnected
    connect(link)
    subscribed(link)
    link.go_offline()
    assert (TOPICS.aggregator_availability, b"offline", 1, True) in client.published


def test_wake_is_a_marker_the_worker_never_records(link: Link) -> None:
    link.wake()
    assert drain(link) == [WAKE]
