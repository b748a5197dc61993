"""Foresight (docs/protocol.md, "Foresight"): when attendance reaches ``hold_at``.

Scripted crowds (a steady ramp, an accelerating one, a burst then a lull, a falling
crowd) are fed through two gate counters that report every 30 s, 15 s apart, as real
ones do; at each message the engine's forecast is set against the true time the
script's crowd takes to reach ``hold_at`` from that instant.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from core_support import QUICK, Driver, local, permit_variant

from kent_ops.core.engine import Engine
from kent_ops.core.foresight import hold_in, hold_minutes, hold_words, quantise

HOLD_AT = 4000
PERMIT = permit_variant({**QUICK, "alerting.hold_at": HOLD_AT, "alerting.resume_below": 3960})
T0 = local(10)
START = 3000
"""Persons inside when the aggregator first hears the gates (their first readings)."""
SHARES = (("north", 0.6), ("south", 0.4))

Curve = Callable[[float], float]
"""Persons by minute ``m`` since T0: arrived (or left) since the start, cumulative."""


@dataclass(frozen=True, slots=True)
class Seen:
    """One message of a ramp: when, the forecast then, and the truth."""

    minute: float
    attendance: int
    forecast: int | None
    truth: int | None
    command: int | None


def truth(arrived: Curve, left: Curve, m: float) -> int | None:
    """Seconds from minute ``m`` until the script's crowd reaches ``hold_at`` (None:
    never within four hours, or there already)."""
    if START + arrived(m) - left(m) >= HOLD_AT:
        return None
    for s in range(1, 4 * 3600):
        later = m + s / 60
        if START + arrived(later) - left(later) >= HOLD_AT:
            return s
    return None


def ramp(
    arrived: Curve,
    left: Curve,
    minutes: float = 60,
    *,
    each: Callable[[Driver], None] | None = None,
    driver: Driver | None = None,
    from_message: int = 0,
) -> tuple[Driver, list[Seen]]:
    """Feed the crowd through north and south (60% and 40% of it) every 30 s, 15 s
    apart; return what was seen at each message."""
    d = driver or Driver(PERMIT)
    seen = []
    for k in range(from_message, int(minutes * 4)):
        m = k / 4
        gate, share = SHARES[k % 2]
        in_total = math.floor(START * share + share * arrived(m))
        out_total = math.floor(share * left(m))
        assert d.gate(gate, T0 + timedelta(minutes=m), in_total, out_total).accepted
        if each is not None:
            each(d)
        att = d.status()["attendance"]
        command = d.engine.foresight.command_hold_in_s
        seen.append(Seen(m, att["current"], att["hold_in_s"], truth(arrived, left, m), command))
    return d, seen


def steady(m: float) -> float:
    return 30 * m  # 30 in a minute, 10 out: 20 a minute net


def steady_out(m: float) -> float:
    return 10 * m


def accelerating(m: float) -> float:
    return 10 * m + 1.5 * m * m  # 10 a minute at first, 3 more each minute


def burst(m: float) -> float:
    return 0 if m < 12 else min(600, 300 * (m - 12))  # 600 in minutes 12-14, then none


def none(m: float) -> float:
    return 0


# -- the ramps -----------------------------------------------------------------------------


def test_no_forecast_until_ten_minutes_have_been_seen() -> None:
    _, seen = ramp(steady, steady_out, minutes=11)
    assert all(s.forecast is None for s in seen if s.minute < 10)
    assert all(s.forecast is not None for s in seen if s.minute >= 10)


def test_a_steady_ramp_is_forecast_to_within_the_counters_lag() -> None:
    """20 persons a minute net from 3,000: HOLD at 4,000 50 minutes in. The forecast
    trails the truth by the seconds the other gate's last report is behind (6 s here;
    a minute at the first forecast, whose window starts before that gate was heard)."""
    _, seen = ramp(steady, steady_out)
    forecast = [s for s in seen if 10 <= s.minute < 50]
    assert forecast
    for s in forecast:
        assert s.truth is not None
        assert s.forecast is not None
        assert 0 <= s.forecast - s.truth <= (60 if s.minute < 10.5 else 15), s
    at_20 = next(s for s in seen if s.minute == 20)
    assert (at_20.truth, at_20.forecast) == (1800, 1806)
    assert all(s.forecast is None for s in seen if s.attendance >= HOLD_AT)


def test_an_accelerating_crowd_is_forecast_late_and_the_forecast_closes_in() -> None:
    """The rate of the last 10 minutes is below the rate now: the HOLD comes sooner than
    forecast, and the gap shrinks as it nears (the screens say "about")."""
    _, seen = ramp(accelerating, none, minutes=30)
    forecast = [s for s in seen if s.forecast is not None and s.truth is not None]
    assert forecast
    assert forecast[0].minute == 10
    for s in forecast:
        assert s.truth is not None
        assert s.forecast is not None
        assert s.forecast >= s.truth, s
    gaps = [s.forecast - s.truth for s in forecast if s.forecast and s.truth]
    assert gaps[0] > 1000  # 31 min forecast, 13 min true, 10 minutes in
    assert gaps[-1] < 30  # the last forecast before the HOLD
    assert all(b <= a + 10 for a, b in zip(gaps, gaps[1:], strict=False))  # closing in
    under = [s for s in forecast if hold_words(s.forecast) is not None]
    assert under[0].truth is not None
    assert under[0].truth < 30 * 60


def test_a_burst_then_a_lull_is_forecast_until_the_burst_leaves_the_window() -> None:
    """600 persons in two minutes, then nobody: the crowd never reaches 4,000, but for
    the 10 minutes the burst is in the window its rate says it will. Advice, not a
    finding: the forecast goes when the burst leaves the window."""
    _, seen = ramp(burst, none, minutes=40)
    assert all(s.truth is None for s in seen)
    burst_in_window = [s for s in seen if 14.25 <= s.minute <= 22]
    assert {s.forecast for s in burst_in_window} == {400}  # 600 in 10 min: 400 to go
    leaving = [s.forecast for s in seen if 22 < s.minute < 24.25]
    assert leaving == sorted(leaving)
    assert None not in leaving
    assert all(s.forecast is None for s in seen if s.minute >= 24.25)
    assert all(s.forecast is None for s in seen if s.minute < 12)


def test_a_falling_crowd_has_no_forecast() -> None:
    _, seen = ramp(lambda m: 5 * m, lambda m: 25 * m)
    assert [s.forecast for s in seen] == [None] * len(seen)
    assert [s.command for s in seen] == [None] * len(seen)


def test_a_crowd_that_stands_still_has_no_forecast() -> None:
    _, seen = ramp(none, none, minutes=20)
    assert {s.forecast for s in seen} == {None}


# -- what counts as arrivals ------------------------------------------------------------------


def test_an_inspectors_adjustment_is_not_persons_arriving() -> None:
    """Attendance set 500 higher by a sweep count: the forecast reads the gate counts,
    so a still crowd stays without one, and a steady one keeps its rate."""

    def adjust_at_12(d: Driver) -> None:
        if d.engine.now == T0 + timedelta(minutes=12):
            assert d.inspector(
                "insp-1", "adjust", T0 + timedelta(minutes=12), attendance=3500, reason="sweep"
            ).accepted

    _, still = ramp(none, none, minutes=25, each=adjust_at_12)
    assert {s.forecast for s in still} == {None}
    assert still[-1].attendance == 3500
    _, moving = ramp(steady, steady_out, minutes=25, each=adjust_at_12)
    after = [s for s in moving if s.minute >= 13]
    # 20 a minute from 500 further up: (4000 - attendance) / 20 minutes, to the lag.
    assert all(abs(s.forecast - (HOLD_AT - s.attendance) * 3) <= 15 for s in after if s.forecast)


def test_a_gate_first_heard_late_is_where_it_starts_not_arrivals() -> None:
    """A counter first heard 12 minutes in with 900 persons on it since its device
    started: a start, not 900 arrivals in the window."""
    d = Driver(PERMIT)
    for k in range(4 * 30):
        t = T0 + timedelta(seconds=15 * k)
        assert d.gate("north", t, 3000, 0).accepted
        if k == 48:
            assert d.gate("south", t, 900, 0).accepted
        assert d.status()["attendance"]["hold_in_s"] is None
    assert d.attendance == 3900


# -- the commands -----------------------------------------------------------------------------


def test_the_command_carries_whole_minutes_at_most_once_a_minute() -> None:
    """A gate command is retained and logged at each change: its figure moves once a
    minute on a steady ramp, never more, always whole minutes."""
    published: list[tuple[datetime | None, int | None, bool]] = []

    def collect(d: Driver) -> None:
        for command in d.engine.collect_changes().commands.values():
            published.append((d.engine.now, command.hold_in_s, command.admit))
            break

    d, seen = ramp(steady, steady_out, each=collect)
    figures = [(at, figure) for at, figure, admit in published if figure is not None]
    assert all(figure % 60 == 0 for _, figure in figures)
    minutes = [at.replace(second=0, microsecond=0) for at, _ in figures if at is not None]
    assert len(minutes) == len(set(minutes))  # never twice in one minute
    assert 38 <= len(figures) <= 41  # about one a minute, from minute 10 to 50
    at_20 = next(s for s in seen if s.minute == 20)
    assert at_20.command == quantise(at_20.forecast) == 1800
    # When the HOLD comes, its command carries no forecast: attendance is there.
    holding = [(figure, admit) for _, figure, admit in published if not admit]
    assert holding == [(None, False)]
    assert d.engine.commands()["north"].hold_in_s is None


def test_the_forecast_is_not_a_finding() -> None:
    """No alert of any rule is raised by a forecast, however near the HOLD."""
    d = Driver(PERMIT)
    d.staff(T0 - timedelta(minutes=1), doctors=1, nurses=8, security=20)
    d, seen = ramp(steady, steady_out, minutes=49, driver=d)
    assert hold_words(seen[-1].forecast) == "HOLD in about 1 min"
    assert d.engine.alerts == {}
    assert d.status()["pending"] == []


# -- live and replay agree ---------------------------------------------------------------------


def test_ticks_and_looks_between_messages_change_no_forecast() -> None:
    """The live engine ticks and publishes at instants a replay never sees: the forecast
    is taken at messages only, so both say the same at every message."""

    def busy(d: Driver) -> None:
        now = d.engine.now
        assert now is not None
        for s in (1, 4, 9, 14):
            d.tick(now + timedelta(seconds=s))
            d.engine.collect_changes()

    _, quiet = ramp(accelerating, none, minutes=30)
    d, noisy = ramp(accelerating, none, minutes=30, each=busy)
    assert [(s.forecast, s.command) for s in noisy] == [(s.forecast, s.command) for s in quiet]


def test_a_restored_engine_forecasts_as_one_that_never_stopped() -> None:
    whole, seen = ramp(accelerating, none, minutes=30)
    first, _ = ramp(accelerating, none, minutes=15)
    again = Driver(PERMIT)
    again.engine = Engine.restore(PERMIT, first.engine.snapshot(), "sensor")
    again.seq, again.totals = dict(first.seq), dict(first.totals)
    _, rest = ramp(accelerating, none, minutes=30, driver=again, from_message=60)
    assert rest == seen[60:]
    assert again.engine.foresight == whole.engine.foresight


# -- the sum and the words ---------------------------------------------------------------------

S = 1_000_000


def test_the_window_start_is_interpolated_between_the_samples_around_it() -> None:
    """10 minutes before t falls between samples at -11 min (100) and -9 min (300): the
    count then reads 200; now 400, so 200 in 10 minutes, 20 a minute."""
    samples = deque([(0, 100), (120 * S, 300), (660 * S, 400)])
    assert hold_in(samples, 3000, 4000) == 3000  # 1,000 at 20 a minute: 50 min


def test_a_window_start_past_samples_not_yet_trimmed_reads_the_segment_it_is_in() -> None:
    """Within a second a message only moves the last sample, so the window's start may
    have passed a sample or two since the samples were trimmed: 10 minutes before 601.9 s
    is 1.9 s, between the samples at 1.5 s (10) and 2.0001 s (20), not past the one at
    1.5 s (which would read 12.7 and forecast 688 s)."""
    samples = deque([(0, 0), (1_500_000, 10), (2_000_100, 20), (601_900_000, 100)])
    at_start = 10 + 10 * 400_000 / 500_100
    assert hold_in(samples, 1000, 1100) == math.ceil(100 * 600 / (100 - at_start)) == 732


def test_no_forecast_at_or_past_hold_at_or_without_a_rise() -> None:
    samples = deque([(0, 0), (600 * S, 100)])
    assert hold_in(samples, 4000, 4000) is None
    assert hold_in(samples, 4100, 4000) is None
    assert hold_in(deque([(0, 100), (600 * S, 100)]), 10, 4000) is None
    assert hold_in(deque([(1, 0), (600 * S, 100)]), 10, 4000) is None  # < 10 min
    assert hold_in(samples, 3999, 4000) == 6  # a tenth of a minute's rise: 6 s


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (None, None),
        (1, "HOLD in about 1 min"),
        (89, "HOLD in about 1 min"),
        (90, "HOLD in about 2 min"),
        (720, "HOLD in about 12 min"),
        (1769, "HOLD in about 29 min"),
        (1770, None),
        (7200, None),
    ],
)
def test_the_words_say_about_how_many_minutes_under_thirty(
    seconds: int | None, words: str | None
) -> None:
    assert hold_words(seconds) == words
    assert hold_words(quantise(seconds)) == words  # the command's figure reads the same


def test_the_command_figure_is_whole_minutes_never_zero() -> None:
    assert [quantise(s) for s in (None, 1, 29, 30, 749, 750)] == [None, 60, 60, 60, 720, 780]
    assert hold_minutes(20) == 1
