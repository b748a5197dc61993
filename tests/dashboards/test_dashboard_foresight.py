"""A HOLD coming, on the deputy's gate view and the inspector's dashboard.

The aggregator's status carries ``attendance.hold_in_s`` and each gate command the same
in whole minutes (docs/protocol.md, "Foresight"); while the gate admits and the HOLD is
fewer than 30 minutes away, both screens say "HOLD in about N min". No broker: the apps
run standalone on the fixed status of the snapshot tests, at 80×24 and on a phone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dashboard_samples as samples
import msgspec
import pytest

from dashboards.common.clock import fixed_clock
from dashboards.gate.app import GateApp, make_gate_app
from dashboards.gate.panels import gate_order, order_details
from dashboards.inspector.app import InspectorApp, make_inspector_app
from dashboards.inspector.panels.glance import attendance_panel
from kent_ops.core import wire
from kent_ops.core.gate_view import view_data

TWELVE = "HOLD in about 12 min"


def status(hold_in_s: int | None, **changes: Any) -> wire.Status:
    attendance = {**samples.status_data()["attendance"], "hold_in_s": hold_in_s}
    return samples.status(attendance=attendance, **changes)


def gate_app(tmp_path: Path, hold_in_s: int | None, *, admit: bool = True) -> GateApp:
    return make_gate_app(
        "north",
        samples.EVENT,
        None,
        state_dir=tmp_path,
        clock=fixed_clock(samples.NOW),
        statuses=[status(hold_in_s, admit=admit)],
        command=samples.command(admit=admit, hold_in_s=None if hold_in_s is None else 720),
    )


def screen_lines(app: GateApp | InspectorApp) -> list[str]:
    """The characters on the screen, a line a row, as the terminal shows them."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


# -- the gate view's words --------------------------------------------------------------------


def test_the_gate_view_says_a_hold_is_coming_while_it_admits() -> None:
    order = gate_order(samples.command(admit=True), status(715))
    assert order.hold_in_s == 715
    assert TWELVE in order_details(order).plain
    assert any("on yellow" in str(s.style) for s in order_details(order).spans)


def test_the_status_figure_is_fresher_than_the_commands_minutes() -> None:
    command = samples.command(admit=True, hold_in_s=1200)  # 20 min, a minute ago
    assert gate_order(command, status(660)).hold_in_s == 660
    assert gate_order(command, None).hold_in_s == 1200  # no status yet: the command's
    assert "HOLD in about 20 min" in order_details(gate_order(command, None)).plain
    no_longer = gate_order(command, status(None))  # the status says it stopped rising
    assert "HOLD in about" not in order_details(no_longer).plain


@pytest.mark.parametrize(
    ("hold_in_s", "shown"),
    [(None, False), (60, True), (1769, True), (1770, False), (5400, False)],
)
def test_only_a_hold_under_thirty_minutes_is_said(hold_in_s: int | None, shown: bool) -> None:
    text = order_details(gate_order(samples.command(admit=True), status(hold_in_s))).plain
    assert ("HOLD in about" in text) is shown


def test_a_gate_already_holding_is_not_told_a_hold_is_coming() -> None:
    order = gate_order(samples.command(admit=False), status(300, admit=False))
    assert "HOLD in about" not in order_details(order).plain


def test_the_phone_page_gets_the_same_line_in_the_views_data() -> None:
    from datetime import UTC, datetime

    from kent_ops.core.connection import ConnectionState
    from kent_ops.core.gate_view import TallyFacts, gate_view

    view = gate_view(
        "north",
        samples.EVENT,
        status=status(720),
        command=samples.command(admit=True),
        connection=ConnectionState(),
        now=datetime(2027, 7, 4, 18, 3, 7, tzinfo=UTC),
        monotonic=0.0,
        tally=TallyFacts(),
    )
    data = view_data(view)
    assert [[TWELVE, "chip-near"]] in data["details"]  # type: ignore[operator]


async def test_the_terminal_gate_view_shows_it_whole_at_80x24(tmp_path: Path) -> None:
    app = gate_app(tmp_path, 715)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
        assert len(lines) == 24
        (row,) = [y for y, line in enumerate(lines) if TWELVE in line]
        assert any("Attendance 3,120 · hold at 4,000" in line for line in lines[:row])
        assert any("█" in line for line in lines[:row])  # the sign keeps its letters
        assert any("Manual tally" in line for line in lines[row:])  # and the tally its place


async def test_the_terminal_gate_view_says_nothing_without_a_forecast(tmp_path: Path) -> None:
    app = gate_app(tmp_path, None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not any("HOLD in about" in line for line in screen_lines(app))


# -- the inspector's dashboard -----------------------------------------------------------------


@pytest.mark.parametrize("width", [118, 78, 46, 38])
def test_the_inspectors_attendance_panel_says_it_beside_the_order(width: int) -> None:
    lines = attendance_panel(status(715), width=width).plain.split("\n")
    (row,) = [line for line in lines if TWELVE in line]
    assert len(row) <= width
    admit = [line for line in lines if "ADMIT" in line]
    assert admit
    assert TWELVE in admit[0] or lines.index(admit[0]) + 1 == lines.index(row)
    holding = attendance_panel(status(715, admit=False), width=width).plain
    assert "HOLD in about" not in holding


def test_the_inspectors_panel_says_why_attendance_is_uncertain_when_the_lots_disagree() -> None:
    data = samples.status_data()
    attendance = {**data["attendance"], "current": 250, "uncertain": True}
    parking = {**data["parking"], "occupied": 312}
    gates = {g: {**v, "online": True} for g, v in data["gates"].items()}
    medical = {**data["medical"], "doctors_on_duty": 1, "nurses_on_duty": 3}
    text = attendance_panel(
        msgspec.convert(
            {
                **data,
                "attendance": attendance,
                "parking": parking,
                "gates": gates,
                "medical": medical,
                "security": {"on_duty": 8, "declared": 20},
            },
            wire.Status,
        ),
        width=100,
    ).plain
    assert "UNCERTAIN: more cars parked than persons counted" in text


async def test_the_inspectors_dashboard_shows_it_at_80x24() -> None:
    app = make_inspector_app(
        samples.EVENT,
        None,
        "insp-2",
        clock=fixed_clock(samples.NOW),
        statuses=[*samples.history()[:-1], status(715)],
        alerts=samples.alerts(),
        blink=False,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
        (row,) = [y for y, line in enumerate(lines) if TWELVE in line]
        admit = [y for y, line in enumerate(lines) if " ADMIT " in line]
        assert admit[0] in (row, row - 1)  # beside the order, or under it where narrow
