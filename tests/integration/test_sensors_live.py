"""Sensors and the simulator against a real Mosquitto, heard by a real paho subscriber."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from live_support import wait_until

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics
from sensors.gate_counter import GateCounter
from sensors.scenario import generate
from sensors.simulator import run_simulation

pytestmark = pytest.mark.integration

EVENT = "kent-summer-fest-2027"
TOPICS = Topics(EVENT)
NORTH = TOPICS.gate_count("north")
NORTH_AVAIL = TOPICS.availability("north")

Received = tuple[str, bytes, bool]


class Listener:
    """A paho subscriber to everything under the event that keeps what it hears."""

    def __init__(self, broker: MosquittoBroker, client_id: str = "") -> None:
        self.messages: list[Received] = []
        self._cond = threading.Condition()
        self._subscribed = threading.Event()
        persistent = bool(client_id)
        self.client = make_client(
            parse_broker_url(broker.url), client_id, clean_start=not persistent
        )
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        assert self._subscribed.wait(10), "the listener never subscribed"

    def _on_connect(self, client: mqtt.Client, *args: object) -> None:
        client.subscribe(TOPICS.everything, qos=1)

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        with self._cond:
            self.messages.append((msg.topic, msg.payload, bool(msg.retain)))
            self._cond.notify_all()

    def wait_for(
        self, done: Callable[[list[Received]], bool], timeout: float = 15.0
    ) -> list[Received]:
        wait_until(
            lambda: done(self.messages),
            timeout,
            lambda: f"the messages wanted; heard {len(self.messages)}",
            every=1.0,
            cond=self._cond,
        )
        with self._cond:
            return list(self.messages)

    def readings(self, topic: str) -> list[dict]:
        with self._cond:
            return [json.loads(p) for t, p, _ in self.messages if t == topic]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def listener(broker: MosquittoBroker) -> Iterator[Listener]:
    heard = Listener(broker)
    yield heard
    heard.close()


def has_reading(topic: str, **fields: int) -> Callable[[list[Received]], bool]:
    def done(messages: list[Received]) -> bool:
        return any(
            t == topic and all(json.loads(p).get(k) == v for k, v in fields.items())
            for t, p, _ in messages
            if not t.endswith("/availability")
        )

    return done


@pytest.mark.timeout(30)
def test_a_subscriber_hears_a_gate_counter_with_rising_seq(
    broker: MosquittoBroker, listener: Listener
) -> None:
    counter = GateCounter(EVENT, "north")
    link = counter.connect(parse_broker_url(broker.url))
    assert link.wait_online(10)
    for _ in range(5):
        counter.count(entered=2, exited=1)
    counter.close()
    listener.wait_for(lambda ms: (NORTH_AVAIL, b"offline", False) in ms)
    readings = listener.readings(NORTH)
    assert [r["seq"] for r in readings] == [1, 2, 3, 4, 5, 6]
    assert [(r["in_total"], r["out_total"]) for r in readings][-1] == (10, 5)
    # Availability is retained: a newcomer learns the counter said goodbye.
    newcomer = Listener(broker)
    try:
        heard = newcomer.wait_for(lambda ms: any(t == NORTH_AVAIL for t, _, _ in ms))
        assert (NORTH_AVAIL, b"offline", True) in heard
    finally:
        newcomer.close()


@pytest.mark.timeout(60)
def test_a_gate_counter_keeps_counting_through_a_broker_restart(broker: MosquittoBroker) -> None:
    listener = Listener(broker, client_id="sensors-restart-listener")  # persistent session
    counter = GateCounter(EVENT, "north")
    link = counter.connect(parse_broker_url(broker.url))
    try:
        assert link.wait_online(10)
        counter.count(entered=10)
        listener.wait_for(has_reading(NORTH, in_total=10))
        before = max(r["seq"] for r in listener.readings(NORTH))

        broker.stop()
        wait_until(lambda: not link.online, 10, "the counter to notice the broker is gone")
        assert counter.count(entered=5, exited=2) is False
        assert counter.count(entered=1) is False
        broker.start()

        listener.wait_for(has_reading(NORTH, in_total=16, out_total=2), timeout=40)
        after = [r for r in listener.readings(NORTH) if r["seq"] > before]
        assert after[0]["seq"] == before + 1  # seq carries on
        assert (after[0]["in_total"], after[0]["out_total"]) == (16, 2)  # one, coalesced
    finally:
        counter.close()
        listener.close()


def run_device(module: str, permit: Path, sensor: str, url: str, lines: str, *extra: str):
    return subprocess.run(
        [sys.executable, "-m", module, "--permit", str(permit), "--id", sensor,
         "--broker", url, *extra],
        input=lines, capture_output=True, text=True, timeout=30,
    )  # fmt: skip


@pytest.mark.timeout(60)
def test_the_gate_counter_command_counts_stdin_and_resumes_from_its_state(
    broker: MosquittoBroker, listener: Listener, example_permit_path: Path, tmp_path: Path
) -> None:
    state = tmp_path / "north.json"
    done = run_device(
        "sensors.gate_counter", example_permit_path, "north", broker.url,
        "in\nin 3\nout\nsideways\n", "--state", str(state),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "line 4 ignored" in done.stderr
    listener.wait_for(has_reading(NORTH, in_total=4, out_total=1))
    first_run = listener.readings(NORTH)
    assert [r["seq"] for r in first_run] == list(range(1, len(first_run) + 1))

    again = run_device(
        "sensors.gate_counter", example_permit_path, "north", broker.url, "in\n",
        "--state", str(state),
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    listener.wait_for(has_reading(NORTH, in_total=5, out_total=1))
    second_run = listener.readings(NORTH)[len(first_run) :]
    assert second_run[0]["seq"] == first_run[-1]["seq"] + 1  # the reboot kept seq...
    assert second_run[0]["in_total"] >= 4  # ...and the totals
    heard = listener.wait_for(lambda ms: ms[-1] == (NORTH_AVAIL, b"offline", False))
    assert heard.count((NORTH_AVAIL, b"online", False)) == 2


@pytest.mark.timeout(60)
def test_lot_sensor_and_badge_reader_commands_publish_their_readings(
    broker: MosquittoBroker, listener: Listener, example_permit_path: Path
) -> None:
    lot = run_device(
        "sensors.lot_sensor", example_permit_path, "lot-a", broker.url, "occupied 312\n+1\n"
    )
    badge = run_device(
        "sensors.badge_reader", example_permit_path, "first-aid", broker.url,
        "RN-0042 nurse on\n",
    )  # fmt: skip
    assert (lot.returncode, badge.returncode) == (0, 0), lot.stderr + badge.stderr
    listener.wait_for(has_reading(TOPICS.lot_occupancy("lot-a"), occupied=313))
    listener.wait_for(lambda ms: any(t.endswith("/staff/first-aid/badge") for t, _, _ in ms))
    [scan] = listener.readings(TOPICS.staff_badge("first-aid"))
    assert {k: scan[k] for k in ("badge", "role", "action")} == {
        "badge": "RN-0042", "role": "nurse", "action": "on"
    }  # fmt: skip
    # The reader also re-states its roster when it connects, on the same seq: whichever
    # went first, its numbers rise by one from 1, with none skipped.
    rosters = listener.readings(TOPICS.staff_roster("first-aid"))
    assert sorted(m["seq"] for m in [scan, *rosters]) == list(range(1, len(rosters) + 2))


def test_a_device_command_refuses_a_sensor_the_permit_does_not_list(
    broker: MosquittoBroker, example_permit_path: Path
) -> None:
    done = run_device("sensors.gate_counter", example_permit_path, "lot-a", broker.url, "")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"python -m sensors.gate_counter: 'lot-a' is a lot in {example_permit_path}, not a gate."
    ]


@pytest.mark.timeout(60)
def test_simulate_publishes_what_the_generator_yields(
    broker: MosquittoBroker, listener: Listener, example_permit: Permit, example_permit_path: Path
) -> None:
    expected = [
        (m.topic, m.payload) for m in generate(example_permit, "quiet", seed=4, duration=600)
    ]
    done = subprocess.run(
        ["kent-ops", "simulate", "--permit", str(example_permit_path), "--scenario", "quiet",
         "--speed", "5000", "--seed", "4", "--simulated-duration", "600", "--broker", broker.url],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"done: scenario quiet (seed 4): {len(expected):,} messages")
    heard = listener.wait_for(lambda ms: len(ms) >= len(expected))
    assert [(t, p) for t, p, _ in heard] == expected


@pytest.mark.timeout(60)
def test_ctrl_c_stops_a_simulation_cleanly(
    broker: MosquittoBroker, listener: Listener, example_permit_path: Path
) -> None:
    proc = subprocess.Popen(
        ["kent-ops", "simulate", "--permit", str(example_permit_path), "--scenario", "festival",
         "--speed", "10", "--broker", broker.url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        listener.wait_for(lambda ms: len(ms) >= 3, timeout=30)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.startswith("stopped: scenario festival (seed 1): ")


@pytest.mark.timeout(30)
def test_run_simulation_returns_when_told_to_stop(
    broker: MosquittoBroker, example_permit: Permit
) -> None:
    stop = threading.Event()
    progress: list[int] = []

    def on_progress(published: int, at: object) -> None:
        progress.append(published)
        if published >= 5:
            stop.set()

    published = run_simulation(
        example_permit, "festival", parse_broker_url(broker.url),
        speed=20, seed=1, stop=stop, on_progress=on_progress,
    )  # fmt: skip
    assert stop.is_set()
    assert published >= 5
    assert progress[-1] == published


@pytest.mark.timeout(30)
def test_an_idle_gate_counter_command_heartbeats(
    broker: MosquittoBroker, listener: Listener, example_permit_path: Path
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "sensors.gate_counter", "--permit", str(example_permit_path),
         "--id", "north", "--broker", broker.url, "--heartbeat", "1"],
        stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        listener.wait_for(lambda ms: sum(t == NORTH for t, _, _ in ms) >= 3, timeout=20)
        assert proc.stdin is not None
        proc.stdin.close()  # end of input: the device says offline and exits
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    beats = listener.readings(NORTH)
    assert [b["seq"] for b in beats[:3]] == [1, 2, 3]
    assert {(b["in_total"], b["out_total"]) for b in beats} == {(0, 0)}
    listener.wait_for(lambda ms: ms[-1] == (NORTH_AVAIL, b"offline", False))
