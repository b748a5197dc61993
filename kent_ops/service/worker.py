"""The aggregator's worker thread: it owns the engine and the evidence log.

It drains the link's queue in batches, feeds each message to the engine and appends it
to the log, and keeps the timers (engine ticks, status heartbeat, snapshots,
checkpoints, storage retries). Everything the service decides reaches the disk and then
the broker through ONE path, :meth:`Worker.flush`: record time → collect the engine's
changes → append what its :class:`~kent_ops.service.flush.FlushPlan` says → commit →
acknowledge → publish. A message is acknowledged to the broker (and anything it causes
is published) only after the commit holding it; a SIGKILL at any moment then loses
nothing the broker was told is safe, and a restart restores the engine from the log
(:func:`kent_ops.service.restore.rebuild`: its last snapshot, then the records after it)
to stand exactly where the live engine stood.

Every ``engine_snapshot_s`` and at a clean stop the flush ends with the engine's whole
state (a ``snapshot`` record, after a ``tick`` on the wall clock), taken right after the
changes were collected, where a replay of the records before it stands. A log continued
on trust is verified beside (:mod:`kent_ops.service.integrity`); if it is broken, the
worker logs and publishes an ``evidence-storage`` alert naming the record and stops.

The engine's time, written down (wall clock): before the service writes records of its
own (alerts, gate commands, a status, a system event) it lets the engine's time pass
to now, unless a message waits (:meth:`kent_ops.service.link.Link.claim_now`), and logs
that tick as a ``tick`` record ``{"engine_time": …}`` ahead of them in the same commit.
A replay ticks exactly there. A tick that no record of the service's own follows is not
written: nothing logged depended on it, and the engine takes every deadline at its own
instant, so the next message or logged tick reaches the same state without it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime

from kent_ops.core import wire
from kent_ops.core.engine import Changes, Clock
from kent_ops.core.errors import KentOpsError
from kent_ops.evidence.log import EvidenceLog, EvidenceWriteError
from kent_ops.evidence.system import BrokerRestarted, Started, SystemRecord
from kent_ops.service.batches import drain, next_batch
from kent_ops.service.flood import FloodGuard
from kent_ops.service.flush import (
    EngineState,
    Flushed,
    FlushPlan,
    Written,
    append_lead,
    append_plan,
    append_tick,
    publish_written,
)
from kent_ops.service.intake import Intake
from kent_ops.service.integrity import ChainCheck
from kent_ops.service.link import Item, Link
from kent_ops.service.refusals import hold, probe
from kent_ops.service.restore import Rebuilt, rebuild
from kent_ops.service.rhythm import Due, Rhythm, Timing
from kent_ops.service.stopping import emergency_stop, record_stop
from kent_ops.service.storage_outage import StorageOutage
from kent_ops.service.watch import Watch

__all__ = ["FlushPlan", "Flushed", "Rebuilt", "Worker", "rebuild"]

log = logging.getLogger("aggregator")


class Worker:
    """The worker thread's state and loop; see the module docstring.

    Args:
        rebuilt: the engine rebuilt from the log, and what to republish.
        evidence: the open log (the worker owns it from here).
        link: the MQTT link.
        clock: ``wall`` or ``sensor``.
        timing: the intervals.
        outage: the storage-outage state machine.
        rebuild_engine: rebuilds the engine from the log (after a refused commit).
        now: the wall clock (UTC).
        stopping: set to ask the loop to stop.
        stopped: set by the loop once it has stopped.
        chain: the whole chain's verification, running beside (a log continued on trust).
        watch: the session, the log's head and the clock (:mod:`kent_ops.service.watch`).
    """

    def __init__(
        self,
        rebuilt: Rebuilt,
        evidence: EvidenceLog,
        link: Link,
        *,
        clock: Clock,
        timing: Timing,
        outage: StorageOutage,
        rebuild_engine: Callable[[], Rebuilt],
        now: Callable[[], datetime],
        stopping: threading.Event,
        stopped: threading.Event,
        chain: ChainCheck | None = None,
        watch: Watch | None = None,
    ) -> None:
        self.engine = rebuilt.engine
        self.rebuilt_from = rebuilt.snapshot
        self.replayed = rebuilt.messages
        self.evidence = evidence
        self.link = link
        self.topics = link.topics
        self.clock = clock
        self.timing = timing
        self.outage = outage
        self.rhythm = Rhythm(timing, wall=clock == "wall")
        self.rebuild_engine = rebuild_engine
        self.now = now
        self._retained = rebuilt.retained
        self.backlog: list[Item] = []
        self.stopping = stopping
        self.stopped = stopped
        self.failure: BaseException | None = None
        self.unrecorded = 0
        """Messages held unrecorded (and unacknowledged) when the service stopped."""
        self.published_status = 0
        self._give_up_at = 0.0
        self.chain = chain or ChainCheck(None, outage, evidence.path)
        self._broken: KentOpsError | None = None
        self.watch = watch or Watch()
        guard = FloodGuard(
            timing.flood_budget_bytes, timing.flood_period_s, outage.next_id, time.monotonic
        )
        self._lost = guard.adopt(rebuilt.retained)
        self.intake = Intake(evidence, self.topics.prefix, guard)

    # -- the one way to the disk and the broker ---------------------------------------------

    def flush(self, plan: FlushPlan) -> Flushed:
        """Record time → collect changes → append (:func:`append_plan`) → commit → ack →
        publish.

        When the disk refuses, everything not committed is rolled back and nothing is
        acknowledged or published; the refusal is returned for the caller to handle.
        """
        evidence = self.evidence
        engine = self.engine
        now, ticked = self._record_time()
        changes = engine.collect_changes() if plan.collect else Changes()
        # Before a snapshot the engine's time is written down even if it did not pass
        # now: an earlier tick that no record followed may have moved it.
        ticked = ticked or (plan.state and self.clock == "wall" and engine.now is not None)
        state = None
        if plan.state:
            service = {"storage_alerts": self.outage.issued}
            state = EngineState(engine.snapshot(service), self.intake.guard.active())
        written = append_plan(
            evidence,
            plan,
            changes,
            now,
            tick_at=(engine.now or now) if ticked else None,
            status=engine.status() if plan.status else None,
            state=state,
        )
        try:
            evidence.commit()
        except EvidenceWriteError as exc:
            evidence.rollback()
            self.watch.refused()
            return Flushed(now, exc)
        self.link.ack(list(plan.acks))
        self._publish(written)
        self.watch.committed(evidence.committed_head, now)
        return Flushed(now, None, bool(changes))

    def _publish(self, written: Written) -> None:
        if self._retained:
            # The log is the truth: what a crashed run committed but had not yet
            # published reaches the dashboards first (a repeat is harmless).
            for topic, payload in self._retained.items():
                self.link.publish(topic, payload)
            log.info(
                "republished the last logged state of %d alerts and gate commands",
                len(self._retained),
            )
            self._retained = {}
        publish_written(self.link.publish, self.topics, written)

    def _record_time(self) -> tuple[datetime, bool]:
        """The time of the records the service writes itself, and whether it ticked.

        Wall clock: a time the engine has reached, ticking it to now when no message
        waits, else the engine's own time. Sensor clock: the wall time (the engine
        ignores it, and is never ticked).
        """
        if self.clock != "wall":
            return self.now(), False
        now = self.link.claim_now(busy=bool(self.backlog))
        if now is None:
            return self.engine.now or self.now(), False
        self.engine.tick(now)
        self.rhythm.ticked(time.monotonic())
        return now, True

    # -- start, batches, timers --------------------------------------------------------------

    def begin(self, started: Started) -> None:
        """The first commit: the engine's time starts (or resumes) here, with a status, and
        the engine's state after a replay of the whole log (the next start need not).

        Raises EvidenceWriteError when the disk refuses it: the service does not start.
        """
        state = self.rebuilt_from is None and self.replayed > 0
        lead = [started, *self.watch.started(self.now()), *self._lost]
        result = self.flush(FlushPlan.start(lead, state=state))
        if result.refused is not None:
            raise result.refused
        done = Due(snapshot=True, checkpoint=False, tick=False, engine=True)
        self.rhythm.done(time.monotonic(), done)

    def handle(self, batch: list[Item]) -> None:
        """Feed and append each message, then flush; on a refusal keep the batch held."""
        evidence = self.evidence
        take = self.intake.take
        engine = self.engine
        guard = self.intake.guard
        guard.begin()
        acks: list[tuple[int, int]] = []
        for topic, payload, received_at, generation, mid in batch:
            if topic is None:
                self._own_event(received_at, payload)
                continue
            take(engine, topic, payload, received_at)
            if mid:
                acks.append((generation, mid))
        if not self._settled(self.flush(FlushPlan.batch(acks, guard.lead())), batch):
            return
        self.rhythm.status_dirty = True
        if log.isEnabledFor(logging.DEBUG):
            log.debug("committed %d messages; head %d", len(acks), evidence.committed_head[0])

    def _settled(self, result: Flushed, batch: list[Item]) -> bool:
        """After a flush: publish the flood alerts it held, or undo and hold on a refusal."""
        guard = self.intake.guard
        if result.refused is not None:
            guard.rollback()
            hold(self, result.refused, batch)
            return False
        for alert in guard.commit():
            self.link.publish(self.topics.alert(alert.id), wire.encode(alert))
            self.rhythm.status_dirty = True
        return True

    def _own_event(self, received_at: datetime, event: SystemRecord) -> None:
        """A connection event, in order with the messages; the engine's time passes to it.

        A ``broker-restarted`` it leads to is handed to the engine right after it is
        appended, where a replay of the log hands it over too."""
        engine = self.engine
        if self.clock == "wall" and engine.now is not None:
            engine.tick(received_at)
            append_tick(self.evidence, received_at, engine.now or received_at)
        self.evidence.append_system(received_at, event)
        lead = self.watch.on_event(event, received_at)
        append_lead(self.evidence, received_at, lead)
        for record in lead:
            if isinstance(record, BrokerRestarted):
                engine.broker_restarted(record.how)

    def timers(self) -> None:
        """Retry a refusing disk; tick, snapshot and checkpoint when due; send the status."""
        mono = time.monotonic()
        outage = self.outage
        if self._broken is None:
            self._check_verified()
        if self._broken is None and self.watch.fatal is not None:
            self._broken = self.watch.fatal  # recorded and published already
        if self._broken is not None:
            return
        if outage.failing:
            if outage.retry_due(mono):
                probe(self)
            if outage.failing:
                self._maybe_publish_status(mono)
                return
        due = self.rhythm.due(mono)
        guard = self.intake.guard
        watched = self.watch.due(self.now())
        if due or watched or guard.period_due():
            guard.begin()
            if guard.period_due():
                guard.end_period(self.now())
            elif due.engine:
                guard.summaries()  # the snapshot counts them: the log must hold them first
            result = self.flush(FlushPlan.due(due, [*watched, *guard.lead()]))
            if not self._settled(result, []):
                return
            self.rhythm.done(mono, due)
            if result.changed:
                self.rhythm.status_dirty = True
        self._maybe_publish_status(mono)

    # -- the status -----------------------------------------------------------------------------

    def _maybe_publish_status(self, mono: float) -> None:
        if not self.rhythm.status_due(mono):
            return
        if not self.link.connected.is_set():
            return  # a status queued offline would be stale; the next one goes on reconnect
        self.publish_status(mono)

    def publish_status(self, mono: float) -> None:
        status = self.outage.decorate(self.engine.status(), held=len(self.backlog))
        status = self.intake.guard.decorate(status)
        self.link.publish(self.topics.status, wire.encode(status))
        self.rhythm.status_sent(mono)
        self.published_status += 1

    # -- the whole chain, verified beside ----------------------------------------------------

    def _check_verified(self) -> None:
        """If the background verification found the log broken: log, publish, then stop."""
        broken = self.chain.poll()
        if broken is None:
            return
        result = self.flush(FlushPlan(lead=[broken.alert, broken.event]))
        if result.refused is not None:
            log.error("could not record that the log is broken: %s", result.refused)
        self.link.publish(self.topics.alert(broken.alert.id), wire.encode(broken.alert))
        self.link.publish(self.topics.status, wire.encode(broken.status(self.engine.status())))
        self._broken = broken.error

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> None:
        """The thread's body: batches and timers until stopped, then a clean shutdown."""
        try:
            self._loop()
            if self._broken is None:
                self.shutdown()
            else:  # not a clean stop: no stop record, no snapshot over a broken log
                self.failure = self._broken
                self._emergency_shutdown(settle=10.0)  # the alert must get out
        except BaseException as exc:
            self.failure = exc
            log.exception("the aggregator failed: %s", exc)
            self._emergency_shutdown()
        finally:
            self.stopped.set()

    def _loop(self) -> None:
        link = self.link
        while True:
            stopping = self.stopping.is_set()
            if stopping and link.accepting:
                link.accepting = False
                self._give_up_at = time.monotonic() + self.timing.retry_max_s
                log.info("stopping: taking no more messages, flushing")
            batch = self._take(0.0 if stopping else self._wait_time())
            if batch:
                self.handle(batch)
            self.timers()
            if self._broken is not None:
                return
            failing = self.outage.failing
            if stopping and not batch and link.queue.empty() and not failing:
                return
            if stopping and failing and time.monotonic() > self._give_up_at:
                self.unrecorded = len(self.backlog)
                log.error(
                    "stopping with %d messages not recorded; they were not acknowledged, "
                    "so the broker keeps them for the next start",
                    self.unrecorded,
                )
                return

    def _wait_time(self) -> float:
        retry_at = self.outage.retry_at if self.outage.failing else None
        return self.rhythm.wait_time(time.monotonic(), retry_at)

    def _take(self, timeout: float) -> list[Item]:
        """The next batch: the backlog first, else ``batch_max`` items or what arrives
        within the batch window; nothing while the disk refuses."""
        if self.outage.failing:
            # Keep the network thread's queue moving into the backlog; process nothing.
            time.sleep(min(timeout, 0.05))
            drain(self.link.queue, self.backlog)
            return []
        return next_batch(self.link.queue, self.backlog, self.timing, timeout, self.stopping)

    # -- shutdown -------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Record the stop and the engine's state (unless the disk refuses), say offline,
        close the log (:mod:`kent_ops.service.stopping`)."""
        record_stop(self)

    def _emergency_shutdown(self, settle: float = 0.0) -> None:
        """Already failing (the log line says why): leave as cleanly as can be."""
        emergency_stop(self, settle)
