"""The worker's batches: what it takes from the link's queue at once.

A batch closes at ``batch_max`` items or ``batch_window_s`` after its first one (see
:class:`kent_ops.service.rhythm.Timing`), so one fsynced commit holds many messages.
"""

from __future__ import annotations

import queue
import threading
import time

from kent_ops.service.link import WAKE, Item
from kent_ops.service.rhythm import Timing

__all__ = ["drain", "take_batch"]


def take_batch(
    q: queue.SimpleQueue[Item], timing: Timing, stopping: threading.Event, timeout: float
) -> list[Item]:
    """The next batch from ``q``: waiting up to ``timeout`` for its first item."""
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


def drain(q: queue.SimpleQueue[Item]) -> list[Item]:
    """Everything queued now (a wake-up call left out)."""
    items = []
    while True:
        try:
            item = q.get_nowait()
        except queue.Empty:
            return items
        if item is not WAKE:
            items.append(item)
