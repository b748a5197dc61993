"""Property tests (hypothesis) of the core: the counters and the alert lifecycle.

- Any interleaving of several gates' messages (each gate's own in seq order), and any
  duplication or redelivery of a message after its original, gives the same attendance.
- Required nurses and car spaces never fall as attendance rises.
- No alert is raised before its condition has held ``pending_s``: random on/off
  histories of one condition are checked against a small model of the alert lifecycle.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import msgspec
from core_support import TIGHT, TOPICS, Driver, local, permit_variant, when
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire_support import gate_count

from kent_ops.core import ordinance as law
from kent_ops.core.engine import Engine

GATES = ("north", "south", "north-manual")
DEEP_EXAMPLES = int(os.environ.get("KENT_CORE_EXAMPLES", "120"))
"""How hard the tick-pattern property searches; set KENT_CORE_EXAMPLES=4000 to dig."""
CALM = permit_variant({"alerting.stale_after_s": 864000})
"""The example permit with no sensor ever going stale: only counts matter here."""
PROPERTY_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# -- counting -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    gate: str
    seq: int
    in_total: int
    out_total: int
    ts: datetime

    def payload(self) -> bytes:
        return gate_count(self.seq, self.ts, self.in_total, self.out_total)


@st.composite
def gate_histories(draw: st.DrawFn) -> dict[str, list[Message]]:
    """Each gate's messages: seq rising by one from 0, 1 or later; totals never falling."""
    histories: dict[str, list[Message]] = {}
    start = local(12)
    for gate in GATES:
        first_seq = draw(st.sampled_from([0, 1, 2, 57]))
        steps = draw(
            st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=0, max_size=12)
        )
        base_in = draw(st.integers(0, 2000))
        base_out = draw(st.integers(0, base_in))
        in_total, out_total = base_in, base_out
        messages = []
        for k, (d_in, d_out) in enumerate(steps):
            if k:
                in_total += d_in
                out_total += d_out
            ts = start + timedelta(seconds=k * 5 + GATES.index(gate))
            messages.append(Message(gate, first_seq + k, in_total, out_total, ts))
        histories[gate] = messages
    return histories


def expected_totals(histories: dict[str, list[Message]]) -> tuple[int, int, int]:
    last = [h[-1] for h in histories.values() if h]
    entries = sum(m.in_total for m in last)
    exits = sum(m.out_total for m in last)
    return entries - exits, entries, exits


def run(messages: list[Message]) -> Engine:
    engine = Engine(CALM, clock="sensor")
    for m in messages:
        result = engine.feed(TOPICS.gate_count(m.gate), m.payload(), m.ts)
        assert result.accepted, result.reason
    return engine


@st.composite
def interleavings(draw: st.DrawFn) -> tuple[dict[str, list[Message]], list[Message]]:
    """A history and one merge of its gates that keeps each gate's own order."""
    histories = draw(gate_histories())
    labels = [gate for gate, msgs in histories.items() for _ in msgs]
    order = draw(st.permutations(labels))
    cursor = dict.fromkeys(histories, 0)
    merged = []
    for gate in order:
        merged.append(histories[gate][cursor[gate]])
        cursor[gate] += 1
    return histories, merged


@PROPERTY_SETTINGS
@given(interleavings())
def test_any_interleaving_gives_the_same_attendance(
    case: tuple[dict[str, list[Message]], list[Message]],
) -> None:
    histories, merged = case
    current, entries, exits = expected_totals(histories)
    status = msgspec.to_builtins(run(merged).status())
    assert status["attendance"]["current"] == max(current, 0)  # never below 0
    assert status["attendance"]["entries"] == entries
    assert status["attendance"]["exits"] == exits
    for gate, msgs in histories.items():
        if msgs:
            assert status["gates"][gate]["in"] == msgs[-1].in_total
            assert status["gates"][gate]["restarts"] == 0
    assert status["rejected"] == 0


@st.composite
def redeliveries(draw: st.DrawFn) -> tuple[list[Message], list[Message]]:
    """A merged feed, and the same feed with copies of messages inserted after them."""
    _, merged = draw(interleavings())
    feed = list(merged)
    if not feed:
        return merged, feed
    for _ in range(draw(st.integers(1, 12))):
        original = draw(st.sampled_from(merged))
        after = feed.index(original)
        feed.insert(draw(st.integers(after + 1, len(feed))), original)
    return merged, feed


