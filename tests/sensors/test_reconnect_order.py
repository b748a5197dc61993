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

from sensors.badge_reader import BadgeReader
from sensors.device import MqttLink

EVENT = "kent-summer-fest-2027"


class InFlight:
    """A message the broker has not acknowledged yet; ``ack()`` acknowledges it."""

    def __init__(self) -> None:
        self._acked = threading.Event()

    def ack(self) -> None:
        self._acked.set()

    def is_published(self) -> bool:
        return self._acked.is_set()

    def wait_for_publish(self, timeout: float | None = None) -> None:
        self._acked.wait(timeout)


class HeldLink(MqttLink):
    """An MqttLink without a socket: it records what is sent, in order."""

    def __init__(self) -> None:  # no paho client: only what Device uses
        self.on_up = None
        self.sent: list[tuple[str, bytes]] = []
        self._up = threading.Event()
        self._last_info = None  # type: ignore[assignment]
        self.all_sent = threading.Event()

    def send(self, topic: str, payload: bytes, retain: bool) -> None:
        self.sent.append((topic, payload))
        if topic.endswith("/badge") and len(self.badges()) >= 4:
            self.all_sent.set()

    def badges(self) -> list[int]:
        return [json.loads(p)["seq"] for t, p in self.sent if t.endswith("/badge")]

    def reconnect(self, in_flight: InFlight | None) -> None:
        self._last_info = in_flight  # type: ignore[assignment]
        self._up.set()
        if self.on_up is not None:
            self.on_up()


def reader() -> tuple[BadgeReader, HeldLink]:
    device = BadgeReader(EVENT, "first-aid", clock=lambda: datetime(2027, 7, 4, 14, tzinfo=UTC))
    link = HeldLink()
    device.attach(link)
    return device, link


def test_scans_kept_while_away_wait_for_the_one_in_flight() -> None:
    device, link = reader()
    link._up.set()
    device.scan("RN-1", "nurse", "on")  # seq 1: sent, then the link drops before its PUBACK
    link._up.clear()
    assert device.scan("RN-2", "nurse", "on") is False  # kept
    assert device.scan("RN-3", "nurse", "on") is False
    pending = InFlight()
    link.reconnect(pending)
    assert link.badges() == [1]  # nothing overtakes seq 1 while paho resends it
    assert device.scan("RN-4", "nurse", "on") is False  # a scan now waits in line too
    pending.ack()
    assert link.all_sent.wait(5)
    assert link.badges() == [1, 2, 3, 4]
    assert device.backlog == 0


def test_with_nothing_in_flight_kept_scans_go_at_once() -> None:
    device, link = reader()
    assert device.scan("RN-1", "nurse", "on") is False
    link.reconnect(None)
    assert link.badges() == [1]
