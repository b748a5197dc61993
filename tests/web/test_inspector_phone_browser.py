"""The inspector's full dashboard on phones, in Chromium at their real pixel ratios,
through a real ``kent-ops serve``, a real Mosquitto and a real aggregator.

A phone signing in gets the inspector's page (tests/web/test_inspector_page_browser.py);
the Textual dashboard is a link away on it ("Full dashboard"), and this is that
dashboard, opened from the link.

Each phone gets a Chromium of its own, started with ``--force-device-scale-factor``
at the phone's ratio as well as its viewport, mobile and touch settings: with the
emulated ratio alone xterm.js draws its canvas at the wrong scale (xterm.js issue
4728), so a test would see a corner of the screen where the phone shows all of it.
With attendance over 500 and nobody on duty the aggregator holds the gates and
raises breaches; on every phone the attendance figure, HOLD and the first active
breach must be on the first screen, without scrolling, and inside the viewport; a
tap on the scroll bar brings the gates up.
Screenshots are kept with ``KENT_OPS_KEEP_SCREENSHOTS=1`` (./out/screenshots).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest
from browser_support import (
    IPHONE_14,
    PIXEL_7,
    SMALL_ANDROID,
    Device,
    Screen,
    Shoot,
    device_context,
    on_each,
    sign_in,
)
from field_support import HOLD_AT, Field, password
from playwright.sync_api import Browser

from dashboards.common.bigtext import big_number

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(240)]

PHONES = (IPHONE_14, PIXEL_7, SMALL_ANDROID)
"""Phones held upright, each at its CSS pixels and device pixel ratio."""


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Field]:
    with Field(tmp_path_factory.mktemp("field")) as f:
        f.north_net(HOLD_AT + 50)  # over 500, nobody on duty: HOLD and breaches
        yield f


@on_each(PHONES)
def test_a_phone_shows_attendance_hold_and_the_breaches_on_its_first_screen(
    served: tuple[str, subprocess.Popen[bytes]], phone: Browser, device: Device, shots: Shoot
) -> None:
    base, _ = served
    context = device_context(phone, device)
    page = context.new_page()
    sign_in(page, base, "insp-1", password("inspector-insp-1"))
    page.wait_for_url(f"{base}/inspector")
    page.get_by_role("link", name="Full dashboard").tap()
    page.wait_for_url(f"{base}/dashboard")
    screen = Screen(page)
    screen.wait_for_text(r"peak 600")
    screen.wait_for_text(r"BREACH\s+A-\d{4}")
    screen.wait_for_text(r" HOLD ")
    cols, rows = screen.size()
    text = screen.text()
    lines = text.split("\n")
    shot = shots(page, f"inspector-{device.name}")
    print(f"{device.name}: {cols}x{rows} cells, screenshot {shot}")
    assert cols < 80, "a phone gets the one-column layout"
    assert len(lines) == rows
    figure = next(y for y, line in enumerate(lines) if big_number("600")[1] in line)
    hold = next(y for y, line in enumerate(lines) if " HOLD " in line)
    breach = next(y for y, line in enumerate(lines) if re.search(r"BREACH\s+A-\d{4}", line))
    assert figure - 1 <= hold <= figure + 3  # beside the large digits, or under them
    assert breach < rows - 2  # above the action line and the keys
    # Every key whole from the first frame, the checklist's and the help's too.
    keys = "\n".join(lines[rows - 5 :])
    for key in ("a Ack alert", "n Note", "i Checklist", "? Help", "q Quit"):
        assert key in keys, keys
    state = page.evaluate(
        "() => { const b = window.__kentTerminal.terminal.element"
        ".querySelector('.xterm-screen').getBoundingClientRect();"
        " return [b.left, b.top, b.right, b.bottom, innerWidth, innerHeight]; }"
    )
    left, top, right, bottom, width, height = state
    assert left >= 0
    assert top >= 0
    assert right <= width + 1, "the terminal is wider than the phone's screen"
    assert bottom <= height + 1, "the terminal runs below the phone's screen"
    # The rest is below: a tap on the column's scroll bar, under its thumb, pages
    # down to the gates (a finger has no wheel and no arrow keys).
    assert not re.search(r"north\s+600", text)
    # The column ends above the action line and the keys (in rows on a phone).
    foot = next(y for y, line in enumerate(lines) if line.strip() == "No actions yet")
    cell_w, cell_h = (right - left) / cols, (bottom - top) / rows
    page.touchscreen.tap(left + (cols - 0.5) * cell_w, top + (foot - 1.5) * cell_h)
    screen.wait_for_text(r"north\s+600")
    shots(page, f"inspector-{device.name}-below")
    context.close()
