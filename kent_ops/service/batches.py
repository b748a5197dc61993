"""The worker's batches, taken from the network thread's queue (or the held backlog).

A batch closes at ``batch_max`` messages or ``batch_window_s`` after its first one
(:class:`kent_ops.service.rhythm.Timing`): long enough to amortise a commit's fsync,
short enough to keep the status prompt.
"""

from __future__ import annotations

import queue
import threading
import time

from kent_ops.service.link import WAKE, Item
from kent_ops.service.rhythm import Timing

__all__ = ["drain", "next_batch"]


def next_batch(
    q: queue.SimpleQueue[Item],
    backlog: list[Item],
    timing: Timing,
    timeout: float,
    stopping: threading.Event,
) -> list[Item]:
    """The held backlog's first ``batch_max`` items, else what the queue brings in time."""
    if backlog:
        batch = backlog[: timing.batch_max]
        del backlog[: timing.batch_max]
        return batch
    try:
        first = q.get(timeout=timeout) if timeout > 0 else q.get_nowait()
    except queue.Empty:
        return []
    batch = [first] if first is not WAKE else []
    deadline = time.monotonic() + timing.batch_window_s
    while len(batch) < timing.batch_max:
        try:
            item = q.get_nowait()
        except queue.Empty:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or stopping.is_set():
                break
            try:
                item = q.get(timeout=remaining)
            except queue.Empty:
                break
        if item is not WAKE:
            batch.append(item)
    return batch


def drain(q: queue.SimpleQueue[Item], backlog: list[Item]) -> None:
    """Move everything queued into the backlog (while the disk refuses writes)."""
    while True:
        try:
            item = q.get_nowait()
        except queue.Empty:
            return
        if item is not WAKE:
            backlog.append(item)
