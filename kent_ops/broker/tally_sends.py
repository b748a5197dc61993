"""A manual tally's counts on their way: which taps the broker has, and since when.

A deputy's tap is *sent* once the broker has acknowledged a message whose totals carry
it, and *counted* once the aggregator's status shows them (docs/protocol.md, "Counted,
not sent"). Between the two the screen must know how long the broker has had a tap the
aggregator has not counted, to say so after
:data:`kent_ops.core.gate_view.NOT_COUNTED_AFTER_S`. The gate view (its own connection)
and the web server's gate hub (the gate's connection) both keep one
:class:`TallySends`: each count message is added with its delivery and the taps its
totals carry (``in_total + out_total``), and the time its acknowledgement came (or was
first seen) is kept on a steady clock (real seconds, whatever the aggregator's clock).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

from kent_ops.broker.delivery import Delivery

__all__ = ["TallySends", "taps_in"]


def taps_in(payload: bytes) -> int:
    """``in_total + out_total`` of a gate counter's payload (signed or not); 0 if none."""
    try:
        fields = json.loads(payload)
        return int(fields["in_total"]) + int(fields["out_total"])
    except (ValueError, KeyError, TypeError):
        return 0


class TallySends:
    """The tally's count messages: which taps the broker has, and when it first had each.

    Thread-safe: messages are added from the thread that counts, acknowledgements come
    from paho's, the screen reads from its own.

    Args:
        monotonic: the steady clock the times are read from (seconds).
    """

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._flying: list[tuple[int, Delivery]] = []
        self._taken: list[tuple[int, float]] = []
        """(taps, when first seen acknowledged), taps rising: the first message with each
        new highest number of taps the broker acknowledged."""
        self._most = 0

    def add(self, taps: int, delivery: Delivery) -> None:
        """A count message carrying ``taps`` went out with this delivery."""
        with self._lock:
            self._flying.append((taps, delivery))

    def _look(self) -> None:
        """Note the acknowledgements that came since the last look (lock held)."""
        if not self._flying:
            return
        now = self._monotonic()
        flying = []
        for taps, delivery in self._flying:
            if not delivery.done:
                flying.append((taps, delivery))
            elif taps > self._most:
                self._most = taps
                at = delivery.acknowledged_at
                self._taken.append((taps, now if at is None else min(at, now)))
        self._flying = flying

    def sent(self) -> int:
        """The most taps any acknowledged message carried (0: none yet)."""
        with self._lock:
            self._look()
            return self._most

    def sent_at(self, index: int) -> float | None:
        """When the broker first had tap ``index`` (a steady clock's reading); None if not yet."""
        with self._lock:
            self._look()
            for taps, at in self._taken:
                if taps >= index:
                    return at
        return None

    def waiting_s(self, counted: int | None) -> float | None:
        """Seconds since the broker took the first tap beyond the ``counted`` ones (the
        aggregator's); None when the broker has none that is not counted.

        What is counted is forgotten here: only the taps still waiting are kept.
        """
        first = (counted or 0) + 1
        with self._lock:
            self._look()
            self._taken = [(taps, at) for taps, at in self._taken if taps >= first]
            at = self._taken[0][1] if self._taken else None
            now = self._monotonic()
        return None if at is None else max(0.0, now - at)
