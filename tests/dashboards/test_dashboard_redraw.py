"""What a status costs the inspector's dashboard: what is drawn again, and how often.

The panels are pure functions of the status; these tests check that the app asks
them again only for what changed: statuses from the feed drawn four times a second
at most (the newest always), the trend line once a second, a border title only when
its words change. No broker: statuses are handed to the app as the feed hands them.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import dashboard_samples as samples
import pytest

from dashboards.common import feed_app
from dashboards.common.clock import fixed_clock
from dashboards.common.messages import StatusReceived
from dashboards.inspector import app as inspector_app
from dashboards.inspector.app import InspectorApp
from dashboards.inspector.widgets.tables import GatesTable
from kent_ops.core import wire


class CountingApp(InspectorApp):
    """The inspector's app, counting the statuses it draws."""

    CSS_PATH = Path(inspector_app.__file__).parent / "inspector.tcss"

    def __init__(self) -> None:
        super().__init__(samples.EVENT, None, "insp-2", clock=fixed_clock(samples.NOW))
        self.drawn: list[int] = []

    def show_status(self, status: wire.Status) -> None:
        self.drawn.append(status.attendance.current)
        super().show_status(status)


def app() -> CountingApp:
    return CountingApp()


def status(current: int, seconds: float = 0.0) -> StatusReceived:
    att = {**samples.status_data()["attendance"], "current": current}
    ts = samples.iso(samples.STATUS_TS + timedelta(seconds=seconds))
    return StatusReceived(samples.status(attendance=att, ts=ts), samples.NOW)


async def test_statuses_close_together_are_drawn_four_a_second_the_newest_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dashboard = app()
    assert dashboard.STATUS_EVERY_S == 0.25
    # The three statuses come within one instant of the app's clock, however slowly a
    # busy machine hands them over (the drawing's timer still runs on Textual's own).
    frozen = time.monotonic()
    monkeypatch.setattr(feed_app, "time", SimpleNamespace(monotonic=lambda: frozen))
    async with dashboard.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for current in (1000, 1001, 1002):  # each handled before the next comes
            dashboard.post_message(status(current))
            await pilot.pause()
        assert dashboard.drawn == [1000]  # the first at once; the others came too soon
        for _ in range(50):  # the timer's 0.25 s, and then some on a busy machine
            if len(dashboard.drawn) > 1:
                break
            await pilot.pause(0.1)
        assert dashboard.drawn == [1000, 1002]  # then the newest: 1001 was overtaken
        assert dashboard.status is not None
        assert dashboard.status.attendance.current == 1002


async def test_the_trend_line_moves_once_a_second_not_at_every_status() -> None:
    dashboard = app()
    async with dashboard.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        dashboard.show_status(status(1000, 0.0).status)
        first = dashboard.trend
        assert first[-1][1] == 1000
        dashboard.show_status(status(1200, 0.5).status)  # the same second, higher
        assert dashboard.trend is first
        dashboard.show_status(status(1100, 1.0).status)  # the next second
        assert [v for _, v in dashboard.trend[-2:]] == [1200, 1100]


async def test_a_border_title_is_set_only_when_its_words_change() -> None:
    dashboard = app()
    async with dashboard.run_test(size=(120, 40)) as pilot:
        dashboard.show_status(samples.status())
        await pilot.pause()
        table = dashboard.screen.query_one(GatesTable)
        title = table.border_title
        refreshed: list[bool] = []
        original = table.refresh

        def refresh(*args: object, **kwargs: object) -> object:
            refreshed.append(True)
            return original(*args, **kwargs)  # type: ignore[arg-type]

        table.refresh = refresh  # type: ignore[method-assign]
        dashboard.screen._titles()  # type: ignore[attr-defined]
        assert table.border_title == title
        assert refreshed == []
