"""The aggregator's "now" read from its status: one clock for whatever stamps a message."""

from __future__ import annotations

from datetime import UTC, datetime

from kent_ops.core import wire
from kent_ops.core.aggregator_time import aggregator_now, sensor_time

WALL = datetime(2026, 12, 1, 22, 38, 25, tzinfo=UTC)
SIMULATED = datetime(2027, 7, 4, 18, 3, 7, tzinfo=UTC)


def status(clock: str, ts: datetime | None = SIMULATED) -> wire.Status:
    return wire.Status(ts=ts, event="fest", attendance=wire.Attendance(current=0), clock=clock)


def test_on_the_sensors_clock_now_is_the_statuss_time() -> None:
    assert aggregator_now(status("sensor"), WALL) == SIMULATED
    assert sensor_time(status("sensor")) == SIMULATED


def test_on_the_wall_clock_or_with_nothing_known_now_is_the_wall_clock() -> None:
    assert aggregator_now(status("wall"), WALL) == WALL
    assert aggregator_now(None, WALL) == WALL
    assert aggregator_now(status("sensor", ts=None), WALL) == WALL
    assert sensor_time(status("wall")) is None
