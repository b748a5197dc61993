"""The aggregator service (``kent-ops run``): MQTT in, evidence log, engine, MQTT out.

It runs for days on a field laptop with a flaky network, and what it records must
stand up at a hearing, so its loop is built around one promise: a message is
acknowledged to the broker (and anything it causes is published) only after the
evidence batch holding it is committed to disk. A SIGKILL at any moment then loses
nothing the broker was told is safe: the broker redelivers the rest, and a restart
replays the log through a fresh engine to stand exactly where it stood.

Three threads, each with one job:

- paho's network thread only moves bytes: ``on_message`` stamps the receive time and
  enqueues; it never touches the disk or the rules, so a slow disk cannot make the
  broker drop or back up anything at the socket;
- the worker thread owns the engine and the evidence log: it drains the queue in
  batches, feeds, appends, commits, then acknowledges and publishes, and keeps the
  timers (engine ticks, status heartbeat, snapshots, checkpoints);
- the caller's thread starts and stops it (``run_forever`` waits for SIGINT/SIGTERM).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

import msgspec
import paho.mqtt.client as mqtt

from kent_ops import __version__
from kent_ops.broker.client import BrokerAddress, make_client, parse_broker_url
from kent_ops.core import wire
from kent_ops.core.engine import Changes, Clock, Engine
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.rules import RULES
from kent_ops.core.wire import Topics, keys_for_permit
from kent_ops.evidence.log import EvidenceLog, EvidenceWriteError, json_bytes
from kent_ops.evidence.replay import Replayed, replay

__all__ = ["STORAGE_ALERT_PREFIX", "Aggregator", "Timing", "cli_run", "permit_sha256"]

log = logging.getLogger("aggregator")

# One queued item: (topic, payload, received_at, connection generation, mid).
# ``topic`` None marks the service's own event (payload: a dict for a "system" record).
_Item = tuple[str | None, Any, datetime, int, int]
_WAKE: _Item = (None, None, datetime.min.replace(tzinfo=UTC), -1, 0)

STORAGE_ALERT_PREFIX = "S-"
"""Ids of the service's own ``evidence-storage`` alerts: ``S-0001``, ``S-0002``… The
engine numbers its alerts ``A-…``, so the two can never collide."""
STORAGE_RULE = "evidence-storage"


@dataclass(frozen=True, slots=True)
class Timing:
    """The service's rhythm. Defaults meet SPEC 3; tests and benchmarks may shorten them.

    A batch closes at ``batch_max`` messages or ``batch_window_s`` after its first one:
    long enough to amortise the fsync of a commit, short enough to keep publish→status
    latency well under 200 ms.
    """

    batch_max: int = 500
    batch_window_s: float = 0.01
    status_min_interval_s: float = 0.1
    heartbeat_s: float = 5.0
    snapshot_s: float = 10.0
    checkpoint_s: float = 60.0
    tick_s: float = 0.5
    retry_first_s: float = 0.5
    retry_max_s: float = 10.0


def permit_sha256(permit: Permit) -> str:
    """The SHA-256 of the permit file as loaded, so the log names the permit it enforced."""
    if permit.source_path is not None and Path(permit.source_path).is_file():
        return hashlib.sha256(Path(permit.source_path).read_bytes()).hexdigest()
    return hashlib.sha256(json.dumps(permit.raw, sort_keys=True, default=str).encode()).hexdigest()


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _probe_folder(folder: Path) -> str | None:
    """Write a little beside the log and say what the system refuses, if it does.

    SQLite reports a read-only file system as a bare "disk I/O error"; the operator
    needs the cause ("read-only file system", "no space left on device") to act.
    """
    probe = folder / f".kent-ops-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, bytes(4096))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"{folder}: {(exc.strerror or str(exc)).lower()}"
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return None


class Aggregator:
    """The live service for one event; usable in-process (demo, tests) or via ``cli_run``.

    Args:
        permit: the validated permit.
        evidence_path: the event's evidence log; created, or verified and continued.
        address: the broker.
        clock: ``wall`` (receive time) or ``sensor`` (payload ``ts``).
        ca_file: CA certificate for ``mqtts://`` brokers.
        timing: intervals; the defaults are SPEC 3's.
        now: the wall clock (UTC); replaceable for tests.

    Raises:
        UsageError: the permit's ``[signing]`` keys file cannot be used (one sentence).
    """

    def __init__(
        self,
        permit: Permit,
        evidence_path: str | Path,
        address: BrokerAddress,
        clock: Clock = "wall",
        ca_file: str | None = None,
        *,
        timing: Timing | None = None,
        now: Callable[[], datetime] = _utcnow,
    ) -> None:
        if clock not in ("wall", "sensor"):
            raise ValueError(f"clock must be 'wall' or 'sensor', not {clock!r}")
        self.permit = permit
        self.evidence_path = Path(evidence_path)
        self.address = address
        self.clock: Clock = clock
        self.ca_file = ca_file
        self.timing = timing or Timing()
        self._now = now
        self.topics = Topics(permit.event_id)
        self.client_id = f"kent-ops-aggregator-{permit.event_id}"
        self.permit_sha256 = permit_sha256(permit)
        try:
            self.keys: Mapping[str, bytes] | None = keys_for_permit(permit.signing_keys_file)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._backlog: list[_Item] = []
        self._accepting = True
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self.connected = threading.Event()
        """Set while connected with every input subscribed (after the SUBACK)."""
        self._ack_lock = threading.Lock()
        self._generation = 0
        self._stamp_lock = threading.Lock()
        self._floor = datetime.min.replace(tzinfo=UTC)
        self._worker: threading.Thread | None = None
        self._client: mqtt.Client | None = None
        self._log: EvidenceLog | None = None
        self._engine: Engine | None = None
        self.failure: BaseException | None = None
        self.unrecorded = 0
        """Messages held unrecorded (and unacknowledged) when the service stopped."""

        # Worker-thread state.
        self._status_dirty = True
        self._last_status = -1e9
        self._last_snapshot = -1e9
        self._last_checkpoint = -1e9
        self._last_tick = -1e9
        self._storage_error: str | None = None
        self._storage_failed_at: datetime | None = None
        self._retry_at = 0.0
        self._retry_delay = self.timing.retry_first_s
        self._give_up_at = 0.0
        self._recorded_clock: str | None = None
        self._storage_alerts = 0
        self._storage_alert: wire.Alert | None = None
        self._retained: dict[str, bytes] = {}
        self.published_status = 0

    # -- life cycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Open (verify) the log, rebuild the engine from it, then connect and serve.

        Raises EvidenceError / ChainBroken (from the log) before anything is connected.
        """
        self._log = EvidenceLog.open(
            self.evidence_path, event_id=self.permit.event_id, permit_sha256=self.permit_sha256
        )
        try:
            self._engine, replayed = self._rebuild()
            self._check_clock()
            count, head = self._log.head
            log.info(
                "evidence %s: %d records verified, head %s; %d messages replayed",
                self.evidence_path,
                count,
                head[:16],
                replayed,
            )
            self._client = self._make_client()
            # The engine's time starts (or resumes) here, with a status record at that
            # instant, so a replay of this log starts its engine at the same instant.
            now = self._record_time()
            changes = self.engine.collect_changes()  # matured while the service was down
            self._log.append_json(
                "system",
                now,
                {
                    "event": "started",
                    "version": __version__,
                    "clock": self.clock,
                    "client_id": self.client_id,
                    "broker": self.address.url,
                    "permit_sha256": self.permit_sha256,
                    "signed": self.keys is not None,
                    "replayed": replayed,
                },
            )
            self._append_changes(changes, now)
            self._log.append("status", now, payload=wire.encode(self.engine.status()))
            self._log.commit()
            self._last_snapshot = time.monotonic()
            self._republish_retained()  # queued by paho until connected
            self._publish_changes(changes)
        except BaseException:
            self._log.close()
            raise
        log.info("connecting to %s as %s", self.address.url, self.client_id)
        self._client.connect_async(self.address.host, self.address.port, keepalive=30)
        self._client.loop_start()
        self._worker = threading.Thread(target=self._work, name="aggregator-worker", daemon=True)
        self._worker.start()

    def stop(self) -> None:
        """Ask the service to stop: safe from a signal handler or another thread."""
        self._stopping.set()
        self._queue.put(_WAKE)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the service has stopped; True if it has."""
        return self._stopped.wait(timeout)

    def run_forever(self) -> None:
        """Start, serve until :meth:`stop`, and shut down cleanly."""
        self.start()
        while not self._stopped.wait(1.0):
            pass

    def __enter__(self) -> Aggregator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.wait(30)

    @property
    def engine(self) -> Engine:
        """The live engine; only the worker thread may touch it while running."""
        assert self._engine is not None
        return self._engine

    # -- replay ---------------------------------------------------------------------------

    def _check_clock(self) -> None:
        """A log is replayed with the clock it was recorded with; refuse to mix them."""
        recorded = self._recorded_clock
        if recorded is not None and recorded != self.clock:
            raise UsageError(
                f"{self.evidence_path} was recorded with --clock {recorded}; "
                f"continue it with --clock {recorded} or start a new evidence file"
            )

    def _rebuild(self) -> tuple[Engine, int]:
        """A fresh engine fed every committed message record: the state the log proves.

        Alerts and commands it produces were already logged, so they are collected and
        discarded; alert ids then continue where they were. The last logged state of
        each alert and gate command is kept for :meth:`_republish_retained`: a crash
        between a commit and its publish would otherwise leave the broker's retained
        copy one state behind for good.

        With the wall clock, the engine is also ticked to the time of every other record,
        except the service's own ``system`` records before the engine has any time (the
        same rule as :func:`kent_ops.evidence.replay.replay`). That reproduces the live engine
        exactly, because the live service keeps two promises (see :meth:`_record_time`):
        every such record's time is one its engine had reached, with every change up to
        it logged in the same commit; and no tick ever went past a message not yet fed.
        So the replay never ticks further than the live engine had logged, and whatever
        the live engine did after its last commit, the restarted one does again.
        """
        retained: dict[str, bytes] = {}

        def keep_retained(rec: Replayed, engine: Engine) -> None:
            if rec.kind == "alert":
                alert_id = json.loads(rec.payload).get("id")
                if isinstance(alert_id, str):
                    retained[self.topics.alert(alert_id)] = rec.payload
                if STORAGE_RULE.encode() in rec.payload:
                    self._note_storage_alert(rec.payload)
            elif rec.kind == "command":
                body = json.loads(rec.payload)
                command = msgspec.convert(body["command"], wire.GateCommand)
                retained[self.topics.gate_command(body["gate"])] = wire.encode(command)

        # The log was verified when it was opened; messages need no callback.
        result = replay(
            self.permit,
            self.evidence_path,
            clock=self.clock,
            on_record=keep_retained,
            on_message=lambda verdict, engine: False,
            verify=False,
        )
        self._recorded_clock = result.recorded_clock
        engine = result.engine
        replayed = result.messages
        engine.collect_changes()
        self._retained = retained
        return engine, replayed

    def _republish_retained(self) -> None:
        """Publish again the last logged state of every alert and gate command.

        The log is the truth: whatever a crashed run committed but had not yet
        published reaches the dashboards now (a repeat of a state they have is harmless).
        """
        client = self._client
        assert client is not None
        for topic, payload in self._retained.items():
            client.publish(topic, payload, qos=1, retain=True)
        if self._retained:
            log.info(
                "republished the last logged state of %d alerts and gate commands",
                len(self._retained),
            )
        self._retained = {}

    # -- the network thread ---------------------------------------------------------------

    def _make_client(self) -> mqtt.Client:
        try:
            client = make_client(
                self.address,
                self.client_id,
                clean_start=False,
                ca_file=self.ca_file,
                will_topic=self.topics.aggregator_availability,
                will_payload=b"offline",
                will_retain=True,
                manual_ack=True,
            )
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot set up the broker connection: {exc}") from None
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_subscribe = self._on_subscribe
        return client

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason_code: Any,
        properties: object,
    ) -> None:
        if reason_code.is_failure:
            log.error("broker %s refused the connection: %s", self.address.url, reason_code)
            return
        with self._ack_lock:
            self._generation += 1
        self._status_dirty = True  # a fresh status for whoever missed the last ones
        client.subscribe([(t, 1) for t in self.topics.inputs])
        client.publish(self.topics.aggregator_availability, b"online", qos=1, retain=True)
        log.info(
            "connected to %s (session %s)",
            self.address.url,
            "resumed" if flags.session_present else "new",
        )
        self._system_event(
            {
                "event": "broker-connected",
                "broker": self.address.url,
                "session_present": bool(flags.session_present),
            }
        )

    def _on_subscribe(
        self,
        client: mqtt.Client,
        userdata: object,
        mid: int,
        reason_codes: list[Any],
        properties: object,
    ) -> None:
        for topic, code in zip(self.topics.inputs, reason_codes, strict=False):
            if code.is_failure:
                log.error("broker %s refused the subscription to %s", self.address.url, topic)
        # Only now can a sensor's publish be sure to reach us: "connected" means this.
        self.connected.set()

    def _on_connect_fail(self, client: mqtt.Client, userdata: object) -> None:
        log.warning("cannot reach the broker at %s; retrying", self.address.url)

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: object,
        reason_code: Any,
        properties: object,
    ) -> None:
        # A new generation first: no acknowledgement meant for this connection may go out
        # on the next one, where its packet id could name a different message.
        with self._ack_lock:
            self._generation += 1
        was_connected = self.connected.is_set()
        self.connected.clear()
        if self._stopping.is_set() and not self._accepting:
            return
        if was_connected:
            log.warning("disconnected from %s (%s); reconnecting", self.address.url, reason_code)
            self._system_event(
                {
                    "event": "broker-disconnected",
                    "broker": self.address.url,
                    "reason": str(reason_code),
                }
            )

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        if not self._accepting:
            return  # not acknowledged: the broker keeps it for the next session
        try:
            topic = message.topic
        except UnicodeDecodeError:
            topic = bytes(message._topic).decode("utf-8", "replace")  # noqa: SLF001
        with self._stamp_lock:
            received_at = max(self._now(), self._floor)
            self._queue.put((topic, message.payload, received_at, self._generation, message.mid))

    def _system_event(self, details: dict[str, Any]) -> None:
        """Record the service's own event; from the network thread, via the queue."""
        with self._stamp_lock:
            self._queue.put((None, details, max(self._now(), self._floor), -1, 0))

    # -- the worker thread ----------------------------------------------------------------

    def _work(self) -> None:
        try:
            while True:
                stopping = self._stopping.is_set()
                if stopping and self._accepting:
                    self._accepting = False
                    self._give_up_at = time.monotonic() + self.timing.retry_max_s
                    log.info("stopping: taking no more messages, flushing")
                batch = self._take(0.0 if stopping else self._wait_time())
                if batch:
                    self._handle(batch)
                self._timers()
                if stopping and not batch and self._queue.empty() and not self._failing:
                    break
                if stopping and self._failing and time.monotonic() > self._give_up_at:
                    self.unrecorded = len(self._backlog)
                    log.error(
                        "stopping with %d messages not recorded; they were not acknowledged, "
                        "so the broker keeps them for the next start",
                        self.unrecorded,
                    )
                    break
            self._shutdown()
        except BaseException as exc:
            self.failure = exc
            log.exception("the aggregator failed: %s", exc)
            self._emergency_shutdown()
        finally:
            self._stopped.set()

    @property
    def _failing(self) -> bool:
        return self._storage_failed_at is not None

    def _wait_time(self) -> float:
        """How long the worker may sleep before a timer is due."""
        t = self.timing
        now = time.monotonic()
        due = [
            self._last_status + t.heartbeat_s,
            self._last_snapshot + t.snapshot_s,
            self._last_checkpoint + t.checkpoint_s,
        ]
        if self._status_dirty:
            due.append(self._last_status + t.status_min_interval_s)
        if self.clock == "wall":
            due.append(self._last_tick + t.tick_s)
        if self._failing:
            due.append(self._retry_at)
        return max(0.0, min(min(due) - now, 1.0))

    def _take(self, timeout: float) -> list[_Item]:
        """The next batch: ``batch_max`` items, or what arrives within the batch window."""
        t = self.timing
        if self._failing:
            # Keep the network thread's queue moving into the backlog; process nothing.
            time.sleep(min(timeout, 0.05))
            self._drain_into_backlog()
            return []
        if self._backlog:
            batch = self._backlog[: t.batch_max]
            del self._backlog[: t.batch_max]
            return batch
        q = self._queue
        try:
            first = q.get(timeout=timeout) if timeout > 0 else q.get_nowait()
        except queue.Empty:
            return []
        batch = [first] if first is not _WAKE else []
        deadline = time.monotonic() + t.batch_window_s
        while len(batch) < t.batch_max:
            try:
                item = q.get_nowait()
            except queue.Empty:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopping.is_set():
                    break
                try:
                    item = q.get(timeout=remaining)
                except queue.Empty:
                    break
            if item is not _WAKE:
                batch.append(item)
        return batch

    def _drain_into_backlog(self) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _WAKE:
                self._backlog.append(item)

    def _handle(self, batch: list[_Item]) -> None:
        """Feed, append, commit; then, and only then, acknowledge and publish."""
        evidence = self._log
        engine = self._engine
        assert evidence is not None
        assert engine is not None
        acks: list[tuple[int, int]] = []
        for item in batch:
            topic, payload, received_at, generation, mid = item
            if topic is None:
                if self.clock == "wall" and engine.now is not None:
                    engine.tick(received_at)  # a replay ticks here too
                evidence.append_json("system", received_at, payload)
                continue
            record_id = evidence.head[0] + 1
            r = engine.feed(topic, payload, received_at, record_id)
            record_id, digest = evidence.append(
                "message",
                received_at,
                topic=topic,
                payload=payload,
                accepted=r.accepted,
                reason=r.reason,
            )
            engine.note_record_hash(record_id, digest)
            if mid:
                acks.append((generation, mid))
        now = self._record_time()
        changes = engine.collect_changes()
        self._append_changes(changes, now)
        if not self._commit(batch):
            return
        self._ack(acks)
        self._publish_changes(changes)
        self._status_dirty = True
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "committed %d messages, %d alert changes; head %d",
                len(acks),
                len(changes.alerts),
                evidence.committed_head[0],
            )

    def _tick(self) -> datetime | None:
        """Wall clock: let the engine's time pass to now, unless messages are waiting.

        A tick never goes past a message received but not yet fed: receive stamps are
        taken under the same lock and never fall below the last tick. So every message
        is fed at its own receive time, and a replay that only feeds the log's messages
        reaches exactly the live state. Returns the tick's time, or None if skipped.
        """
        if self.clock != "wall":
            return None
        with self._stamp_lock:
            if self._backlog or not self._queue.empty():
                return None
            now = self._now()
            self._floor = now
        self.engine.tick(now)
        self._last_tick = time.monotonic()
        return now

    def _record_time(self) -> datetime:
        """The time of a record the service writes itself (alert, command, status, ...).

        Wall clock: a time the engine has reached, ticking it to now when no message
        waits, else the engine's own time; the caller logs the changes in the same
        commit. A replay ticks to this time (see :meth:`_rebuild`), so it must be one
        the live engine reached. Sensor clock: the wall time (the engine ignores it).
        """
        if self.clock != "wall":
            return self._now()
        ticked = self._tick()
        if ticked is not None:
            return ticked
        return self.engine.now or self._now()

    def _append_changes(self, changes: Changes, now: datetime) -> None:
        evidence = self._log
        assert evidence is not None
        for alert in changes.alerts:
            evidence.append("alert", now, payload=wire.encode(alert))
        for gate, command in changes.commands.items():
            body = {"gate": gate, "command": msgspec.to_builtins(command)}
            evidence.append("command", now, payload=json_bytes(body))

    def _commit(self, batch: list[_Item]) -> bool:
        """Commit the open batch; on a refusal, undo everything it did and keep its items."""
        evidence = self._log
        assert evidence is not None
        try:
            evidence.commit()
        except EvidenceWriteError as exc:
            evidence.rollback()
            self._backlog[0:0] = batch
            self._drain_into_backlog()
            self._storage_failed(exc)
            return False
        return True

    def _ack(self, acks: list[tuple[int, int]]) -> None:
        client = self._client
        assert client is not None
        with self._ack_lock:
            current = self._generation
            for generation, mid in acks:
                # An ack for a previous connection is dropped: the broker redelivers that
                # message, the engine sees a repeat, and the log records it again.
                if generation == current:
                    client.ack(mid, 1)

    def _publish_changes(self, changes: Changes) -> None:
        client = self._client
        assert client is not None
        for alert in changes.alerts:
            client.publish(self.topics.alert(alert.id), wire.encode(alert), qos=1, retain=True)
            log.info("alert %s %s %s: %s", alert.id, alert.rule, alert.state, alert.message)
        for gate, command in changes.commands.items():
            client.publish(self.topics.gate_command(gate), wire.encode(command), qos=1, retain=True)
        if changes.commands:
            first = next(iter(changes.commands.values()))
            log.info("gate command: %s", first.reason)

    # -- storage failures -------------------------------------------------------------------

    def _storage_failed(self, exc: EvidenceWriteError) -> None:
        """The disk refused a commit: hold every message unacknowledged, and retry.

        The engine had already taken the failed batch, so it is rebuilt from the log to
        match what is on disk; the batch is fed again once the disk takes writes.
        """
        first = self._storage_failed_at is None
        if first:
            self._storage_failed_at = self._now()
            self._retry_delay = self.timing.retry_first_s
        else:
            self._retry_delay = min(self._retry_delay * 2, self.timing.retry_max_s)
        cause = _probe_folder(self.evidence_path.parent)
        self._storage_error = f"{exc} ({cause})" if cause else str(exc)
        self._retry_at = time.monotonic() + self._retry_delay
        log.error(
            "EVIDENCE NOT WRITTEN: %s; %d messages held unacknowledged; retrying in %.1f s",
            self._storage_error,
            len(self._backlog),
            self._retry_delay,
        )
        if first:
            self._engine, _ = self._rebuild()
            self._retained = {}  # all published already: this rebuild only undoes the batch
            self._storage_state_changed(failing=True)

    def _retry_storage(self) -> None:
        """Probe the disk with a record of the outage; resume if it is taken.

        The probe carries the outage's ``evidence-storage`` alert, active then cleared,
        so the log holds the alert exactly when it holds the proof the disk works again.
        """
        evidence = self._log
        assert evidence is not None
        assert self._storage_failed_at is not None
        now = self._record_time()
        evidence.append_json(
            "system",
            now,
            {
                "event": "storage-error",
                "error": self._storage_error,
                "since": self._storage_failed_at.isoformat(),
                "held": len(self._backlog),
            },
        )
        active = self._storage_alert
        cleared = None
        if active is not None:
            at = self._now()
            cleared = msgspec.structs.replace(active, state="cleared", ended_at=at, cleared_at=at)
            evidence.append("alert", now, payload=wire.encode(active))
            evidence.append("alert", now, payload=wire.encode(cleared))
        try:
            evidence.commit()
        except EvidenceWriteError as exc:
            evidence.rollback()
            self._storage_failed(exc)
            return
        log.warning(
            "evidence writes work again after failing since %s; processing %d held messages",
            self._storage_failed_at.isoformat(),
            len(self._backlog),
        )
        self._storage_failed_at = None
        self._storage_error = None
        self._storage_alert = cleared
        self._storage_state_changed(failing=False)

    def _storage_state_changed(self, *, failing: bool) -> None:
        """Tell the operator: a retained ``evidence-storage`` alert and the status field.

        The alert cannot be logged while the disk refuses writes; it is logged (active,
        then cleared) in the first commit that works again (see :meth:`_retry_storage`).
        """
        self._status_dirty = True
        client = self._client
        assert client is not None
        if failing:
            assert self._storage_failed_at is not None
            self._storage_alerts += 1
            alert = self._storage_alert_dict(
                f"{STORAGE_ALERT_PREFIX}{self._storage_alerts:04d}",
                self._storage_failed_at,
                self._storage_error or "unknown error",
            )
            self._storage_alert = alert
        else:
            alert = self._storage_alert
            self._storage_alert = None
            if alert is None:
                return
        client.publish(self.topics.alert(alert.id), wire.encode(alert), qos=1, retain=True)
        (log.error if failing else log.warning)(
            "alert %s %s %s: %s", alert.id, alert.rule, alert.state, alert.message
        )

    def _storage_alert_dict(self, alert_id: str, since: datetime, error: str) -> wire.Alert:
        """The service's own finding that its log cannot be written, as an alert."""
        rule = RULES[STORAGE_RULE]
        observed = {"error": error, "evidence": str(self.evidence_path)}
        required = {"writable": True}
        at = since.astimezone(UTC)
        return wire.Alert(
            id=alert_id,
            rule=STORAGE_RULE,
            subject=None,
            cite=rule.cite,
            severity=rule.severity,
            state="active",
            since=at,
            raised_at=at,
            observed=observed,
            required=required,
            worst=wire.Worst(observed=observed, required=required),
            message=rule.sentence(None, observed, required),
        )

    def _note_storage_alert(self, payload: bytes) -> None:
        """Continue the ``S-`` numbering from the log, so a restart never reuses an id."""
        try:
            alert_id = json.loads(payload).get("id", "")
            number = int(alert_id.removeprefix(STORAGE_ALERT_PREFIX))
        except (ValueError, AttributeError, TypeError):
            return
        if alert_id.startswith(STORAGE_ALERT_PREFIX):
            self._storage_alerts = max(self._storage_alerts, number)

    def _published_status(self) -> wire.Status:
        """The engine's status, plus what only the service knows: a failing evidence store.

        While the log cannot be written, ``evidence`` says so (``ok`` false, the error,
        since when, how many messages are held) and the storage alert is listed active.
        """
        status = self.engine.status()
        alert = self._storage_alert
        if self._storage_failed_at is None:
            return status
        health = wire.EvidenceHealth(
            ok=False,
            error=self._storage_error,
            since=self._storage_failed_at.astimezone(UTC),
            held=len(self._backlog),
        )
        active = status.active_alerts if alert is None else [*status.active_alerts, alert.id]
        return msgspec.structs.replace(status, evidence=health, active_alerts=active)

    # -- timers ---------------------------------------------------------------------------

    def _timers(self) -> None:
        t = self.timing
        mono = time.monotonic()
        if self._failing:
            if mono >= self._retry_at:
                self._retry_storage()
            if self._failing:
                self._maybe_publish_status(mono)
                return
        evidence = self._log
        engine = self._engine
        assert evidence is not None
        assert engine is not None
        snapshot = mono - self._last_snapshot >= t.snapshot_s
        checkpoint = mono - self._last_checkpoint >= t.checkpoint_s
        tick = self.clock == "wall" and mono - self._last_tick >= t.tick_s
        if not (snapshot or checkpoint or tick):
            self._maybe_publish_status(mono)
            return
        now = self._record_time()
        changes = engine.collect_changes()
        self._append_changes(changes, now)
        if snapshot:
            evidence.append("status", now, payload=wire.encode(engine.status()))
        if checkpoint:
            count, head = evidence.head
            point = {"record": count, "hash": head, "ts": now.isoformat()}
            evidence.append_json("system", now, {"event": "checkpoint", **point})
        if evidence.pending and not self._commit([]):
            return
        if snapshot:
            self._last_snapshot = mono
        if checkpoint:
            self._last_checkpoint = mono
            assert self._client is not None
            self._client.publish(self.topics.checkpoint, json_bytes(point), qos=1, retain=True)
        if changes:
            self._publish_changes(changes)
            self._status_dirty = True
        self._maybe_publish_status(mono)

    def _maybe_publish_status(self, mono: float) -> None:
        t = self.timing
        since = mono - self._last_status
        if not (
            (self._status_dirty and since >= t.status_min_interval_s) or since >= t.heartbeat_s
        ):
            return
        if not self.connected.is_set():
            return  # a status queued offline would be stale; the next one goes on reconnect
        self._publish_status(mono)

    def _publish_status(self, mono: float) -> None:
        assert self._client is not None
        assert self._engine is not None
        self._client.publish(
            self.topics.status, wire.encode(self._published_status()), qos=1, retain=True
        )
        self._last_status = mono
        self._status_dirty = False
        self.published_status += 1

    # -- shutdown -------------------------------------------------------------------------

    def _shutdown(self) -> None:
        evidence = self._log
        client = self._client
        assert evidence is not None
        assert client is not None
        if not self._failing:
            now = self._record_time()
            changes = self.engine.collect_changes()
            self._append_changes(changes, now)
            evidence.append("status", now, payload=wire.encode(self.engine.status()))
            evidence.append_json("system", now, {"event": "stopped"})
            try:
                evidence.commit()
            except EvidenceWriteError as exc:
                evidence.rollback()
                log.error("could not record the stop: %s", exc)
            else:
                self._publish_changes(changes)
            if self.connected.is_set():
                self._publish_status(time.monotonic())
            count, head = evidence.committed_head
            client.publish(
                self.topics.checkpoint,
                json_bytes({"record": count, "hash": head, "ts": now.isoformat()}),
                qos=1,
                retain=True,
            )
        self._go_offline()
        count, head = evidence.committed_head
        evidence.close()
        log.info("stopped; evidence holds %d records, head %s", count, head[:16])

    def _go_offline(self) -> None:
        client = self._client
        assert client is not None
        if self.connected.is_set():
            info = client.publish(
                self.topics.aggregator_availability, b"offline", qos=1, retain=True
            )
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(timeout=5.0)
        client.disconnect()
        client.loop_stop()

    def _emergency_shutdown(self) -> None:
        self._accepting = False
        with contextlib.suppress(Exception):
            self._go_offline()
        if self._log is not None:
            with contextlib.suppress(Exception):
                self._log.close()


