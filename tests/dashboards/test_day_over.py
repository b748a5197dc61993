"""The demo's day, as its screens tell it: one clock, an unused tally that is no fault,
an end that is said rather than shown as an outage, and toasts that keep off dialogs.

The snapshots build the views as the demo does (no injected clock), from a status on
the sensors' clock at the end of the permitted window, so the screens show the
simulation's time; they are drawn at 120×40 and 80×24.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dashboard_samples as samples
import pytest
from rich.console import Console, RenderableType
from textual.pilot import Pilot

from dashboards.common.clock import FollowingClock, fixed_clock
from dashboards.common.format import figure_phrase
from dashboards.gate.app import GateApp, make_gate_app
from dashboards.inspector.app import InspectorApp, make_inspector_app
from dashboards.inspector.panels.alerts import alert_detail
from dashboards.inspector.panels.tables import gate_rows
from dashboards.inspector.screens.forms import AckForm
from dashboards.inspector.widgets.notice import NoticeBar
from kent_ops.commands.demo import alert_summary, day_over_line
from kent_ops.core import wire
from kent_ops.core.permit import load_permit
from kent_ops.core.rules import shown_message

SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]
SnapCompare = Any

DAY_END = datetime(2027, 7, 5, 3, 30, tzinfo=UTC)  # 23:30 EDT, the window's end
PERMIT = Path(__file__).resolve().parents[2] / "examples" / "permit.toml"
UNUSED_TALLY = {
    "in": 0,
    "out": 0,
    "net": 0,
    "per_minute": 0.0,
    "last_seen": None,
    "online": False,
    "manual": True,
}


def day_over_status() -> wire.Status:
    """The aggregator's status as the simulated day ends: on the sensors' clock, the
    window just over, the deputy's tally never used."""
    data = samples.status_data()
    gates = {**data["gates"], "north-manual": UNUSED_TALLY}
    for gate in ("north", "south"):
        gates[gate] = {**gates[gate], "online": True, "last_seen": DAY_END.isoformat()}
    return samples.status(
        ts=DAY_END.isoformat(),
        clock="sensor",
        window={
            "inside": False,
            "start": (DAY_END - timedelta(hours=11)).isoformat(),
            "end": DAY_END.isoformat(),
        },
        gates=gates,
        attendance={**data["attendance"], "uncertain": False},
    )


def rendered(renderable: RenderableType) -> str:
    """What a renderable shows, as plain text, 120 columns wide."""
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def inspector_after_the_day() -> InspectorApp:
    return make_inspector_app(
        samples.EVENT,
        None,
        "demo-inspector",
        # As the demo builds it (following the sensors' clock), with the real time under
        # it fixed so the breach's flash is drawn in the same phase at every run.
        clock=FollowingClock(fixed_clock(samples.NOW)),
        statuses=[day_over_status()],
        alerts=samples.alerts(),
        blink=False,
    )


def the_day_is_over() -> str:
    return day_over_line(load_permit(PERMIT), DAY_END)


async def announce_the_end(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, InspectorApp)
    app.announce(the_day_is_over())
    await pilot.pause()


def gate_after_the_day(state_dir: Path) -> GateApp:
    return make_gate_app(
        "north",
        samples.EVENT,
        None,
        state_dir=state_dir,
        clock=FollowingClock(fixed_clock(samples.NOW)),
        statuses=[day_over_status()],
        command=samples.command(admit=False, reason="the permitted hours are over (permit:B(3))"),
    )