@PROPERTY_SETTINGS
@given(redeliveries())
def test_duplicates_and_redeliveries_change_nothing(
    case: tuple[list[Message], list[Message]],
) -> None:
    clean, noisy = case
    a = run(clean)
    b = run(noisy)
    sa, sb = msgspec.to_builtins(a.status()), msgspec.to_builtins(b.status())
    assert sb["attendance"] == sa["attendance"]
    for gate in GATES:
        for key in ("in", "out", "net", "restarts"):
            assert sb["gates"][gate][key] == sa["gates"][gate][key]
    assert b.alerts == a.alerts
    assert sb["rejected"] == 0


def test_a_redelivered_first_message_is_the_case_that_used_to_double_count() -> None:
    """The example hypothesis found: seq 1 redelivered after seq 2 with higher totals."""
    first = Message("north", 1, 0, 0, local(12))
    second = Message("north", 2, 10, 0, local(12, 0, 5))
    third = Message("north", 3, 12, 0, local(12, 0, 10))
    engine = run([first, second, first, third])
    assert engine.status().attendance.current == 12
    assert not [a for a in engine.alerts.values() if a.rule == "counter-reset"]


# -- required staff and parking ---------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.integers(-10, 10**7),
    st.integers(0, 10**6),
    st.integers(1, law.PERSONS_PER_NURSE),
)
def test_required_nurses_and_spaces_never_fall_as_attendance_rises(
    attendance: int, rise: int, per_nurse: int
) -> None:
    more = attendance + rise
    assert law.nurses_required(attendance, per_nurse) <= law.nurses_required(more, per_nurse)
    assert law.car_spaces_required(attendance) <= law.car_spaces_required(more)
    assert law.nurses_required(attendance) <= law.nurses_required(more)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**7), st.integers(1, law.PERSONS_PER_NURSE))
def test_required_counts_are_the_least_that_suffice(attendance: int, per_nurse: int) -> None:
    nurses = law.nurses_required(attendance, per_nurse)
    assert nurses * per_nurse >= attendance > (nurses - 1) * per_nurse
    spaces = law.car_spaces_required(attendance)
    assert spaces * 4 >= attendance > (spaces - 1) * 4


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=1, max_size=25))
def test_the_status_requirements_never_fall_while_attendance_rises(rises: list[int]) -> None:
    d = Driver(CALM)
    nurses, spaces = 0, 0
    t = local(12)
    total = 0
    for rise in rises:
        total += rise
        t += timedelta(seconds=1)
        d.gate("north", t, total, 0)
        status = d.status()
        assert status["medical"]["nurses_required"] >= nurses
        assert status["parking"]["spaces_required"] >= spaces
        nurses = status["medical"]["nurses_required"]
        spaces = status["parking"]["spaces_required"]
    assert nurses == law.nurses_required(total)
    assert spaces == law.car_spaces_required(total)


# -- the alert lifecycle against a model --------------------------------------------------------

LOT_CAPACITY = 600
FULL, NOT_FULL = 570, 100


@dataclass
class Expected:
    since: datetime
    raised_at: datetime
    ended_at: datetime | None
    cleared_at: datetime | None = None


def model(
    events: list[tuple[datetime, bool]], start: datetime, end: datetime, p: timedelta, c: timedelta
) -> list[Expected]:
    """The alert lifecycle for one condition, written as plainly as possible."""
    intervals: list[tuple[datetime, datetime | None]] = []
    on_since: datetime | None = None
    for t, on in events:
        if on and on_since is None:
            on_since = t
        elif not on and on_since is not None:
            intervals.append((on_since, t))
            on_since = None
    if on_since is not None:
        intervals.append((on_since, None))
    alerts: list[Expected] = []
    live: Expected | None = None
    for a, b in intervals:
        if live is not None and live.ended_at is not None and live.ended_at + c <= a:
            live.cleared_at = live.ended_at + c
            live = None
        if live is not None:  # back within clear_s: the same alert continues
            live.ended_at = b
            continue
        held_long_enough = (end - a >= p) if b is None else (b - a >= p)
        if held_long_enough:
            live = Expected(since=a, raised_at=a + p, ended_at=b)
            alerts.append(live)
    if live is not None and live.ended_at is not None and live.ended_at + c <= end:
        live.cleared_at = live.ended_at + c
    return alerts


