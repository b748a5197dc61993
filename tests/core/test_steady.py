"""The engine's hot path for a gate's steady reading changes nothing but the time it takes.

A gate counter's next reading (the next ``seq``, totals up, its counter well) is taken
in one step (core/steady.py); every other message the long way. Random days of gate
readings, with repeats, gaps, restarts, skewed clocks, silences, lots, badges,
inspectors' counts and ticks, are fed to two engines, one of which has no hot path:
every verdict, every change to publish, the status and the whole saved state are the
same.
"""

from __future__ import annotations

import os
from datetime import timedelta

from core_support import TIGHT, TOPICS, local, permit_variant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire_support import adjust, badge, gate_count, lot_occupancy

from kent_ops.core.engine import Engine

PERMIT = permit_variant(TIGHT)
GATES = ("north", "south", "north-manual")


@st.composite
def days(draw: st.DrawFn) -> list[tuple[str, str, bytes, timedelta, bool]]:
    """(kind, topic, payload, received after the start, tick after it) for a short day."""
    seqs = dict.fromkeys(GATES, 0)
    totals = {g: [0, 0] for g in GATES}
    lot_seq = badge_seq = 0
    at = timedelta(0)
    out = []
    for _ in range(draw(st.integers(1, 120))):
        at += timedelta(seconds=draw(st.sampled_from([0, 0.2, 1, 3, 25])))
        gate = draw(st.sampled_from(GATES))
        step = draw(st.sampled_from(["next"] * 8 + ["gap", "repeat", "restart", "fall"]))
        if step == "next":
            seqs[gate] += 1
        elif step == "gap":
            seqs[gate] += draw(st.integers(2, 5))
        elif step == "restart":
            seqs[gate] = draw(st.sampled_from([0, 1]))
            totals[gate] = [0, 0]
        elif step == "fall":
            seqs[gate] += 1
            totals[gate] = [max(totals[gate][0] - 3, 0), totals[gate][1]]
        if step != "repeat":
            totals[gate][0] += draw(st.integers(0, 20))
            totals[gate][1] += draw(st.integers(0, 15))
        skew = draw(st.sampled_from([0] * 6 + [-45, 31, 120]))
        ts = local(12) + at + timedelta(seconds=skew)
        body = gate_count(seqs[gate], ts, *totals[gate])
        out.append(("gate", TOPICS.gate_count(gate), body, at, draw(st.booleans())))
        extra = draw(st.integers(0, 29))
        if extra < 3:
            lot_seq += 1
            body = lot_occupancy(lot_seq, local(12) + at, draw(st.integers(0, 4)))
            out.append(("lot", TOPICS.lot_occupancy("lot-a"), body, at, False))
        elif extra == 3:  # an inspector's count: an offset, and below it a clamp at 0
            body = adjust(local(12) + at, draw(st.integers(0, 30)), "counted by hand")
            out.append(("adjust", TOPICS.inspector("insp-1", "adjust"), body, at, False))
        elif extra == 4:
            badge_seq += 1
            role = draw(st.sampled_from(["doctor", "nurse", "security"]))
            body = badge(badge_seq, local(12) + at, f"B-{draw(st.integers(1, 4))}", role, "on")
            out.append(("badge", TOPICS.staff_badge("first-aid"), body, at, False))
    return out


@settings(
    max_examples=int(os.environ.get("KENT_STEADY_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(days(), st.sampled_from(["wall", "sensor"]))
def test_the_hot_path_and_the_long_way_give_the_same_engine(
    day: list[tuple[str, str, bytes, timedelta, bool]], clock: str
) -> None:
    fast = Engine(PERMIT, clock=clock)  # type: ignore[arg-type]
    slow = Engine(PERMIT, clock=clock)  # type: ignore[arg-type]
    slow._steady = {}  # every message the long way
    for record, (_, topic, payload, at, tick) in enumerate(day, start=1):
        received = local(12) + at
        assert fast.feed(topic, payload, received, record) == slow.feed(
            topic, payload, received, record
        )
        if tick:
            fast.tick(received + timedelta(seconds=1))
            slow.tick(received + timedelta(seconds=1))
            assert fast.collect_changes() == slow.collect_changes()
    assert fast.status() == slow.status()
    assert fast.alerts == slow.alerts
    assert fast.snapshot() == slow.snapshot()


def test_a_steady_reading_takes_the_hot_path() -> None:
    """The test above compares something: steady readings do not go the long way."""
    engine = Engine(PERMIT, clock="sensor")
    taken = []
    original = engine._feed_steady

    def spy(*args: object) -> object:
        result = original(*args)  # type: ignore[arg-type]
        taken.append(result is not None)
        return result

    engine._feed_steady = spy  # type: ignore[method-assign]
    for seq in range(1, 6):
        ts = local(12, 1, seq)
        engine.feed(TOPICS.gate_count("north"), gate_count(seq, ts, seq * 3), ts, seq)
    assert taken == [False, True, True, True, True]  # the first sets the gate's seq
    assert engine.status().attendance.current == 15
