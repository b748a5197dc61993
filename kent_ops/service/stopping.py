"""How the worker stops: the stop recorded with the engine's state, or, already failing,
as cleanly as it can.

Kept apart from :mod:`kent_ops.service.worker` so the loop stays readable; both read the
worker's parts (its log, link, flood guard and watch). The worker uses this module, so
this module names only what it needs of the worker (:class:`Stoppable`), never the worker.
"""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import datetime
from typing import Protocol

from kent_ops.core import wire
from kent_ops.evidence.log import EvidenceLog
from kent_ops.service.flush import Flushed, FlushPlan
from kent_ops.service.intake import Intake
from kent_ops.service.integrity import ChainCheck
from kent_ops.service.link import Link
from kent_ops.service.storage_outage import StorageOutage
from kent_ops.service.watch import Watch

__all__ = ["Stoppable", "emergency_stop", "record_stop"]


class Stoppable(Protocol):
    """What stopping needs of the worker: its log, link, flood guard, watch and clock."""

    evidence: EvidenceLog
    chain: ChainCheck
    outage: StorageOutage
    intake: Intake
    watch: Watch
    link: Link
    topics: wire.Topics

    def now(self) -> datetime: ...

    def flush(self, plan: FlushPlan) -> Flushed: ...

    def publish_status(self, mono: float) -> None: ...


log = logging.getLogger("aggregator")


def record_stop(worker: Stoppable) -> None:
    """Record the stop and the engine's state (unless the disk refuses), say offline,
    close the log."""
    evidence = worker.evidence
    worker.chain.stop()
    if not worker.outage.failing:
        guard = worker.intake.guard
        guard.begin()
        guard.end_period(worker.now(), closing=True)
        lead = [*worker.watch.closing(worker.now()), *guard.lead()]
        result = worker.flush(FlushPlan.stop(lead))
        if result.refused is not None:
            log.error("could not record the stop: %s", result.refused)
            guard.rollback()
        for alert in guard.commit():
            worker.link.publish(worker.topics.alert(alert.id), wire.encode(alert))
        if worker.link.connected.is_set():
            worker.publish_status(time.monotonic())
        count, head = evidence.committed_head
        point = wire.Checkpoint(record=count, hash=head, ts=result.now)
        worker.link.publish(worker.topics.checkpoint, wire.encode(point))
        worker.watch.committed((count, head), result.now, final=True)
    worker.link.go_offline()
    count, head = evidence.committed_head
    evidence.close()
    log.info("stopped; evidence holds %d records, head %s", count, head[:16])


def emergency_stop(worker: Stoppable, settle: float = 0.0) -> None:
    """Already failing (the log line says why): leave as cleanly as can be."""
    worker.link.accepting = False
    with contextlib.suppress(Exception):
        worker.chain.stop()
    with contextlib.suppress(Exception):
        worker.link.go_offline(settle)
    with contextlib.suppress(Exception):
        worker.evidence.close()
