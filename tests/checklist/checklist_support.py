"""Shared pieces of the checklist tests: a permit copy, real MQTT clients, a real aggregator.

Everything is real: the permit file is written to ``tmp_path`` and loaded, the broker
is the ``broker`` fixture's Mosquitto, the clients are paho's, and the aggregator is
:class:`kent_ops.aggregator.Aggregator` running in its own threads.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import paho.mqtt.client as mqtt

from kent_ops.aggregator import Aggregator, Timing
from kent_ops.broker import MosquittoBroker
from kent_ops.engine import Engine
from kent_ops.mqtt import make_client, parse_broker_url
from kent_ops.permit import Permit

ROOT = Path(__file__).resolve().parents[2]
EVENT = "kent-summer-fest-2027"
P = f"kent/{EVENT}"
T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)  # 10:00 in Kent, when the window opens
WINDOW_END = datetime(2027, 7, 5, 3, 30, tzinfo=UTC)  # 23:30 in Kent

FAST = Timing(heartbeat_s=1.0, snapshot_s=1.0, checkpoint_s=2.0, tick_s=0.2)


def ts(seconds: float, start: datetime = T0) -> str:
    """``start`` plus ``seconds`` as a payload time (UTC, ``Z``)."""
    return (start + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def write_permit(
    tmp_path: Path,
    *,
    overnight: bool = False,
    food_served: bool = True,
    pending_s: float = 2,
    clear_s: float = 3,
) -> Path:
    """The example permit with quick alerting, no security roster, and chosen facilities."""
    text = (ROOT / "examples" / "permit.toml").read_text()
    text = text.split("[alerting]")[0]
    text = re.sub(r"security_guards = \d+", "security_guards = 0", text)
    if overnight:
        text = text.replace("overnight = false", "overnight = true").replace(
            "housing_declared = false", "housing_declared = true"
        )
    if not food_served:
        text = text.replace("food_served = true", "food_served = false")
    text += f"[alerting]\npending_s = {pending_s}\nclear_s = {clear_s}\nstale_after_s = 3600\n"
    path = tmp_path / "permit.toml"
    path.write_text(text)
    return path


def engine_status(
    permit: Permit, marks: list[tuple[str, str, str, str, float]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A real engine's status and alerts after ``(who, item, result, note, seconds)`` marks."""
    engine = Engine(permit, clock="sensor")
    for who, item, result, note, seconds in marks:
        body = {"ts": ts(seconds), "item": item, "result": result, "note": note}
        at = T0 + timedelta(seconds=seconds)
        r = engine.feed(f"{P}/inspector/{who}/inspection", json.dumps(body).encode(), at)
        assert r.accepted, r.reason
    engine.collect_changes()
    return engine.status(), list(engine.alerts.values())


class Watcher:
    """A real subscriber to everything under the event's prefix, keeping the latest of each."""

    def __init__(self, broker: MosquittoBroker) -> None:
        self.latest: dict[str, bytes] = {}
        self._cond = threading.Condition()
        subscribed = threading.Event()
        self.client = make_client(parse_broker_url(broker.url))
        self.client.on_message = self._on_message
        self.client.on_connect = lambda c, *a: c.subscribe(f"{P}/#", qos=1)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        if not subscribed.wait(10):
            raise TimeoutError("the watcher could not subscribe")

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        with self._cond:
            self.latest[msg.topic] = msg.payload
            self._cond.notify_all()

    def wait_for(
        self, topic: str, predicate: Callable[[bytes], bool] = bool, timeout: float = 15.0
    ) -> bytes:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = self.latest.get(topic)
                if value is not None and predicate(value):
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"{topic}: wanted value not seen; last {value!r}")
                self._cond.wait(remaining)

    def status(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 15.0
    ) -> dict[str, Any]:
        raw = self.wait_for(f"{P}/status", lambda b: predicate(json.loads(b)), timeout)
        return json.loads(raw)

    def forget(self, topic: str) -> None:
        """Drop what was seen on ``topic``, to wait for its next value."""
        with self._cond:
            self.latest.pop(topic, None)

    def alerts(self) -> dict[str, dict[str, Any]]:
        with self._cond:
            return {
                topic.rsplit("/", 1)[1]: json.loads(raw)
                for topic, raw in self.latest.items()
                if topic.startswith(f"{P}/alerts/") and raw
            }

    def alert(
        self, alert_id: str, predicate: Callable[[dict[str, Any]], bool] = bool
    ) -> dict[str, Any]:
        raw = self.wait_for(f"{P}/alerts/{alert_id}", lambda b: predicate(json.loads(b)))
        return json.loads(raw)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class Publisher:
    """One real QoS 1 client, so the broker keeps the messages' order."""

    def __init__(self, broker: MosquittoBroker) -> None:
        self.client = make_client(parse_broker_url(broker.url))
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def send(self, topic: str, payload: dict[str, Any]) -> None:
        info = self.client.publish(f"{P}/{topic}", json.dumps(payload).encode(), qos=1)
        info.wait_for_publish(timeout=10)

    def mark(self, who: str, item: str, result: str, seconds: float, note: str = "") -> None:
        body: dict[str, Any] = {"ts": ts(seconds), "item": item, "result": result}
        if note:
            body["note"] = note
        self.send(f"inspector/{who}/inspection", body)

    def gate(self, gate: str, seq: int, seconds: float, in_total: int, out_total: int) -> None:
        self.send(
            f"gate/{gate}/count",
            {"seq": seq, "ts": ts(seconds), "in_total": in_total, "out_total": out_total},
        )

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@contextmanager
def running_aggregator(
    permit: Permit,
    evidence: Path,
    broker: MosquittoBroker,
    watcher: Watcher,
    clock: Literal["wall", "sensor"] = "sensor",
) -> Iterator[Aggregator]:
    """A real aggregator, serving once it says it is online; stopped cleanly after."""
    watcher.forget(f"{P}/aggregator/availability")
    agg = Aggregator(permit, evidence, parse_broker_url(broker.url), clock=clock, timing=FAST)
    agg.start()
    try:
        watcher.wait_for(f"{P}/aggregator/availability", lambda b: b == b"online")
        yield agg
    finally:
        agg.stop()
        assert agg.wait(20), "the aggregator did not stop"
    assert agg.failure is None