@pytest.mark.parametrize("size", SIZES)
class TestAfterTheDay:
    def test_inspector(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        """The time is the simulation's (23:30), no 'No status' banner, the end said."""
        app = inspector_after_the_day()
        assert snap_compare(app, run_before=announce_the_end, terminal_size=size)

    def test_gate_view(
        self, snap_compare: SnapCompare, size: tuple[int, int], tmp_path: Path
    ) -> None:
        assert snap_compare(gate_after_the_day(tmp_path), terminal_size=size)


async def test_the_end_of_the_day_is_said_and_the_clock_stops_with_it() -> None:
    app = inspector_after_the_day()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.clock() == DAY_END  # the simulation's time, not the wall clock's
        assert app.problem is None  # statuses keep coming: no outage
        await announce_the_end(pilot)
        bar = app.screen.query_one("#notice-bar", NoticeBar)
        assert bar.display
        assert (
            bar.lines[0]
            == "The simulated day is over (23:30 EDT); q ends the demo with its summary."
        )
        assert app.notice[0] == bar.lines[0]  # help shows it too
        assert "Gates (3, 0 down)" in str(app.screen.query_one("#gates-table").border_title)


def test_the_day_over_line_fits_an_80_column_terminal() -> None:
    assert len(the_day_is_over()) <= 78  # the notice bar's width at 80 columns


def test_an_unused_tally_reads_not_used_and_is_no_gate_down() -> None:
    status = day_over_status()
    tally = status.gates["north-manual"]
    assert tally.unused_tally()
    assert not tally.down()
    assert status.gates["north"].down() is False
    row = {r.key: r for r in gate_rows(status)}["north-manual"]
    assert row.cells[0].text == "○"
    assert row.cells[-1].text == "not used"
    assert "red" not in (row.cells[-1].style or "")
    # Once tapped and then closed, the tally's silence is a fault the table shows.
    used = wire.GateState(in_=3, manual=True, online=False, last_seen=DAY_END)
    assert used.down()
    assert not used.unused_tally()


def test_alert_figures_read_as_words() -> None:
    observed = {"kind": "gate", "available": True, "stale": True}
    words = " · ".join(figure_phrase(k, v) for k, v in observed.items())
    assert words == "a gate sensor · last said online · silent past its heartbeat"
    assert figure_phrase("available", None) == "no availability message"
    assert figure_phrase("share", 0.98) == "share 98%"
    assert figure_phrase("attendance", 3120) == "attendance 3,120"
    alert = samples.alert(rule="sensor-offline", subject="south", observed=observed)
    text = rendered(alert_detail(alert, samples.status()))
    assert "Observed      a gate sensor · last said online · silent past its heartbeat" in text
    assert "True" not in text


async def test_a_toast_waits_while_a_dialog_is_open() -> None:
    app = make_inspector_app(
        samples.EVENT,
        None,
        "insp-2",
        clock=fixed_clock(samples.NOW),
        statuses=[samples.status()],
        alerts=samples.alerts(),
        blink=False,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, AckForm)
        app.notify("Recorded: a note")
        await pilot.pause()
        assert not app._notifications  # held: it would cover the comment's input box
        await pilot.press("escape")
        await pilot.pause(0.7)  # released on the next half-second beat
        assert [n.message for n in app._notifications] == ["Recorded: a note"]


def test_a_following_clock_reads_the_sensors_time_and_a_fixed_one_stays() -> None:
    wall = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
    clock = FollowingClock(fixed_clock(wall))
    assert clock() == wall
    assert clock.followed is None
    clock.saw(day_over_status())
    assert clock() == DAY_END
    assert clock.followed == DAY_END
    clock.saw(samples.status(ts=(DAY_END - timedelta(minutes=1)).isoformat(), clock="sensor"))
    assert clock() == DAY_END  # an older status never turns it back
    clock.saw(samples.status())  # an aggregator on the wall clock
    assert clock() == wall
    kept = FollowingClock(fixed_clock(wall), follow=False)
    kept.saw(day_over_status())
    assert kept() == wall


def test_the_demo_summary_gives_each_breach_at_its_worst() -> None:
    """A cleared breach's last figures (6 nurses on duty, 6 needed) are no breach: the
    summary says what it was at its worst, as the report does."""
    cleared = samples.alert(
        "A-0001",
        rule="nurse-ratio",
        severity="breach",
        state="cleared",
        ended_at=samples.ago(60),
        cleared_at=samples.ago(30),
        message="6 nurses on duty; 2,840 persons need 6 (permit:C(9))",
        observed={"nurses_on_duty": 6, "attendance": 2840},
        required={"nurses": 6},
        worst={"observed": {"nurses_on_duty": 6, "attendance": 3600}, "required": {"nurses": 8}},
    )
    [head, line] = alert_summary([cleared])
    assert head == "  alerts raised: 1 (1 breach)"
    assert "3,600 persons need 8" in line
    assert "2,840" not in line


def test_an_ended_alert_reads_at_its_worst_on_the_dashboard() -> None:
    ended = samples.alert(
        "A-0001",
        rule="nurse-ratio",
        severity="breach",
        ended_at=samples.ago(60),
        message="6 nurses on duty; 2,840 persons need 6 (permit:C(9))",
        observed={"nurses_on_duty": 6, "attendance": 2840},
        required={"nurses": 6},
        worst={"observed": {"nurses_on_duty": 6, "attendance": 3600}, "required": {"nurses": 8}},
    )
    detail = rendered(alert_detail(ended, samples.status()))
    assert "3,600 persons need 8" in detail
    active = samples.alert("A-0004")  # while it holds, its figures now
    assert shown_message(active) == active.message
