"""Bounding what a browser sends, and handing a seat over: pure parts, on a test clock.

The same behaviour end to end, with a real ``kent-ops serve`` and real app processes,
is in test_serve_bounds.py.
"""

from __future__ import annotations

import asyncio

import pytest

from kent_ops.commands import serve_parsers
from kent_ops.web.apps import APP_MEMORY_MB
from kent_ops.web.relay import MOST_COLS, MOST_ROWS, Pacer, size_from_query, terminal_size
from kent_ops.web.seats import Seats


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("width", "height", "size"),
    [
        (100_000, 100_000, (MOST_COLS, MOST_ROWS)),
        (43, 40, (43, 40)),
        (0, -5, (10, 5)),
        (120.0, 30.0, (120, 30)),
        (10**400, 24, (MOST_COLS, 24)),
        (float("inf"), 24, None),
        (float("nan"), 24, None),
        (80.5, 24, None),
        ("80", 24, None),
        (True, 24, None),
        (None, 24, None),
        ([80], 24, None),
    ],
)
def test_a_terminal_size_is_clamped_or_ignored(width: object, height: object, size: object) -> None:
    assert terminal_size(width, height) == size


def test_the_first_size_comes_from_the_url_bounded_too() -> None:
    assert size_from_query({"width": "43", "height": "40"}) == (43, 40)
    assert size_from_query({"width": "100000", "height": "100000"}) == (MOST_COLS, MOST_ROWS)
    assert size_from_query({"width": "9" * 5000, "height": "x"}) == (80, 24)
    assert size_from_query({}) == (80, 24)


def test_the_pacer_lets_a_burst_through_then_keeps_to_its_rate() -> None:
    clock = Clock()
    pacer = Pacer(rate=100, burst=10, clock=clock)
    assert [pacer.delay() for _ in range(10)] == [0.0] * 10
    assert pacer.delay() == pytest.approx(0.01)
    assert pacer.delay() == pytest.approx(0.02)  # a flood waits longer and longer
    clock.now += 1.0  # a quiet second refills the burst, no more
    assert [pacer.delay() for _ in range(8)] == [0.0] * 8


async def test_twenty_openings_at_once_start_only_the_newest_and_one_at_a_time() -> None:
    seats = Seats(gap_s=0)
    held: list[int] = []
    started: list[int] = []

    async def open_seat() -> None:
        ticket = seats.ticket("gate:north")
        async with seats.turn("gate:north", ticket) as mine:
            held.append(ticket)
            assert len(held) == 1  # nobody else holds the seat meanwhile
            await asyncio.sleep(0)
            if mine:
                started.append(ticket)
            held.remove(ticket)

    await asyncio.gather(*(open_seat() for _ in range(20)))
    # The first may start before the others arrive; then only the newest replaces it.
    assert started[-1] == 20
    assert len(started) <= 2
    assert not seats.superseded("gate:north", 20)


async def test_a_seat_starts_at_most_once_per_gap() -> None:
    clock = Clock()
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)
        clock.now += seconds

    seats = Seats(gap_s=2.0, clock=clock, sleep=sleep)
    ticket = seats.ticket("insp-1")
    async with seats.turn("insp-1", ticket) as mine:
        assert mine  # the first start does not wait
    clock.now += 0.5
    ticket = seats.ticket("insp-1")
    async with seats.turn("insp-1", ticket) as mine:
        assert mine
    assert waited == [1.5]


def test_the_command_line_default_is_the_apps_own() -> None:
    assert serve_parsers.APP_MEMORY_MB == APP_MEMORY_MB
