"""How the worker stops: the stop recorded with the engine's state, or, already failing,
as cleanly as it can.

Kept apart from :mod:`kent_ops.service.worker` so the loop stays readable; both read the
worker's parts (its log, link, flood guard and watch).
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING

from kent_ops.core import wire
from kent_ops.service.flush import FlushPlan

if TYPE_CHECKING:
    from kent_ops.service.worker import Worker

__all__ = ["emergency_stop", "record_stop"]

log = logging.getLogger("aggregator")


def record_stop(worker: Worker) -> None:
    """Record the stop and the engine's state (unless the disk refuses), say offline,
    close the log."""
    evidence = worker.evidence
    worker.chain.stop()
    if not worker.outage.failing:
        guard = worker.intake.guard
        guard.begin()
        guard.end_period(worker._now(), closing=True)
        lead = [*worker.watch.closing(worker._now()), *guard.lead()]
        result = worker.flush(FlushPlan.stop(lead))
        if result.refused is not None:
            log.error("could not record the stop: %s", result.refused)
            guard.rollback()
        for alert in guard.commit():
            worker.link.publish(worker.topics.alert(alert.id), wire.encode(alert))
        if worker.link.connected.is_set():
            worker._publish_status(time.monotonic())
        count, head = evidence.committed_head
        point = wire.Checkpoint(record=count, hash=head, ts=result.now)
        worker.link.publish(worker.topics.checkpoint, wire.encode(point))
        worker.watch.committed((count, head), result.now, final=True)
    worker.link.go_offline()
    count, head = evidence.committed_head
    evidence.close()
    log.info("stopped; evidence holds %d records, head %s", count, head[:16])


def emergency_stop(worker: Worker, settle: float = 0.0) -> None:
    """Already failing (the log line says why): leave as cleanly as can be."""
    worker.link.accepting = False
    with contextlib.suppress(Exception):
        worker.chain.stop()
    with contextlib.suppress(Exception):
        worker.link.go_offline(settle)
    with contextlib.suppress(Exception):
        worker.evidence.close()
