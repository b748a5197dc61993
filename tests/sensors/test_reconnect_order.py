"""After a reconnection, what a device kept waits behind what was still in flight.

paho resends the messages left unacknowledged only after its on-connect callback has
returned; a badge scan sent from that callback would overtake an older one, and the
aggregator would drop the older ``seq`` as a repeat: a nurse's scan lost. These tests
stand a link whose last message is still in flight and check the order of what goes out.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from live_support import wait_until

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.delivery import Delivery
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.wire import Topics
from sensors.badge_reader import BadgeReader
from sensors.device import MqttLink

EVENT = "kent-summer-fest-2027"


class HeldLink(MqttLink):
    """An MqttLink without a socket: it records what is sent, in order."""

    def __init__(self) -> None:  # no paho client: only what Device uses
        self.on_up = None
        self.on_down = None
        self.sent: list[tuple[str, bytes]] = []
        self._up = threading.Event()
        self._last_sent = None
        self.all_sent = threading.Event()

    def send(self, topic: str, payload: bytes, retain: bool) -> None:
        self.sent.append((topic, payload))
        if topic.endswith("/badge") and len(self.badges()) >= 4:
            self.all_sent.set()

    def badges(self) -> list[int]:
        return [json.loads(p)["seq"] for t, p in self.sent if t.endswith("/badge")]

    def drop(self) -> None:
        self._up.clear()
        if self.on_down is not None:
            self.on_down()

    def reconnect(self, in_flight: Delivery | None) -> None:
        self._last_sent = in_flight
        self._up.set()
        if self.on_up is not None:
            self.on_up()


def reader() -> tuple[BadgeReader, HeldLink]:
    when = datetime(2027, 7, 4, 14, tzinfo=UTC)
    device = BadgeReader(EVENT, "first-aid", clock=lambda: when, restate_s=None)  # scans only
    link = HeldLink()
    device.attach(link)
    return device, link


def test_scans_kept_while_away_wait_for_the_one_in_flight() -> None:
    device, link = reader()
    link.reconnect(None)
    device.scan("RN-1", "nurse", "on")  # seq 1: sent, then the link drops before its PUBACK
    link.drop()
    assert device.scan("RN-2", "nurse", "on") is False  # kept
    assert device.scan("RN-3", "nurse", "on") is False
    pending = Delivery()  # not acknowledged yet
    link.reconnect(pending)
    assert link.badges() == [1]  # nothing overtakes seq 1 while paho resends it
    assert device.scan("RN-4", "nurse", "on") is False  # a scan now waits in line too
    pending.acknowledged.set()  # the broker acknowledges it
    assert link.all_sent.wait(5)
    assert link.badges() == [1, 2, 3, 4]
    assert device.backlog == 0


def test_with_nothing_in_flight_kept_scans_go_at_once() -> None:
    device, link = reader()
    assert device.scan("RN-1", "nurse", "on") is False
    link.reconnect(None)
    assert link.badges() == [1]


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_a_message_sent_while_the_link_is_down_is_followed_to_its_acknowledgement(
    tmp_path: Path,
) -> None:
    """paho keeps a QoS 1 message published while disconnected and sends it on return.

    Its ``MQTTMessageInfo`` then says "not connected" forever (and raises when asked), yet
    the message does go out: the link follows the broker's acknowledgement instead, so a
    device reconnecting with such a message in flight neither crashes nor overtakes it.
    """
    broker = MosquittoBroker(tmp_path / "broker").start()
    try:
        topic = f"{Topics(EVENT).prefix}/sensor/north/gate"  # any topic will do
        heard = Heard(broker, topic)
        link = MqttLink(
            parse_broker_url(broker.url),
            client_id="north",
            will_topic=Topics(EVENT).availability("north"),
        )
        link.start()
        assert link.wait_online(10)
        broker.stop()
        wait_until(lambda: not link.online, 10, "the link to notice the broker gone")
        link.send(topic, b"kept", False)  # paho queues it: "not currently connected"
        assert link.in_flight() is not None
        assert link.flush(0.2) is False
        broker.start()
        assert link.flush(30)  # resent on reconnection and acknowledged
        assert link.in_flight() is None
        assert heard.payloads.wait(30)
        link.close()
        heard.close()
    finally:
        broker.stop()


class Heard:
    """A subscriber (persistent session) that keeps the payloads of one topic."""

    def __init__(self, broker: MosquittoBroker, topic: str) -> None:
        self.payloads = threading.Event()
        self.client = make_client(parse_broker_url(broker.url), "heard", clean_start=False)
        self.client.on_message = lambda client, userdata, message: self.payloads.set()
        subscribed = threading.Event()
        self.client.on_connect = lambda client, *_: client.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda *_: subscribed.set()
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        assert subscribed.wait(10), "the subscription was not acknowledged"

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
