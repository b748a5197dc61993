"""The inspector's dashboard on a phone: attendance, the order and the breaches first.

A phone held upright gives textual-serve's terminal about 40 to 48 columns (390 CSS
pixels is 43 at its font); the screen is then one column that scrolls, attendance
and ADMIT or HOLD on top, the alerts (active breaches first) under them, staffing,
gates and lots below. Wider screens keep the side-by-side layout. No broker: the
factory runs standalone on the fixed status and alerts of the snapshot tests.
"""

from __future__ import annotations

from typing import Any

import dashboard_samples as samples
import pytest
from textual.app import App
from textual.containers import Horizontal
from textual.widgets._footer import FooterKey

from dashboards.common.clock import fixed_clock
from dashboards.common.widgets.keys_footer import KeysFooter
from dashboards.inspector.app import InspectorApp, make_inspector_app
from dashboards.inspector.screens.main import NARROW_BELOW
from dashboards.inspector.widgets.alert_list import AlertList
from dashboards.inspector.widgets.glance import AttendancePanel, CompliancePanel
from dashboards.inspector.widgets.tables import GatesTable

PHONES = [
    pytest.param((40, 70), id="40x70"),
    pytest.param((48, 80), id="48x80"),
    pytest.param((43, 40), id="43x40"),
    pytest.param((40, 30), id="40x30"),
]
"""Phones upright: the sizes of the snapshot tests, an iPhone 14's terminal (43×40) and
a small Android's, whose screen is shorter than the rest (40×30)."""


def inspector(**changes: Any) -> InspectorApp:
    status = samples.status(**changes)
    return make_inspector_app(
        samples.EVENT,
        None,
        "insp-2",
        clock=fixed_clock(samples.NOW),
        statuses=[*samples.history()[:-1], status],
        alerts=samples.alerts(),
        blink=False,
    )


def screen_lines(app: InspectorApp) -> list[str]:
    """The characters on the screen, a line a row, as the terminal shows them."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def row_of(lines: list[str], text: str) -> int:
    found = [y for y, line in enumerate(lines) if text in line]
    assert found, f"{text!r} is not on the screen:\n" + "\n".join(lines)
    return found[0]


@pytest.mark.parametrize("size", PHONES)
async def test_a_phone_shows_attendance_the_order_and_the_breaches_without_scrolling(
    size: tuple[int, int],
) -> None:
    app = inspector()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.has_class("-narrow")
        lines = screen_lines(app)
        assert len(lines) == size[1]
        assert all(len(line) <= size[0] for line in lines)
        figure = row_of(lines, "┏━┛┃ ┃")  # the middle row of the large 3,120
        assert row_of(lines, " ADMIT ") <= figure + 2
        breach = row_of(lines, "BREACH")
        assert "A-0004" in lines[breach]
        last_visible = size[1] - 3  # the action line and the footer below
        assert breach <= last_visible
        assert row_of(lines, "issued") < figure  # the permit's standing, in the header
        # Staffing and the tables are below the alerts, not beside them.
        attendance = screen.query_one(AttendancePanel).region
        compliance = screen.query_one(CompliancePanel).region
        alerts = screen.query_one(AlertList).region
        assert attendance.bottom <= alerts.y < compliance.y
        assert attendance.width == compliance.width == screen.query_one(GatesTable).region.width


@pytest.mark.parametrize("size", PHONES[:2])
async def test_on_a_phone_the_gates_keep_their_figures_whole(size: tuple[int, int]) -> None:
    app = inspector()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
        south = lines[row_of(lines, "south  ")]
        assert "2,188" in south
        assert "1,538" in south
        assert "OFF 1 min" in south
        header = lines[row_of(lines, "Gate ")]
        assert "In" in header
        assert "Net" in header
        assert "Seen" in header


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_terminal_or_a_tablet_keeps_the_side_by_side_layout(size: tuple[int, int]) -> None:
    app = inspector()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert not screen.has_class("-narrow")
        attendance = screen.query_one(AttendancePanel).region
        compliance = screen.query_one(CompliancePanel).region
        assert attendance.y == compliance.y
        assert attendance.right <= compliance.x
        assert isinstance(screen.query_one("#glance"), Horizontal)


async def test_turning_the_phone_changes_the_layout_and_keeps_everything() -> None:
    app = inspector()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.resize_terminal(43, 40)
        await pilot.pause()
        screen = app.screen
        assert screen.has_class("-narrow")
        assert screen.query_one(AlertList).has_focus
        assert screen.query_one(GatesTable).row_count == 3
        lines = screen_lines(app)
        assert row_of(lines, "BREACH") < 40
        assert "Alerts: 2 active, 1 pending ─" in lines[row_of(lines, "Alerts:")]
        await pilot.resize_terminal(NARROW_BELOW, 24)
        await pilot.pause()
        assert not app.screen.has_class("-narrow")
        assert app.screen.query_one("#glance")
        lines = screen_lines(app)
        assert "Alerts (2 active, 1 pending, 3 in all) ─" in lines[row_of(lines, "Alerts (")]


async def test_on_a_phone_hold_is_as_plain_as_admit() -> None:
    app = inspector(admit=False)
    async with app.run_test(size=(40, 30)) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
        assert row_of(lines, " HOLD ") < 12


def footer_keys(app: InspectorApp) -> list[str]:
    """The keys the footer shows, whole: ``a Ack alert``, ``? Help``."""
    return [
        f"{key.key_display} {key.description}".strip()
        for key in app.screen.query_one(KeysFooter).query(FooterKey)
    ]


@pytest.mark.parametrize("size", PHONES)
async def test_on_a_phone_every_key_is_in_the_footer_whole_from_the_first_frame(
    size: tuple[int, int],
) -> None:
    """In a browser the page has not the focus until the first tap: the keys show anyway,
    in as many rows as they need, none cut; the titles are whole too."""
    app = inspector()
    app.set_reactive(App.app_focus, False)  # a page in a browser, not yet tapped
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert not app.app_focus
        shown = footer_keys(app)
        assert {"a Ack alert", "n Note", "i Checklist", "? Help", "q Quit"} <= set(shown)
        lines = screen_lines(app)
        footer = app.screen.query_one(KeysFooter).region
        assert footer.height >= 2  # they do not fit one row of a phone: they wrap
        drawn = "\n".join(lines[footer.y : footer.bottom])
        for key in shown:
            assert key in drawn, f"{key!r} is cut:\n{drawn}"
        for line in lines:  # no title cut short (a border's "…")
            assert "…" not in line or not line.lstrip().startswith("╭"), line
        assert "Alerts: 2 active, 1 pending" in lines[row_of(lines, "Alerts:")]
        assert lines[row_of(lines, "No actions yet")].strip() == "No actions yet"


async def test_the_checklist_and_the_help_keep_their_keys_on_a_phone() -> None:
    app = inspector()
    app.set_reactive(App.app_focus, False)
    async with app.run_test(size=(40, 30)) as pilot:
        await pilot.pause()
        await pilot.press("i")
        await pilot.pause()
        assert {"esc Back", "o OK", "d Deficient", "n N/A", "? Help"} <= set(footer_keys(app))
        lines = screen_lines(app)
        assert lines[row_of(lines, "No markings yet")].strip() == "No markings yet"
        await pilot.press("question_mark")
        await pilot.pause()
        assert "esc Back" in footer_keys(app)


async def test_a_terminal_keeps_its_keys_on_one_row() -> None:
    app = inspector()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.query_one(KeysFooter).region.height == 1
        assert "i Checklist" in screen_lines(app)[-1]
