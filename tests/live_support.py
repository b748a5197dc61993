"""Real MQTT clients and permit copies shared by the tests that run a live aggregator.

Everything here is real: a paho subscriber that keeps the latest message of every
topic under the event's prefix, a paho QoS 1 publisher (one connection, so the broker
keeps the order), and permit files written to ``tmp_path`` from the example.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import paho.mqtt.client as mqtt
import wire_support
from textual.pilot import Pilot

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.wire import ROOT as TOPIC_ROOT
from kent_ops.core.wire import TopicRef, Topics
from kent_ops.service.aggregator import Timing

ROOT = Path(__file__).resolve().parents[1]
EVENT = "kent-summer-fest-2027"
TOPICS = Topics(EVENT)
"""The example event's topics (docs/protocol.md); tests build every topic with it."""
P = TOPICS.prefix
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)  # 10:00 in Kent, when the window opens

FAST = Timing(heartbeat_s=1.0, snapshot_s=1.0, checkpoint_s=2.0, tick_s=0.2)
"""Service intervals short enough for tests to see heartbeats and checkpoints."""

KENT = ZoneInfo("America/New_York")
"""Kent's clock: a permit's windows carry New York's offset (docs/law.md)."""


def ts(seconds: float, start: datetime = T0) -> str:
    """``start`` plus ``seconds`` as a payload time (UTC, ``Z``)."""
    return (start + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def permit_text(
    *,
    gates: tuple[str, ...] | None = None,
    pending_s: float = 2,
    clear_s: float = 3,
    stale_after_s: float = 3600,
    hold_at: int | None = None,
    resume_below: int | None = None,
    security_guards: int = 2,
    overnight: bool = False,
    food_served: bool = True,
    window_now: bool = False,
    windows: list[tuple[str, str]] | None = None,
    signing: str | None = None,
) -> str:
    """The example permit's text with the changes a test needs.

    ``window_now`` moves the permitted window around the wall clock, for tests whose
    aggregator runs on it; ``windows`` replaces the first window with these (start,
    end) pairs; ``gates`` replaces the example's gates.
    """
    text = (ROOT / "examples" / "permit.toml").read_text().split("[alerting]")[0]
    if gates is not None:
        head, rest = text.split("[[gates]]", 1)
        lots = "[[lots]]" + rest.split("[[lots]]", 1)[1]
        text = head + "".join(f'[[gates]]\nid = "{g}"\n' for g in gates) + "\n" + lots
    if window_now:
        now = datetime.now(UTC).replace(microsecond=0)
        text = re.sub(
            r"\[\[windows\]\][^\[]*",
            f"[[windows]]\nstart = {(now - timedelta(hours=1)).astimezone(KENT).isoformat()}\n"
            f"end = {(now + timedelta(hours=3)).astimezone(KENT).isoformat()}\n\n",
            text,
            count=1,
        )
    if windows is not None:
        block = "".join(f"[[windows]]\nstart = {s}\nend = {e}\n\n" for s, e in windows)
        text = re.sub(r"\[\[windows\]\].*?end = [^\n]+\n", block, text, count=1, flags=re.S)
    text = re.sub(r"security_guards = \d+", f"security_guards = {security_guards}", text)
    if overnight:
        text = text.replace("overnight = false", "overnight = true").replace(
            "housing_declared = false", "housing_declared = true"
        )
    if not food_served:
        text = text.replace("food_served = true", "food_served = false")
    text += (
        "[alerting]\n"
        f"pending_s = {pending_s}\nclear_s = {clear_s}\nstale_after_s = {stale_after_s}\n"
    )
    if hold_at is not None:
        text += f"hold_at = {hold_at}\n"
    if resume_below is not None:
        text += f"resume_below = {resume_below}\n"
    if signing is not None:
        text += f'\n[signing]\nkeys_file = "{signing}"\n'
    return text


def write_permit(tmp_path: Path, *, name: str = "permit.toml", **changes: Any) -> Path:
    """Write :func:`permit_text` with ``changes`` to ``tmp_path / name``; its path.

    The one way tests write a permit: a suite with its own usual changes binds them
    once (``functools.partial``) and a test overrides any of them by keyword.
    """
    path = tmp_path / name
    path.write_text(permit_text(**changes))
    return path


def whole_topic(topic: str) -> str:
    """``topic``, refused unless it is a whole ``kent/…`` topic (built with :data:`TOPICS`).

    The helpers add no prefix, so a test cannot spell a topic by hand and miss a change
    of the topic tree (docs/protocol.md); a deliberately foreign topic is still whole.
    """
    if not topic.startswith(f"{TOPIC_ROOT}/"):
        raise ValueError(f"{topic!r} is not a whole topic: build it with TOPICS")
    return topic


def wait_until(
    predicate: Callable[[], Any],
    timeout: float,
    what: str | Callable[[], str],
    *,
    every: float = 0.05,
    cond: threading.Condition | None = None,
) -> Any:
    """Poll ``predicate`` until it returns something true, and return that; fail naming ``what``.

    The one way the tests wait: bounded, and loud on timeout (``what`` may be a function,
    to say what was seen instead). With ``cond`` the check runs holding that condition and
    waits on it, so a subscriber's callback that notifies it wakes the check at once.
    """
    deadline = time.monotonic() + timeout
    with cond if cond is not None else contextlib.nullcontext():
        while True:
            value = predicate()
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                said = what() if callable(what) else what
                raise AssertionError(f"timed out after {timeout:g} s waiting for {said}")
            if cond is not None:
                cond.wait(min(remaining, every))
            else:
                time.sleep(min(remaining, every))


async def wait_until_async(
    predicate: Callable[[], Any],
    within: float,
    what: str,
    *,
    every: float = 0.05,
    pause: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> Any:
    """:func:`wait_until` for a test on an event loop: it pauses instead of blocking."""
    deadline = time.monotonic() + within
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within:g} s waiting for {what}")
        await pause(every)
    return value


async def until(
    pilot: Pilot[Any], check: Callable[[], bool], within: float = 10.0, what: str = "the app"
) -> None:
    """Let a Textual app run until ``check()`` holds; fail after ``within`` seconds."""
    await wait_until_async(check, within, what, pause=pilot.pause)


class Watcher:
    """A real subscriber to everything under the event's prefix, keeping the latest of each.

    It also keeps every status and every aggregator availability it saw, in order.
    """

    def __init__(self, broker: MosquittoBroker) -> None:
        self.latest: dict[str, bytes] = {}
        self.statuses: list[dict[str, Any]] = []
        self.availability: list[bytes] = []
        self._cond = threading.Condition()
        subscribed = threading.Event()
        self.client = make_client(parse_broker_url(broker.url))
        self.client.on_message = self._on_message
        self.client.on_connect = lambda c, *a: c.subscribe(TOPICS.everything, qos=1)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        if not subscribed.wait(10):
            raise TimeoutError("the watcher could not subscribe")

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        with self._cond:
            self.latest[msg.topic] = msg.payload
            if msg.topic == TOPICS.status:
                self.statuses.append(json.loads(msg.payload))
            elif msg.topic == TOPICS.aggregator_availability:
                self.availability.append(msg.payload)
            self._cond.notify_all()

    def wait_for(
        self, topic: str, predicate: Callable[[bytes], bool] = bool, timeout: float = 15.0
    ) -> bytes:
        """The latest payload on ``topic`` once it satisfies ``predicate`` (bounded wait)."""

        def seen() -> tuple[bytes] | None:  # a 1-tuple, so an empty payload counts as seen
            value = self.latest.get(topic)
            return (value,) if value is not None and predicate(value) else None

        (payload,) = wait_until(
            seen,
            timeout,
            lambda: f"the wanted value on {topic}; last {self.latest.get(topic)!r}",
            every=1.0,
            cond=self._cond,
        )
        return payload  # type: ignore[no-any-return]

    def status(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 15.0
    ) -> dict[str, Any]:
        raw = self.wait_for(TOPICS.status, lambda b: predicate(json.loads(b)), timeout)
        return json.loads(raw)

    def alert(
        self, alert_id: str, predicate: Callable[[dict[str, Any]], bool] = bool
    ) -> dict[str, Any]:
        raw = self.wait_for(TOPICS.alert(alert_id), lambda b: predicate(json.loads(b)))
        return json.loads(raw)

    def alerts(self) -> dict[str, dict[str, Any]]:
        """Every alert seen so far, in its latest state, by id."""
        with self._cond:
            return {
                ref.id: json.loads(raw)
                for topic, raw in self.latest.items()
                if isinstance(ref := TOPICS.parse(topic), TopicRef) and ref.kind == "alert" and raw
            }

    def forget(self, topic: str) -> None:
        """Drop what was seen on ``topic``, to wait for its next value."""
        with self._cond:
            self.latest.pop(topic, None)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class Publisher:
    """One real QoS 1 client (so the broker keeps the order), remembering every publish.

    Args:
        broker: the test's broker.
        inflight: how many messages may await their PUBACK at once.
        wait: whether :meth:`send` waits for each PUBACK by default.
    """

    def __init__(self, broker: MosquittoBroker, inflight: int = 1000, wait: bool = True) -> None:
        self.client = make_client(parse_broker_url(broker.url))
        self.client.max_inflight_messages_set(inflight)
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        self.wait = wait
        self.sent: list[tuple[str, bytes]] = []
        self.infos: list[mqtt.MQTTMessageInfo] = []

    def send(self, topic: str, payload: bytes | str, wait: bool | None = None) -> None:
        """Publish ``payload`` (from :mod:`wire_support`, or a test's own malformed bytes)
        at QoS 1 to ``topic``, a whole topic (:func:`whole_topic`)."""
        data = payload.encode() if isinstance(payload, str) else payload
        full = whole_topic(topic)
        info = self.client.publish(full, data, qos=1)
        self.sent.append((full, data))
        self.infos.append(info)
        if self.wait if wait is None else wait:
            info.wait_for_publish(timeout=10)

    def all_acknowledged(self, timeout: float = 30.0) -> bool:
        """Wait (bounded) for the broker's PUBACK of everything sent."""
        deadline = time.monotonic() + timeout
        for info in self.infos:
            info.wait_for_publish(timeout=max(0.01, deadline - time.monotonic()))
        return all(info.is_published() for info in self.infos)

    def gate(self, gate: str, seq: int, at: float, in_total: int, out_total: int) -> None:
        payload = wire_support.gate_count(seq, ts(at), in_total, out_total)
        self.send(TOPICS.gate_count(gate), payload)

    def lot(self, lot: str, seq: int, at: float, occupied: int) -> None:
        self.send(TOPICS.lot_occupancy(lot), wire_support.lot_occupancy(seq, ts(at), occupied))

    def badge(self, seq: int, at: float, badge: str, role: str, action: str = "on") -> None:
        payload = wire_support.badge(seq, ts(at), badge, role, action)
        self.send(TOPICS.staff_badge("first-aid"), payload)

    def mark(self, who: str, item: str, result: str, at: float, note: str = "") -> None:
        """An inspector's checklist marking (permit:C, D, F)."""
        payload = wire_support.inspection(ts(at), item, result, note)
        self.send(TOPICS.inspector(who, "inspection"), payload)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
