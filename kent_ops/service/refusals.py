"""How the worker rides out a disk that refuses commits: the batch held, the disk probed.

A refused commit leaves nothing of its batch on disk, so nothing of it may be
acknowledged or published: the batch (and everything queued behind it) is held
unacknowledged, the engine, which had taken the batch already, is rebuilt from the log
at the outage's start, and the disk is probed with a record of the outage (at most
``retry_max_s`` apart) until it takes writes; the held messages are then fed again, in
order (:mod:`kent_ops.service.storage_outage` keeps the outage's state and alert).

Kept apart from :mod:`kent_ops.service.worker` so the loop stays readable, as
:mod:`kent_ops.service.stopping` is. The worker uses this module, so this module names
only what it needs of the worker (:class:`Holding`), never the worker itself.
"""

from __future__ import annotations

from typing import Protocol

from kent_ops.core import wire
from kent_ops.core.engine import Engine
from kent_ops.evidence.log import EvidenceWriteError
from kent_ops.service.batches import drain
from kent_ops.service.flush import Flushed, FlushPlan
from kent_ops.service.link import Item, Link
from kent_ops.service.restore import Rebuilt
from kent_ops.service.rhythm import Rhythm
from kent_ops.service.storage_outage import StorageOutage

__all__ = ["Holding", "hold", "probe"]


class Holding(Protocol):
    """What riding out a refusing disk needs of the worker."""

    backlog: list[Item]
    link: Link
    topics: wire.Topics
    outage: StorageOutage
    engine: Engine
    rhythm: Rhythm

    def flush(self, plan: FlushPlan) -> Flushed: ...

    def rebuild_engine(self) -> Rebuilt: ...


def hold(worker: Holding, exc: EvidenceWriteError, batch: list[Item]) -> None:
    """Hold the batch (and everything queued) unacknowledged, and start or go on retrying.

    The engine had already taken the failed batch, so at the outage's start it is
    rebuilt from the log to match what is on disk; the batch is fed again once the
    disk takes writes.
    """
    worker.backlog[0:0] = batch
    drain(worker.link.queue, worker.backlog)
    alert = worker.outage.failed(exc, held=len(worker.backlog))
    if alert is None:
        return
    worker.engine = worker.rebuild_engine().engine  # all published already: none to republish
    worker.rhythm.status_dirty = True
    worker.link.publish(worker.topics.alert(alert.id), wire.encode(alert))


def probe(worker: Holding) -> None:
    """Probe the disk with a record of the outage; resume if it is taken."""
    outage = worker.outage
    result = worker.flush(FlushPlan.probe(outage.probe_records(held=len(worker.backlog))))
    if result.refused is not None:
        hold(worker, result.refused, [])
        return
    cleared = outage.recovered(held=len(worker.backlog))
    worker.rhythm.status_dirty = True
    if cleared is not None:
        worker.link.publish(worker.topics.alert(cleared.id), wire.encode(cleared))
