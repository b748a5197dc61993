"""``kent-ops simulate``: a scenario's messages published to a broker at ``--speed``.

The messages come from :func:`sensors.scenario.day`; this module only paces them
against the wall clock (simulated time runs ``speed`` times faster) and publishes them
over one connection, QoS 1, retained where the device would retain. Payload ``ts`` is
simulated time, so an aggregator run with ``--clock sensor`` sees the day as it would
have happened. Ctrl-C (or SIGTERM) stops cleanly after the messages already sent are
acknowledged, and still prints the summary line.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path

import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client, on_connack
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit
from sensors.floor import SimMessage
from sensors.scenario import Scenario, ScenarioError, generate, load_scenario

__all__ = ["run_simulation"]

CONNECT_TIMEOUT_S = 10.0
FINAL_ACK_TIMEOUT_S = 30.0
PROGRESS_EVERY_S = 0.25

Progress = Callable[[int, datetime], None]
"""Called with (messages published so far, simulated time now), a few times a second."""


class _Publisher:
    """One paho connection that counts the acknowledgements of what it publishes."""

    def __init__(self, address: BrokerAddress, client_id: str, ca_file: str | None) -> None:
        self.address = address
        self.sent = 0
        self.acked = 0
        self._cond = threading.Condition()
        self._connected = threading.Event()
        self._refused: str | None = None
        self.client = make_client(address, client_id, ca_file=ca_file)
        on_connack(self.client, lambda c, flags: self._connected.set(), self._on_refused)
        self.client.on_publish = self._on_publish

    def connect(self, timeout: float) -> None:
        try:
            self.client.connect(self.address.host, self.address.port, keepalive=30)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise UsageError(f"cannot reach the broker at {self.address.url}: {reason}") from None
        self.client.loop_start()
        deadline = time.monotonic() + timeout
        while not self._connected.wait(0.05):
            if self._refused or time.monotonic() > deadline:
                self.close(0)
                why = self._refused or f"no answer within {timeout:g} s"
                raise UsageError(f"the broker at {self.address.url} refused us: {why}")

    def publish(self, topic: str, payload: bytes, retain: bool) -> None:
        with self._cond:
            self.sent += 1
        self.client.publish(topic, payload, qos=1, retain=retain)

    def wait_acked(self, timeout: float) -> int:
        """Wait until everything sent is acknowledged or ``timeout`` passes; the ack count."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.acked < self.sent:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self.acked

    def close(self, timeout: float) -> int:
        acked = self.wait_acked(timeout)
        self.client.disconnect()
        self.client.loop_stop()
        return acked

    def _on_refused(self, reason: mqtt.ReasonCode) -> None:
        self._refused = str(reason)

    def _on_publish(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reason_code: mqtt.ReasonCode,
        properties: mqtt.Properties,
    ) -> None:
        with self._cond:
            self.acked += 1
            self._cond.notify_all()


def run_simulation(
    permit: Permit,
    scenario: str | Path | Scenario,
    address: BrokerAddress,
    *,
    speed: float,
    seed: int,
    start: datetime | None = None,
    duration: float | None = None,
    stop: threading.Event | None = None,
    ca_file: str | None = None,
    on_progress: Progress | None = None,
    keys: Mapping[str, bytes] | None = None,
    rewrite: Callable[[Iterable[SimMessage]], Iterable[SimMessage]] | None = None,
) -> int:
    """Publish a scenario's messages at ``speed`` times real time; the number acknowledged.

    Args:
        permit: the permit whose gates, lots and stations are simulated.
        scenario: a built-in name (``festival``, ``quiet``, ``faults``), a scenario
            file's path, or a loaded :class:`~sensors.scenario.file.Scenario`.
        address: the broker.
        speed: simulated seconds per wall-clock second.
        seed: the same seed publishes the same messages.
        start: the scenario's 0:00 (default: the permit's first window opens).
        duration: stop after this many simulated seconds.
        stop: set it (from another thread) to stop early; returns normally.
        ca_file: CA certificate for ``mqtts://`` brokers.
        on_progress: called a few times a second with (published, simulated time).
        keys: HMAC keys by sensor id, to sign payloads (default: the permit's).
        rewrite: turns the scenario's messages into others before they are published
            (the demo's LoRaWAN devices, :mod:`sensors.lorawan`).

    Raises:
        UsageError: the scenario is invalid or the broker cannot be reached.
    """
    if speed <= 0:
        raise UsageError("--speed must be more than 0")
    if not isinstance(scenario, Scenario):
        try:
            scenario = load_scenario(scenario)
        except ScenarioError as exc:
            raise UsageError(str(exc)) from None
    stop = stop or threading.Event()
    try:
        messages = generate(permit, scenario, seed, start, duration=duration, keys=keys)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if rewrite is not None:
        messages = iter(rewrite(messages))
    pub = _Publisher(address, f"kent-sim-{permit.event_id}-{os.getpid()}", ca_file)
    pub.connect(CONNECT_TIMEOUT_S)
    wall0 = time.monotonic()
    sim0: datetime | None = None
    now: datetime | None = None
    last_report = 0.0
    try:
        for m in messages:
            if sim0 is None:
                sim0 = m.at
            delay = wall0 + (m.at - sim0).total_seconds() / speed - time.monotonic()
            if (delay > 0.001 and stop.wait(delay)) or stop.is_set():
                break
            pub.publish(m.topic, m.payload, m.retain)
            now = m.at
            if on_progress is not None and time.monotonic() - last_report >= PROGRESS_EVERY_S:
                last_report = time.monotonic()
                on_progress(pub.acked, now)
    finally:
        acked = pub.close(5.0 if stop.is_set() else FINAL_ACK_TIMEOUT_S)
    if on_progress is not None and now is not None:
        on_progress(acked, now)
    return acked