gaps = st.one_of(
    st.integers(1, 45).map(lambda s: timedelta(seconds=s)),
    st.integers(1, 45_000).map(lambda ms: timedelta(milliseconds=ms)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([0, 5, 10]),
    st.sampled_from([0, 7, 30]),
    st.lists(st.tuples(gaps, st.booleans(), st.none() | st.floats(0, 1)), min_size=1, max_size=30),
    st.integers(0, 120),
)
def test_no_alert_before_its_condition_has_held_pending_s(
    pending_s: int,
    clear_s: int,
    steps: list[tuple[timedelta, bool, float | None]],
    tail_s: int,
) -> None:
    d = Driver(
        permit_variant(
            {
                "alerting.pending_s": pending_s,
                "alerting.clear_s": clear_s,
                "alerting.stale_after_s": 864000,
            }
        )
    )
    p, c = timedelta(seconds=pending_s), timedelta(seconds=clear_s)
    start = local(9)
    d.lot("lot-a", start, NOT_FULL)
    t = start
    events: list[tuple[datetime, bool]] = []
    for gap, on, tick_at in steps:
        if tick_at is not None:
            d.tick(t + gap * tick_at)
            check_invariants(d, p)
        t += gap
        assert d.lot("lot-a", t, FULL if on else NOT_FULL).accepted
        events.append((t, on))
        check_invariants(d, p)
    end = t + timedelta(seconds=tail_s)
    d.tick(end)
    check_invariants(d, p)
    got = [
        Expected(when(a["since"]), when(a["raised_at"]), when(a["ended_at"]), when(a["cleared_at"]))  # type: ignore[arg-type]
        for a in d.alerts("lot-full", "lot-a")
    ]
    assert got == model(events, start, end, p, c)


def check_invariants(d: Driver, p: timedelta) -> None:
    """At any moment: alerts raised exactly pending_s after they began, none in the future."""
    now = d.engine.now
    assert now is not None
    for alert in d.alerts("lot-full"):
        since, raised = when(alert["since"]), when(alert["raised_at"])
        assert since is not None
        assert raised is not None
        assert raised - since == p
        assert raised <= now
    for waiting in d.pending("lot-full"):
        since = when(waiting["since"])
        assert since is not None
        assert since <= now < since + p


def test_the_model_itself_on_a_written_example() -> None:
    """A check on the checker: the model agrees with the protocol on a history worked by hand."""
    t0 = local(12)

    def at(s: float) -> datetime:
        return t0 + timedelta(seconds=s)

    events = [(at(0), True), (at(5), False), (at(20), True), (at(40), False), (at(60), True),
              (at(61), False), (at(200), True)]  # fmt: skip
    got = model(events, t0, at(300), timedelta(seconds=10), timedelta(seconds=30))
    assert got == [
        Expected(at(20), at(30), at(61), at(91)),
        Expected(at(200), at(210), None, None),
    ]


# -- ticks and looks never change the outcome --------------------------------------------------


steps = st.lists(
    st.tuples(
        st.integers(1, 9000).map(lambda ms: timedelta(milliseconds=ms)),
        st.one_of(
            st.tuples(
                st.just("gate"), st.sampled_from(GATES[:2]), st.integers(0, 25), st.integers(0, 25)
            ),  # fmt: skip
            st.tuples(st.just("restart"), st.sampled_from(GATES[:2]), st.integers(0, 5)),
            st.tuples(
                st.just("badge"),
                st.sampled_from(["doctor", "nurse", "security"]),
                st.integers(0, 3),
                st.booleans(),
            ),  # fmt: skip
            st.tuples(st.just("lot"), st.sampled_from(["lot-a", "lot-b"]), st.integers(0, 4)),
            st.tuples(
                st.just("availability"),
                st.sampled_from(["north", "lot-a", "first-aid"]),
                st.booleans(),
            ),  # fmt: skip
            st.tuples(st.just("adjust"), st.integers(0, 80)),
        ),
        st.lists(st.floats(0, 1), max_size=3),
        st.sampled_from([0, 0, 0, 31, -45, 90]),
    ),
    min_size=1,
    max_size=40,
)


def play(
    permit_changes: dict[str, object],
    history: list[Any],
    *,
    ticking: bool,
    clock: str,
    every_message: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Feed ``history``; on the wall clock a sensor's ``ts`` is off by its skew.

    ``every_message`` turns off the engine's shortcut of deferring the rule pass while
    attendance moves between thresholds, so the shortcut can be checked against the
    plain engine that evaluates every rule after every message.
    """
    d = Driver(permit_variant(permit_changes), clock=clock)
    if every_message:
        d.engine._within_band = lambda: False  # type: ignore[method-assign]
    seq: dict[str, int] = {}
    totals = {g: [0, 0] for g in GATES}
    t = local(12)
    d.tick(t)
    for gap, action, ticks, skew_s in history:
        if ticking:
            for frac in sorted(ticks):
                d.tick(t + gap * frac)
                d.engine.collect_changes()
                d.engine.alerts  # noqa: B018 - looking must not change anything
        t += gap
        ts = t + timedelta(seconds=skew_s) if clock == "wall" else t
        kind = action[0]
        if kind in ("gate", "restart"):
            gate = action[1]
            if kind == "gate":
                totals[gate][0] += action[2]
                totals[gate][1] += action[3]
                seq[gate] = seq.get(gate, 0) + 1
            else:
                totals[gate] = [action[2], 0]
                seq[gate] = 0
            d.gate(gate, ts, totals[gate][0], totals[gate][1], seq=seq[gate], received=t)
        elif kind == "badge":
            action_ = "on" if action[3] else "off"
            d.badge(ts, f"{action[1]}-{action[2]}", action[1], action_, received=t)
        elif kind == "lot":
            d.lot(action[1], ts, action[2], received=t)
        elif kind == "availability":
            d.availability(action[1], t, "online" if action[2] else "offline")
        else:
            d.inspector("insp-1", "adjust", t, attendance=action[1], reason="sweep")
    d.tick(t + timedelta(seconds=60))
    return d.status(), msgspec.to_builtins(d.engine.alerts)


@settings(
    max_examples=DEEP_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.sampled_from([0, 2, 5]),
    st.sampled_from([0, 3, 10]),
    st.sampled_from(["sensor", "wall"]),
    st.sampled_from(["issued", "pending"]),
    steps,
)
def test_ticking_and_looking_never_change_status_or_alerts(
    pending_s: int, clear_s: int, clock: str, status: str, history: list[Any]
) -> None:
    changes = {
        **TIGHT,
        "alerting.pending_s": pending_s,
        "alerting.clear_s": clear_s,
        "permit.status": status,
    }
    quiet_status, quiet_alerts = play(changes, history, ticking=False, clock=clock)
    busy_status, busy_alerts = play(changes, history, ticking=True, clock=clock)
    assert busy_alerts == quiet_alerts
    assert busy_status == quiet_status


def without_observed(alerts: dict[str, Any]) -> dict[str, Any]:
    """Alerts minus their latest figures, which the shortcut refreshes less often by design.

    ``observed`` (and the message made from it) is the figure at the last rule pass; the
    shortcut skips passes in which no rule can change, so only those may differ.
    """
    return {
        aid: {k: v for k, v in a.items() if k not in ("observed", "required", "message")}
        for aid, a in alerts.items()
    }


@settings(
    max_examples=DEEP_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.sampled_from([0, 2, 5]),
    st.sampled_from([0, 3, 10]),
    st.sampled_from(["sensor", "wall"]),
    st.sampled_from(["issued", "pending"]),
    steps,
)
def test_deferring_rule_passes_between_thresholds_changes_no_finding(
    pending_s: int, clear_s: int, clock: str, status: str, history: list[Any]
) -> None:
    changes = {
        **TIGHT,
        "alerting.pending_s": pending_s,
        "alerting.clear_s": clear_s,
        "permit.status": status,
    }
    fast_status, fast_alerts = play(changes, history, ticking=False, clock=clock)
    plain_status, plain_alerts = play(
        changes, history, ticking=False, clock=clock, every_message=True
    )
    assert without_observed(fast_alerts) == without_observed(plain_alerts)
    assert fast_status == plain_status