# -- the command line -------------------------------------------------------------------------


class _UtcFormatter(logging.Formatter):
    """``2027-07-04T14:03:05Z INFO aggregator: message``: plain and greppable."""

    converter = time.gmtime

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s", "%Y-%m-%dT%H:%M:%SZ")


def configure_logging(level: str) -> None:
    """Send the service's log lines to stderr at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_UtcFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def cli_run(args: argparse.Namespace) -> int:
    """``kent-ops run``: serve until SIGINT/SIGTERM; 0 on a clean stop."""
    address = parse_broker_url(args.broker)
    permit = load_permit(args.permit)
    ca_file = getattr(args, "ca_file", None)
    if ca_file is not None and not Path(ca_file).is_file():
        raise UsageError(f"CA file {ca_file}: no such file")
    evidence = Path(args.evidence)
    if evidence.is_dir():
        raise UsageError(f"{evidence} is a folder; --evidence names the log file")
    if not evidence.parent.is_dir():
        raise UsageError(f"cannot create {evidence}: folder {evidence.parent} does not exist")
    configure_logging(getattr(args, "log_level", "info"))
    aggregator = Aggregator(permit, evidence, address, clock=args.clock, ca_file=ca_file)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("received %s", signal.Signals(signum).name)
        aggregator.stop()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    aggregator.run_forever()
    return 1 if aggregator.failure is not None or aggregator.unrecorded else 0
