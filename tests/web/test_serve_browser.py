"""``kent-ops serve`` in a real browser, against a real broker and a real aggregator.

Debian's chromium, headless, signs in over HTTPS to ``kent-ops serve`` (the
certificate of ``kent-ops deploy certs``) in front of a Mosquitto with a password
per user and the ACL of ``kent-ops deploy acl``, and a running ``kent-ops run``.
Each test looks at the screen as a person would: the terminal's own characters and a
screenshot of each screen (kept in ./out/screenshots with ``KENT_OPS_KEEP_SCREENSHOTS=1``).
The deputy's gate view, a page of its own, is tested at phone scale in
test_gate_page_browser.py.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import (
    CHROMIUM,
    FLAGS,
    IPHONE_14,
    TABLET,
    Screen,
    Shoot,
    device_context,
    new_context,
    sign_in,
)
from field_support import TOPICS, Field, alive, apps_of, password
from live_support import wait_until
from playwright.sync_api import Browser, Playwright

from kent_ops.broker.credentials import ENV_PASSWORD

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(180)]

INSPECTOR_PW = password("inspector-insp-1")
DEPUTY_PW = password("deputy-north")


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
    yield b
    b.close()


def test_a_wrong_password_is_refused_and_the_next_try_is_slowed(
    served: tuple[str, subprocess.Popen[bytes]], iphone: Browser, shots: Shoot
) -> None:
    base, _ = served
    context = device_context(iphone, IPHONE_14)
    page = context.new_page()
    sign_in(page, base, "insp-1", "not the password")
    assert page.locator(".error").inner_text() == "Wrong name or password."
    assert page.url == f"{base}/signin"
    shots(page, "01-signin-wrong-password")
    # At once, on the page the refusal came with: even the right password must wait.
    page.fill("#password", INSPECTOR_PW)
    page.click("#signin")
    assert "Too many failed sign-ins: try again in" in page.locator(".error").inner_text()
    shots(page, "02-signin-slowed")
    assert not [c for c in context.cookies() if c["name"] == "kent_ops_session"]

    def signed_in() -> bool:
        sign_in(page, base, "insp-1", INSPECTOR_PW)
        return page.url == f"{base}/inspector"  # a phone's screen: the inspector's page

    wait_until(signed_in, 20, "a sign-in once the wait is over")
    cookie = next(c for c in context.cookies() if c["name"] == "kent_ops_session")
    assert cookie["secure"]
    assert cookie["httpOnly"]
    assert cookie["sameSite"] == "Strict"
    context.close()


def test_an_inspector_sees_attendance_and_acknowledges_an_alert(
    field: Field, served: tuple[str, subprocess.Popen[bytes]], browser: Browser, shots: Shoot
) -> None:
    base, _ = served
    field.north_net(600)  # over 500 with nobody on duty: the aggregator raises breaches
    context = new_context(browser, TABLET)
    page = context.new_page()
    sign_in(page, base, "insp-1", INSPECTOR_PW)
    screen = Screen(page)
    screen.wait_for_text(r"north\s+600\s+0\s+600")  # the gate's row, from the status
    screen.wait_for_text(r"peak 600")
    screen.wait_for_text(r"BREACH\s+A-\d{4}\s+doctor-on-duty")
    status = field.watcher.json(TOPICS.status)
    assert status is not None
    assert status["attendance"]["current"] == 600
    shots(page, "03-dashboard-attendance")

    page.focus(".xterm-helper-textarea")
    page.keyboard.press("a")
    title = screen.wait_for_text(r"Acknowledge (A-\d{4})")
    alert_id = title.group(1)
    page.keyboard.type("Called the organiser")
    page.keyboard.press("Enter")
    screen.wait_for_text(r"Send \(y\)")
    shots(page, "04-ack-confirm")
    screen.tap("Send (y)")  # a click on the button, through the terminal
    screen.wait_for_text(r"✓ recorded")
    screen.wait_for_text(rf"{alert_id}.*✓ insp-1")
    shots(page, "05-ack-recorded")
    alert = field.watcher.json(TOPICS.alert(alert_id))
    assert alert is not None
    assert [(a["by"], a["comment"]) for a in alert["acknowledged"]] == [
        ("insp-1", "Called the organiser")
    ]
    context.close()


def test_a_deputy_is_refused_the_inspector_dashboard(
    served: tuple[str, subprocess.Popen[bytes]], iphone: Browser, shots: Shoot
) -> None:
    base, server = served
    context = device_context(iphone, IPHONE_14)
    page = context.new_page()
    sign_in(page, base, "jsmith", DEPUTY_PW)
    assert page.url == f"{base}/gate"
    response = page.goto(f"{base}/dashboard")
    assert response is not None
    assert response.status == 403
    assert "Not for your account" in page.inner_text("h1")
    assert "deputy at gate north" in page.inner_text("#message")
    shots(page, "09-deputy-refused-dashboard")
    assert apps_of(server, "dashboard") == []
    context.close()


def test_closing_the_tab_ends_its_app_and_the_password_is_only_in_its_environment(
    served: tuple[str, subprocess.Popen[bytes]], browser: Browser
) -> None:
    base, server = served
    context = new_context(browser, TABLET)
    page = context.new_page()
    sign_in(page, base, "insp-1", INSPECTOR_PW)
    Screen(page).wait_for_text(r"insp-1")
    (pid,) = wait_until(lambda: apps_of(server, "dashboard", "insp-1"), 10, "the app process")
    assert INSPECTOR_PW.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert f"{ENV_PASSWORD}={INSPECTOR_PW}".encode() in environment
    page.close()
    wait_until(lambda: not alive(pid), 20, f"app process {pid} to end after its tab closed")
    context.close()


@pytest.mark.slow
def test_the_session_ends_after_its_time_with_its_app(
    field: Field, browser: Browser, shots: Shoot
) -> None:
    base, server = field.serve("serve-short", "--session-minutes", "0.25")
    context = new_context(browser, TABLET)
    page = context.new_page()
    sign_in(page, base, "insp-1", INSPECTOR_PW)
    Screen(page).wait_for_text(r"insp-1")
    (pid,) = wait_until(lambda: apps_of(server, "dashboard", "insp-1"), 10, "the app process")
    page.wait_for_selector("body.-closed", timeout=40_000)  # 15 s of session, then closed
    assert re.search(r"Session ended", page.inner_text("#closed"))
    shots(page, "10-session-expired")
    wait_until(lambda: not alive(pid), 20, f"app process {pid} to end with the session")
    page.click("#again")
    page.wait_for_url(f"{base}/signin")
    shots(page, "11-signin-after-expiry")
    context.close()
