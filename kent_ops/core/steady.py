"""A gate counter's steady reading, taken in one step: the engine's hot path.

A festival's counters send thousands of readings a minute, and nearly every one is the
next ``seq`` of a counter in good order, moving attendance inside its band (core/band.py).
Taken the long way (the general decode, the dispatch by kind, the sequence judge) such
a reading cost some sixty calls; here it is decoded, checked and counted at once.
Anything else, and any reading whose effect is more than attendance, goes the long way,
with the same result (tests/core/test_steady.py feeds random days both ways and compares
the whole saved state). docs/architecture.md, "Where the time goes", has the figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Literal

from kent_ops.core import wire
from kent_ops.core.band import AttendanceBand
from kent_ops.core.counting import Counting
from kent_ops.core.coverage import Dispersal
from kent_ops.core.deadlines import Deadlines
from kent_ops.core.engine_io import FeedResult
from kent_ops.core.foresight import Foresight
from kent_ops.core.gate_orders import GateOrders
from kent_ops.core.permit import Permit
from kent_ops.core.rules import CLOCK_SKEW_S, Terms
from kent_ops.core.timeutil import SECOND, from_us, to_us

__all__ = ["SteadyGateReadings"]

CLOCK_SKEW_US = CLOCK_SKEW_S * SECOND


class SteadyGateReadings:
    """The hot path, a part of :class:`~kent_ops.core.engine.Engine` (which holds the
    state named here and passes the rules in ``_evaluate``)."""

    permit: Permit
    keys: Mapping[str, bytes] | None
    clock: Literal["wall", "sensor"]
    terms: Terms
    counts: Counting
    band: AttendanceBand
    dispersal: Dispersal
    foresight: Foresight
    orders: GateOrders
    accepted: int
    _deadlines: Deadlines
    _skewed: dict[str, float]
    _ts_span: wire.Span | None
    _now: int | None
    _last_record: int | None
    _evaluate: Callable[[], None]
    """Pass the rules (the engine's own method)."""

    def _steady_routes(self) -> dict[str, tuple[str, str]]:
        """Each gate's count topic and what it names, for unsigned payloads (a signature
        is checked the long way)."""
        if self.keys is not None:
            return {}
        topics = wire.Topics(self.permit.event_id)
        routes = {}
        for gate in self.permit.gates:
            topic = topics.gate_count(gate)
            ref = topics.parse(topic)
            if isinstance(ref, wire.TopicRef) and ref.id == gate:
                routes[topic] = (gate, ref.kind)
        return routes

    def _feed_steady(
        self, steady: tuple[str, str], payload: bytes, received_at: datetime, record_id: int | None
    ) -> FeedResult | None:
        """A gate counter's next reading in the steady state, taken in one step; None when
        it is anything else (:meth:`feed` then takes it the long way, with the same result).

        The steady state: a valid payload with the next ``seq`` and totals that did not
        fall, from a counter that is not silent, stuck, unheard since a broker restart or
        skewed, nothing due before it (a deadline, a skew to note). Its effect is then
        attendance alone, and within its band the rules wait (core/band.py). A festival's
        counters send thousands of these a minute; this is what a record costs on replay.
        """
        rec = wire.steady_gate_count(payload, self._ts_span)
        if rec is None:
            return None
        gate, kind = steady
        counts = self.counts
        live = counts.sensors[gate]
        if live.stale or live.stuck or live.unheard:
            return None
        deadlines = self._deadlines
        if not deadlines.watching(gate) and live.watched_for_silence:
            return None  # its silence is to be watched from now: the long way
        received = to_us(received_at)
        if self.clock == "wall":
            # Off by more than 30 s, or was: the skew is noted the long way (rules/data.py).
            if gate in self._skewed or abs(to_us(rec.ts) - received) > CLOCK_SKEW_US:
                return None
            t = received
        else:
            t = to_us(rec.ts)
        now = self._now
        if now is None:
            return None
        if t < now:
            t = now  # time never goes back: a late message is taken now
        if deadlines.due_by(t):
            return None
        clamped = counts.clamped
        if not counts.count_next(gate, rec, t):
            return None  # a repeat, a gap, a restart…: judged the long way
        self._now = t
        if record_id is not None:
            self._last_record = record_id
        counts.heard(gate, t)
        band = self.band
        band.counts_only = counts.clamped == clamped
        self.accepted += 1
        orders = self.orders
        orders.changed |= self.foresight.observe(t, counts, gate, orders.hold_at)
        terms = self.terms
        if not band.defers(
            counts, terms.max_collective, self.dispersal, t, terms.several_properties
        ):
            self._evaluate()
        return FeedResult(True, None, kind, received_at if t == received else from_us(t))
