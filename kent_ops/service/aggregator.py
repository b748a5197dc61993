"""The aggregator service (``kent-ops run``): MQTT in, evidence log, engine, MQTT out.

It runs for days on a field laptop with a flaky network, and what it records must
stand up at a hearing, so it is built around one promise: a message is acknowledged to
the broker (and anything it causes is published) only after the evidence batch holding
it is committed to disk. A SIGKILL at any moment then loses nothing the broker was told
is safe: the broker redelivers the rest, and a restart rebuilds the engine from the log
(its last engine snapshot, then the records after it) to stand exactly where it stood.
It serves within seconds of a start; the whole chain is verified meanwhile by a second
process, and a broken record stops the service (exit 1) rather than let it go on.

This module composes the parts, each with one job:

- :mod:`kent_ops.service.link`: the MQTT link (paho's network thread: callbacks into a
  queue, connection generations and acknowledgements, subscriptions, availability);
- :mod:`kent_ops.service.worker`: the worker thread, owner of the engine and the log,
  with the one flush path (record time → changes → append → commit → ack → publish);
- :mod:`kent_ops.service.restore`: the engine at a start, from the last snapshot;
- :mod:`kent_ops.service.integrity`: the whole chain, verified beside;
- :mod:`kent_ops.service.storage_outage`: what happens while the disk refuses writes;
- :mod:`kent_ops.service.rhythm`: the timers (ticks, status, snapshots, checkpoints);
- :mod:`kent_ops.service.watch`: its own evidence watched: the broker session (an id only
  its credentials make, :mod:`kent_ops.service.session`), the log's head against the
  broker's retained checkpoint and the head file (:mod:`kent_ops.service.rollback`:
  a log found behind is refused), and the host clock (:mod:`kent_ops.service.clock`:
  the service keeps a steady clock of its own).

The caller's thread starts and stops it; ``kent-ops run`` (:mod:`kent_ops.commands.run`)
waits for SIGINT/SIGTERM.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from kent_ops import __version__
from kent_ops.broker.client import BrokerAddress
from kent_ops.core.engine import Clock, Engine
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics, keys_for_permit
from kent_ops.evidence.background import BackgroundVerify
from kent_ops.evidence.log import EvidenceLog
from kent_ops.evidence.replay import recorded_clock
from kent_ops.evidence.system import Started
from kent_ops.service.broker_restart import UptimeWatch, last_seen
from kent_ops.service.clock import ServiceClock
from kent_ops.service.integrity import ChainCheck
from kent_ops.service.link import Link
from kent_ops.service.rhythm import Timing
from kent_ops.service.rollback import (
    Guarded,
    HeadFile,
    LateCheck,
    Retained,
    guard_head,
    read_retained_checkpoint,
)
from kent_ops.service.service_alerts import ServiceAlerts, left_open
from kent_ops.service.session import SessionWatch, connected_before, session_identity
from kent_ops.service.storage_outage import STORAGE_ALERT_PREFIX, StorageOutage
from kent_ops.service.watch import CheckpointGate, StartHead, Watch
from kent_ops.service.worker import Rebuilt, Worker, rebuild

__all__ = ["STORAGE_ALERT_PREFIX", "Aggregator", "Timing", "permit_sha256"]

log = logging.getLogger("aggregator")


def permit_sha256(permit: Permit) -> str:
    """The SHA-256 of the permit file as loaded, so the log names the permit it enforced."""
    if permit.source_path is not None and Path(permit.source_path).is_file():
        return hashlib.sha256(Path(permit.source_path).read_bytes()).hexdigest()
    return hashlib.sha256(json.dumps(permit.raw, sort_keys=True, default=str).encode()).hexdigest()


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Aggregator:
    """The live service for one event; usable in-process (demo, tests) or via ``kent-ops run``.

    Args:
        permit: the validated permit.
        evidence_path: the event's evidence log; created, or verified and continued.
        address: the broker.
        clock: ``wall`` (receive time) or ``sensor`` (payload ``ts``).
        ca_file: CA certificate for ``mqtts://`` brokers.
        timing: intervals; the defaults are those of docs/protocol.md.
        now: the host's wall clock (UTC); replaceable for tests. The service reads it
            at the start and then keeps time with a steady clock (a jump is recorded).
        accept_rollback: go on with a log found behind its checkpoint (recorded, alerted).

    Raises:
        UsageError: the permit's ``[signing]`` keys file cannot be used, or the session
            key beside the log cannot be made (one sentence).
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
        accept_rollback: bool = False,
    ) -> None:
        if clock not in ("wall", "sensor"):
            raise ValueError(f"clock must be 'wall' or 'sensor', not {clock!r}")
        self.permit = permit
        self.evidence_path = Path(evidence_path)
        self.address = address
        self.clock: Clock = clock
        self.ca_file = ca_file
        self.timing = timing or Timing()
        self._now = ServiceClock(now)
        self.accept_rollback = accept_rollback
        self.topics = Topics(permit.event_id)
        self.session = session_identity(permit.event_id, address, self.evidence_path.parent)
        self.client_id = self.session.client_id
        """The persistent session's id: a secret, never logged (see ``session``)."""
        self.permit_sha256 = permit_sha256(permit)
        try:
            self.keys: Mapping[str, bytes] | None = keys_for_permit(permit.signing_keys_file)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.connected = threading.Event()
        """Set while connected with every input subscribed (after the SUBACK)."""
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._outage = StorageOutage(self.timing, self.evidence_path, now=self._now)
        self._log: EvidenceLog | None = None
        self._link: Link | None = None
        self._worker: Worker | None = None

    # -- life cycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Open the log, check it against what it had committed, rebuild the engine from
        it, then connect and serve.

        The whole chain is verified by a second process meanwhile (see the module's
        docstring). Raises EvidenceError / ChainBroken (the log, or the records after its
        last snapshot, do not verify) and LogRolledBack (it is behind the broker's
        retained checkpoint or its head file) before anything is connected.
        """
        path = self.evidence_path
        fresh = not path.exists() or path.stat().st_size == 0
        evidence = None if fresh else self._open_log()
        try:
            guarded = self._guard(evidence)
            if evidence is None:
                evidence = self._open_log()
        except BaseException:
            if evidence is not None:
                evidence.close()
            raise
        self._log = evidence
        chain = ChainCheck(None, self._outage, path)
        try:
            self._check_clock(recorded_clock(path))
            if not evidence.verified and evidence.head[0] > 0:
                chain.verifier = BackgroundVerify(path)
            rebuilt = self._rebuild()
            self._log_rebuilt(rebuilt, evidence)
            gate = CheckpointGate(guarded.retained.claim, checked=guarded.retained.answered)
            self._link = Link(
                self.address,
                self.topics,
                self.client_id,
                ca_file=self.ca_file,
                now=self._now,
                connected=self.connected,
                on_connected=self._fresh_status,
                shown_as=self.session.fingerprint,
                allow_checkpoint=gate.allows,
            )
            self._worker = Worker(
                rebuilt,
                evidence,
                self._link,
                clock=self.clock,
                timing=self.timing,
                outage=self._outage,
                rebuild_engine=self._rebuild,
                now=self._now,
                stopping=self._stopping,
                stopped=self._stopped,
                chain=chain,
                watch=self._watch(guarded, evidence, rebuilt, gate),
            )
            self._worker.begin(self._started(rebuilt, guarded.retained))
        except BaseException:
            chain.stop()
            evidence.close()
            raise
        self._link.start()
        if not guarded.retained.answered:
            self._late_check(self._link)
        threading.Thread(target=self._worker.run, name="aggregator-worker", daemon=True).start()

    def stop(self) -> None:
        """Ask the service to stop: safe from a signal handler or another thread."""
        self._stopping.set()
        if self._link is not None:
            self._link.wake()

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

    # -- what the outside may look at -----------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The live engine; only the worker thread may touch it while running."""
        assert self._worker is not None
        return self._worker.engine

    @property
    def failure(self) -> BaseException | None:
        """What made the worker fail, if it did."""
        return None if self._worker is None else self._worker.failure

    @property
    def unrecorded(self) -> int:
        """Messages held unrecorded (and unacknowledged) when the service stopped."""
        return 0 if self._worker is None else self._worker.unrecorded

    @property
    def published_status(self) -> int:
        """How many status messages were published."""
        return 0 if self._worker is None else self._worker.published_status

    # -- parts ----------------------------------------------------------------------------

    def _open_log(self) -> EvidenceLog:
        return EvidenceLog.open(
            self.evidence_path,
            event_id=self.permit.event_id,
            permit_sha256=self.permit_sha256,
            verify=False,
        )

    def _guard(self, evidence: EvidenceLog | None) -> Guarded:
        """The broker's retained checkpoint and the head file against the log (None: a
        new one); raises LogRolledBack if it is behind either and no one accepted that
        (its one sentence the only line on stderr)."""
        retained = read_retained_checkpoint(
            self.address, self.topics.checkpoint, self.ca_file, self.timing.checkpoint_wait_s
        )
        hash_of: Callable[[int], str | None]
        if evidence is None:
            count, hash_of = 0, lambda record: None
        else:
            count, hash_of = evidence.head[0], evidence.hash_of
        guarded = guard_head(
            self.evidence_path,
            count,
            hash_of,
            retained=retained,
            head_file=HeadFile(self.evidence_path),
            accept=self.accept_rollback,
        )
        if not retained.answered:
            log.warning(
                "could not read the broker's retained checkpoint (%s); the log is checked "
                "against it once the broker answers, and no checkpoint is published before",
                retained.problem,
            )
        elif retained.problem:
            log.warning("could not read the broker's retained checkpoint: %s", retained.problem)
        elif retained.claim is None and count > 2:
            log.warning(
                "the broker holds no checkpoint although this log published some: it lost "
                "its data, or this account may not read it (regenerate the ACL with "
                "kent-ops deploy acl)"
            )
        return guarded

    def _watch(
        self, guarded: Guarded, evidence: EvidenceLog, rebuilt: Rebuilt, gate: CheckpointGate
    ) -> Watch:
        """What the worker watches: the session, the log's head, the clock."""
        previous = guarded.head_file.session
        if not guarded.had_head_file and connected_before(self.evidence_path):
            previous = ""  # a log older than the head file: its session's id is unknown
        expected = previous is not None
        clock_at_start = None
        if self.clock == "wall" and rebuilt.engine.now is not None:
            clock_at_start = self._now.hold_at_least(rebuilt.engine.now)
        start = StartHead(
            self.evidence_path,
            guarded.count,
            evidence.hash_of,
            self.accept_rollback,
            guarded.head_file.path,
        )
        assert self._link is not None
        return Watch(
            topics=self.topics,
            publish=self._link.publish,
            alerts=ServiceAlerts(self._outage, self.permit.alerting.clear_s),
            clock=self._now,
            session=SessionWatch(self.session.fingerprint, expected=expected, previous=previous),
            head_file=guarded.head_file,
            gate=gate,
            start=start,
            found=guarded.found,
            clock_at_start=clock_at_start,
            leftover=left_open(rebuilt.retained),
            uptime=UptimeWatch(last_seen(self.evidence_path)),
        )

    def _late_check(self, link: Link) -> None:
        """The broker did not answer at the start: read its checkpoint once it does."""

        def read() -> Retained:
            return read_retained_checkpoint(
                self.address, self.topics.checkpoint, self.ca_file, self.timing.checkpoint_wait_s
            )

        LateCheck(read, link.post, self._stopping).start()

    def _rebuild(self) -> Rebuilt:
        return rebuild(self.permit, self.evidence_path, self.clock, self.topics, self._outage)

    def _check_clock(self, recorded: str | None) -> None:
        """A log is replayed with the clock it was recorded with; refuse to mix them."""
        if recorded is not None and recorded != self.clock:
            raise UsageError(
                f"{self.evidence_path} was recorded with --clock {recorded}; "
                f"continue it with --clock {recorded} or start a new evidence file"
            )

    def _fresh_status(self) -> None:
        """A (re)connection: whoever missed the last status gets a fresh one."""
        if self._worker is not None:
            self._worker.rhythm.status_dirty = True

    def _log_rebuilt(self, rebuilt: Rebuilt, evidence: EvidenceLog) -> None:
        count, head = evidence.head
        where = (
            "the whole log"
            if rebuilt.snapshot is None
            else f"the engine snapshot in record {rebuilt.snapshot} and the records after it"
        )
        log.info(
            "evidence %s: %d records, head %s; rebuilt from %s (%d messages replayed)%s",
            self.evidence_path,
            count,
            head[:16],
            where,
            rebuilt.messages,
            "" if evidence.verified else "; the whole chain is verified in the background",
        )

    def _started(self, rebuilt: Rebuilt, retained: Retained) -> Started:
        return Started(
            version=__version__,
            clock=self.clock,
            session=self.session.fingerprint,
            session_keyed_by=self.session.keyed_by,
            checkpoint=retained.in_record(),
            broker=self.address.url,
            permit_sha256=self.permit_sha256,
            signed=self.keys is not None,
            replayed=rebuilt.messages,
            snapshot=rebuilt.snapshot,
            snapshot_refused=rebuilt.refused,
        )
