"""The inspector's page on phones and a tablet, in Chromium at their real pixel ratios.

A real ``kent-ops serve`` over HTTPS in front of a Mosquitto with the ACL of ``kent-ops
deploy acl`` and a running aggregator (tests/web/field_support.py). Chromium is
launched at each device's real pixel ratio with its viewport, touch and mobile
settings (tests/web/browser_support.py). With attendance over 500 and nobody on duty
the aggregator holds the gates and raises breaches. Each test looks at the page as an
inspector (or the Clerk) would: the figure, the order, the permit's standing and the
first breach on the first screen, readable (contrast 7:1) and no wider than the
screen; every action made by touch, confirmed with Send, reaching the evidence log as
that person's accepted message and reading "✓ recorded"; and actions made without a
signal kept on the phone and recorded once when it returns. Screenshots of each
screen are kept in ./out/screenshots with ``KENT_OPS_KEEP_SCREENSHOTS=1``.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import (
    DEVICES,
    IPHONE_14,
    PIXEL_7,
    SMALL_ANDROID,
    TABLET_10,
    Device,
    Shoot,
    device_context,
    on_each,
    pending,
    sign_in,
)
from field_support import HOLD_AT, TOPICS, Field, apps_of, password
from live_support import wait_until
from playwright.sync_api import Browser, Locator, Page

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(300)]

INSPECTOR_PW = password("inspector-insp-1")
CLERK_PW = password("clerk-clerk-1")
ATTENDANCE = HOLD_AT + 50

_FIRST_SCREEN = """() => {
  const box = (s) => { const e = document.querySelector(s);
    return e ? e.getBoundingClientRect().toJSON() : null; };
  const first = document.querySelector("#alerts button.alert");
  return {
    figure: box("#figure"), order: box("#order"), permit: box("#permit"),
    breach: box("#alerts button.alert.sev-breach"), staffing: box("#staffing"),
    gates: box("#gates"), lots: box("#lots"), actions: box("#actions"), top: box("#top"),
    buttons: [...document.querySelectorAll("#actions button")].map((b) =>
      ({name: b.textContent, box: b.getBoundingClientRect().toJSON()})),
    first: first ? first.className : "",
    width: innerWidth, height: innerHeight, ratio: devicePixelRatio,
    scrollWidth: document.documentElement.scrollWidth,
  };
}"""

_CONTRAST = """(selectors) => {
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const background = (e) => {
    for (; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const lum = (c) => { const [r, g, b] = c.map((v) => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const out = {};
  for (const s of selectors) {
    const e = document.querySelector(s);
    if (!e) { out[s] = null; continue; }
    const [a, b] = [lum(rgb(getComputedStyle(e).color).slice(0, 3)), lum(background(e))];
    out[s] = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  }
  return out;
}"""


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Field]:
    with Field(tmp_path_factory.mktemp("field")) as f:
        f.north_net(ATTENDANCE)  # over 500, nobody on duty: HOLD and breaches
        wait_until(lambda: breaches(f), 30, "the aggregator's breaches")
        yield f


def breaches(field: Field) -> list[str]:
    """The active breaches the aggregator publishes."""
    status = field.watcher.json(TOPICS.status) or {}
    found = []
    for alert_id in status.get("active_alerts", []):
        alert = field.watcher.json(TOPICS.alert(alert_id)) or {}
        if alert.get("severity") == "breach":
            found.append(alert_id)
    return found


def open_page(browser: Browser, device: Device, base: str, name: str, pw: str) -> Page:
    """Sign in on the device: a phone lands on the page, a tablet opens ``/inspector``."""
    page = device_context(browser, device).new_page()
    sign_in(page, base, name, pw)
    if device.width < 600:
        page.wait_for_url(f"{base}/inspector")
    else:
        page.wait_for_url(f"{base}/dashboard")  # the full dashboard, a screen this wide
        page.goto(f"{base}/inspector")
    wait_until(lambda: page.is_visible("#figure"), 30, f"{name}'s first screen")
    return page


def button(where: Page | Locator, name: str) -> Locator:
    return where.get_by_role("button", name=name, exact=True)


def wait_recorded(page: Page, words: str) -> None:
    """Until the page says the action carrying ``words`` is recorded by the aggregator."""

    def recorded() -> bool:
        return any(words in line and "✓ recorded" in line for line in pending(page).splitlines())

    wait_until(recorded, 30, lambda: f"“{words}” recorded, the page says: {pending(page)!r}")


def send(page: Page) -> None:
    button(page, "Send").tap()


def within(box: dict[str, float], width: float, height: float) -> bool:
    return (
        box["left"] >= 0
        and box["top"] >= 0
        and box["right"] <= width + 0.5
        and (box["bottom"] <= height + 0.5)
    )


# -- the first screen ------------------------------------------------------------------


@on_each(DEVICES)
def test_the_first_screen_holds_the_figure_the_order_the_permit_and_the_first_breach(
    field: Field,
    served: tuple[str, subprocess.Popen[bytes]],
    phone: Browser,
    device: Device,
    shots: Shoot,
) -> None:
    base, server = served
    page = open_page(phone, device, base, "insp-1", INSPECTOR_PW)
    wait_until(lambda: page.inner_text("#figure") == f"{ATTENDANCE}", 20, "the figure")
    wait_until(lambda: page.is_visible("#alerts button.alert.sev-breach"), 20, "the breaches")
    screen = page.evaluate(_FIRST_SCREEN)
    shots(page, f"inspector-page-{device.name}-1-first")
    assert screen["ratio"] == pytest.approx(device.scale)
    assert (screen["width"], screen["height"]) == (device.width, device.height)
    assert page.inner_text("#order") == "HOLD"
    assert "MG-2027-003 issued" in page.inner_text("#permit")
    assert "sev-breach" in screen["first"], "the active breaches come first"
    # In the order an inspector needs them, each under the one before.
    order = [screen[k]["top"] for k in ("figure", "permit", "breach", "staffing", "gates")]
    assert order == sorted(order), screen
    assert screen["order"]["top"] < screen["permit"]["top"]
    # On the first screen: under the header, above the action bar, nothing cut off.
    top, bar = screen["top"]["bottom"], screen["actions"]["top"]
    for key in ("figure", "order", "permit"):
        assert screen[key]["top"] >= top - 0.5, (key, screen)
        assert screen[key]["bottom"] <= bar + 0.5, (key, screen)
        assert within(screen[key], screen["width"], screen["height"]), (key, screen)
    assert screen["breach"]["top"] + 40 <= bar, "the first breach's heading shows"
    assert screen["scrollWidth"] <= screen["width"], "nothing is wider than the screen"
    # Large tap targets, under the thumb, inside the screen.
    names = [b["name"] for b in screen["buttons"]]
    assert names == ["Add note", "Adjust attendance", "Checklist"]
    for each in screen["buttons"]:
        assert each["box"]["height"] >= 48, each
        assert within(each["box"], screen["width"], screen["height"]), each
    # Readable at arm's length in sunlight: 7:1 or more (WCAG AAA) for what matters.
    contrast = page.evaluate(
        _CONTRAST,
        ["#figure", "#order", "#permit .t-good-strong", "#alerts .head .t-strong",
         "#alerts .head .t-cite", "#alerts .body", ".limits", "#actions button",
         "#staffing th"],
    )  # fmt: skip
    assert all(c is not None and c >= 7 for c in contrast.values()), contrast
    assert apps_of(server, "dashboard") == [] or device is TABLET_10  # no process a phone
    # Below the first screen: the gates and the lots.
    page.locator("#lots").scroll_into_view_if_needed()
    assert re.search(r"north\s+600\s+(0\s+)?600", page.inner_text("#gates"))  # Out: not on a phone
    shots(page, f"inspector-page-{device.name}-2-below")
    page.context.close()


# -- actions by touch ----------------------------------------------------------------------


def alert_opened(page: Page) -> str:
    """Open the first active breach; its id."""
    page.locator("#alerts button.alert.sev-breach").first.tap()
    wait_until(lambda: page.is_visible("#screen-detail .facts"), 10, "the alert's detail")
    title = page.inner_text("#screen-detail .title")
    found = re.search(r"A-\d{4}", title)
    assert found, title
    return found.group(0)


@pytest.mark.parametrize("phone", [IPHONE_14], ids=["iphone-14"], indirect=True)
def test_an_alert_in_full_acknowledged_and_noted_by_touch(
    field: Field, served: tuple[str, subprocess.Popen[bytes]], phone: Browser, shots: Shoot
) -> None:
    base, _ = served
    page = open_page(phone, IPHONE_14, base, "insp-1", INSPECTOR_PW)
    alert_id = alert_opened(page)
    alert = field.watcher.json(TOPICS.alert(alert_id)) or {}
    detail = page.inner_text("#screen-detail")
    evidence = alert["evidence"]
    assert f"record {evidence['record']}" in detail
    assert evidence["hash"] in detail.replace("\n", "")
    assert alert["cite"] in detail
    assert "Observed" in detail
    assert "Required" in detail
    assert not page.is_visible("#actions"), "one screen at a time: the action bar is away"
    shots(page, "inspector-page-iphone-14-3-alert")

    button(page, "Acknowledge").tap()
    send(page)  # a comment is required
    assert "Write a comment" in page.inner_text("#screen-form .error")
    assert field.logged(TOPICS.inspector("insp-1", "ack")) == []
    page.fill("#f-comment", "doctor called from the first-aid tent")
    shots(page, "inspector-page-iphone-14-4-ack-form")
    send(page)
    wait_until(lambda: page.is_visible("#screen-detail .facts"), 10, "back on the alert")
    wait_recorded(page, "doctor called from the first-aid tent")
    wait_until(lambda: "insp-1 at" in page.inner_text("#screen-detail"), 10, "the ack shown")
    shots(page, "inspector-page-iphone-14-5-acked")
    (accepted, ack), *_ = field.logged(TOPICS.inspector("insp-1", "ack"))
    assert accepted
    assert (ack["alert"], ack["comment"]) == (alert_id, "doctor called from the first-aid tent")

    button(page, "Add note").tap()  # about the alert open
    page.fill("#f-text", "organiser says a doctor arrives at 15:00")
    send(page)
    wait_recorded(page, "organiser says a doctor arrives at 15:00")
    (accepted, note), *_ = field.logged(TOPICS.inspector("insp-1", "note"))
    assert accepted
    assert (note["text"], note["alert"]) == ("organiser says a doctor arrives at 15:00", alert_id)

    button(page, "Back").tap()
    wait_until(lambda: page.is_visible("#actions"), 10, "the main screen")
    button(page, "Add note").tap()  # a general note
    page.fill("#f-text", "gates north and south walked, exits clear")
    send(page)
    wait_recorded(page, "gates north and south walked, exits clear")
    notes = field.logged(TOPICS.inspector("insp-1", "note"))
    assert notes[-1] == (True, notes[-1][1])
    assert notes[-1][1]["text"] == "gates north and south walked, exits clear"
    assert "alert" not in notes[-1][1]
    shots(page, "inspector-page-iphone-14-6-recorded")
    page.context.close()


@pytest.mark.parametrize("phone", [PIXEL_7], ids=["pixel-7"], indirect=True)
def test_attendance_adjusted_and_the_checklist_marked_by_touch(
    field: Field, served: tuple[str, subprocess.Popen[bytes]], phone: Browser, shots: Shoot
) -> None:
    base, _ = served
    page = open_page(phone, PIXEL_7, base, "insp-1", INSPECTOR_PW)
    button(page, "Adjust attendance").tap()
    page.fill("#f-attendance", str(ATTENDANCE))
    send(page)  # the reason is required too
    assert "Give the reason" in page.inner_text("#screen-form .error")
    page.fill("#f-reason", "headcount at the stage agrees with the gates")
    shots(page, "inspector-page-pixel-7-3-adjust-form")
    send(page)
    wait_recorded(page, "headcount at the stage agrees with the gates")
    (accepted, adjust), *_ = field.logged(TOPICS.inspector("insp-1", "adjust"))
    assert accepted
    assert adjust["attendance"] == ATTENDANCE
    assert "adjusted to 600" in page.inner_text("#attendance")

    button(page, "Checklist").tap()
    water = page.get_by_role("group", name=re.compile(r"^C\(1\)\(a\) "))
    button(water, "OK").tap()
    send(page)
    wait_until(lambda: page.is_visible("#screen-checklist .item"), 10, "back on the checklist")
    wait_recorded(page, "mark C(1)(a) ok")
    toilets = page.get_by_role("group", name=re.compile(r"^C\(2\)\(a\) "))
    button(toilets, "Deficient").tap()
    send(page)  # what was found is required
    assert "Say what was found" in page.inner_text("#screen-form .error")
    page.fill("#f-note", "two of six toilets locked")
    send(page)
    wait_recorded(page, "two of six toilets locked")
    wait_until(lambda: "DEFICIENT" in toilets.inner_text(), 10, "the mark on the item")
    shots(page, "inspector-page-pixel-7-4-checklist")
    button(toilets, "N/A").tap()
    send(page)
    wait_recorded(page, "mark C(2)(a) n/a")
    marks = [(ok, m["item"], m["result"]) for ok, m in
             field.logged(TOPICS.inspector("insp-1", "inspection"))]  # fmt: skip
    assert marks == [
        (True, "C(1)(a)", "ok"), (True, "C(2)(a)", "deficient"), (True, "C(2)(a)", "n/a")
    ]  # fmt: skip
    page.context.close()


@pytest.mark.parametrize("phone", [SMALL_ANDROID], ids=["small-android"], indirect=True)
def test_the_clerk_revokes_and_reinstates_the_permit_by_touch(
    field: Field, served: tuple[str, subprocess.Popen[bytes]], phone: Browser, shots: Shoot
) -> None:
    base, _ = served
    page = open_page(phone, SMALL_ANDROID, base, "clerk-1", CLERK_PW)
    names = page.locator("#actions button").all_inner_texts()
    assert names == ["Revoke permit"], "the Clerk's page changes the permit, nothing else"
    button(page, "Revoke permit").tap()
    send(page)  # the resolution is required
    assert "Name the Town Board's resolution" in page.inner_text("#screen-form .error")
    page.fill("#f-resolution", "TB-2027-41")
    page.fill("#f-reason", "no doctor on site")
    shots(page, "inspector-page-small-android-3-revoke-form")
    send(page)
    wait_recorded(page, "revoke the permit by resolution TB-2027-41")
    wait_until(lambda: "REVOKED" in page.inner_text("#permit"), 15, "the permit revoked")
    shots(page, "inspector-page-small-android-4-revoked")
    button(page, "Reinstate permit").tap()
    page.fill("#f-resolution", "TB-2027-42")
    send(page)
    wait_recorded(page, "reinstate the permit by resolution TB-2027-42")
    wait_until(lambda: "issued" in page.inner_text("#permit"), 15, "the permit issued again")
    changes = field.logged(TOPICS.clerk_permit("clerk-1"))
    assert [(ok, c["status"], c["resolution"]) for ok, c in changes] == [
        (True, "revoked", "TB-2027-41"), (True, "issued", "TB-2027-42")
    ]  # fmt: skip
    assert changes[0][1]["reason"] == "no doctor on site"
    page.context.close()


# -- without a signal --------------------------------------------------------------------


def kept(page: Page) -> list[dict[str, Any]]:
    """The actions this browser keeps, with their state."""
    return page.evaluate(  # type: ignore[no-any-return]
        "() => (JSON.parse(localStorage.getItem(document.body.dataset.store)) || "
        "{actions: []}).actions"
    )


@pytest.mark.parametrize("phone", [PIXEL_7], ids=["pixel-7"], indirect=True)
def test_actions_without_a_signal_are_kept_then_recorded_in_order_and_once(
    field: Field, served: tuple[str, subprocess.Popen[bytes]], phone: Browser, shots: Shoot
) -> None:
    base, _ = served
    notes_topic = TOPICS.inspector("insp-1", "note")
    page = open_page(phone, PIXEL_7, base, "insp-1", INSPECTOR_PW)
    context = page.context
    before = len(field.logged(notes_topic))

    context.set_offline(True)  # the phone loses its signal
    wait_until(lambda: "No link to the command post" in page.inner_text("#banner"), 15,
               "the banner")  # fmt: skip
    for text in ("offline note one", "offline note two"):
        button(page, "Add note").tap()
        page.fill("#f-text", text)
        send(page)
        wait_until(lambda: page.is_visible("#actions"), 10, "the main screen")
    assert "kept on this phone (no link)" in pending(page)
    assert "Not yet recorded: 2" in pending(page)
    assert "2 actions kept on this phone" in page.inner_text("#banner")
    assert [a["state"] for a in kept(page)] == ["kept", "kept"]
    shots(page, "inspector-page-offline-1-kept")
    assert len(field.logged(notes_topic)) == before  # nothing reached the aggregator

    context.set_offline(False)
    wait_recorded(page, "offline note one")
    wait_recorded(page, "offline note two")
    wait_until(lambda: not page.is_visible("#banner"), 15, "the banner gone")
    shots(page, "inspector-page-offline-2-recorded")

    # Made offline, the tab closed, the phone back online: the reopened tab sends it.
    context.set_offline(True)
    wait_until(lambda: "No link" in page.inner_text("#banner"), 15, "the banner")
    button(page, "Add note").tap()
    page.fill("#f-text", "offline note three, tab closed")
    send(page)
    page.close()
    context.set_offline(False)
    page = context.new_page()
    page.goto(f"{base}/inspector")
    wait_recorded(page, "offline note three, tab closed")
    # A reload at once after Send: whatever went out is recorded once.
    button(page, "Add note").tap()
    page.fill("#f-text", "note sent, then the page reloaded")
    send(page)
    page.reload()
    wait_recorded(page, "note sent, then the page reloaded")
    context.close()

    texts = [n["text"] for ok, n in field.logged(notes_topic)[before:] if ok]
    assert texts == [
        "offline note one", "offline note two", "offline note three, tab closed",
        "note sent, then the page reloaded",
    ]  # fmt: skip
    assert len(field.logged(notes_topic)[before:]) == 4, "each sent once"
