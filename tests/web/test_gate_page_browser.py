"""The deputy's gate view in Chromium at the real scale of three phones and a tablet.

A real ``kent-ops serve`` over HTTPS in front of a Mosquitto with the ACL of
``kent-ops deploy acl`` and a running aggregator (tests/web/field_support.py). Chromium
is launched at each device's real pixel ratio (``--force-device-scale-factor``) with
its viewport, touch and mobile settings (tests/web/browser_support.py), and each test
looks at the page as a deputy would: the order word whole on the screen in its colour,
the buttons under the thumb, the taps counted by the aggregator; and, with the link
cut while tapping, every tap counted once, in order, even across a reload. Beside an
aggregator on its sensors' clock (a rehearsal, the demo) a tap carries that clock's
time and reads "counted" only once the aggregator's status counts it; one it refuses
reads, in words, that it was not counted.
Screenshots of each screen are kept in ./out/screenshots with ``KENT_OPS_KEEP_SCREENSHOTS=1``.
"""

from __future__ import annotations

import io
import re
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from browser_support import (
    DEVICES,
    IPHONE_14,
    PIXEL_7,
    SMALL_ANDROID,
    Device,
    Shoot,
    device_context,
    on_each,
    pending,
    sign_in,
)
from field_support import HOLD_AT, SIMULATED_START, TOPICS, Field, apps_of, password
from live_support import wait_until
from PIL import Image
from playwright.sync_api import Browser, Page

from kent_ops.core.gate_view import ORDER_COLOURS
from kent_ops.core.wire import generate_keys_file

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(240)]

NORTH_PW = password("deputy-north")
SOUTH_PW = password("deputy-south")
MANUAL = TOPICS.gate_count("north-manual")

_BOXES = """() => {
  const box = (el) => el.getBoundingClientRect().toJSON();
  const word = document.getElementById("word");
  const range = document.createRange();
  range.selectNodeContents(word);
  return {
    text: range.getBoundingClientRect().toJSON(), word: box(word),
    order: box(document.getElementById("order")), clipped: word.scrollWidth > word.clientWidth,
    plus: box(document.getElementById("tap-in")), minus: box(document.getElementById("tap-out")),
    width: innerWidth, height: innerHeight, ratio: devicePixelRatio,
  };
}"""


def word(page: Page) -> str:
    return page.inner_text("#word")


def kept(page: Page) -> int:
    """Taps kept in this browser's storage, not yet sent (the broker does not have them)."""
    return page.evaluate(  # type: ignore[no-any-return]
        "() => (JSON.parse(localStorage.getItem(document.body.dataset.store)) || "
        "{pending: []}).pending.length"
    )


def manual(field: Field) -> tuple[int, int]:
    """What the aggregator has counted for the north gate's manual tally."""
    status = field.watcher.json(TOPICS.status) or {}
    gate = status.get("gates", {}).get("north-manual") or {}
    return gate.get("in", 0), gate.get("out", 0)


def colour_at(page: Page, x: float, y: float) -> tuple[int, int, int]:
    """The colour a person sees at CSS pixel (x, y), from a screenshot at the real scale."""
    image = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
    ratio = image.width / page.viewport_size["width"]  # type: ignore[index]
    return image.getpixel((int(x * ratio), int(y * ratio)))  # type: ignore[return-value]


def hex_rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def assert_whole_in_its_colour(page: Page, device: Device, tone: str) -> dict[str, Any]:
    boxes = page.evaluate(_BOXES)
    assert boxes["ratio"] == pytest.approx(device.scale)
    assert (boxes["width"], boxes["height"]) == (device.width, device.height)
    text, order = boxes["text"], boxes["order"]
    assert not boxes["clipped"]
    assert within(text, (0, 0, boxes["width"], boxes["height"])), boxes
    assert within(text, (order["left"], order["top"], order["right"], order["bottom"])), boxes
    assert text["width"] >= 0.6 * boxes["width"]  # large: most of the screen's width
    sample = colour_at(page, order["left"] + 3, order["top"] + 3)
    assert sample == pytest.approx(hex_rgb(ORDER_COLOURS[tone]), abs=3)  # type: ignore[arg-type]
    return boxes


def assert_buttons_under_the_thumb(boxes: dict[str, Any]) -> None:
    for key in ("plus", "minus"):
        button = boxes[key]
        assert within(button, (0, 0, boxes["width"], boxes["height"])), boxes
        assert button["height"] >= 56  # above the 44-48 CSS px that phone makers ask for
        assert button["width"] >= 0.4 * boxes["width"]


def within(box: dict[str, float], outer: tuple[float, float, float, float]) -> bool:
    """Whether a box (a DOMRect) lies inside (left, top, right, bottom)."""
    left, top, right, bottom = outer
    return (
        box["left"] >= left and box["top"] >= top
        and box["right"] <= right and box["bottom"] <= bottom
    )  # fmt: skip


def open_gate(browser: Browser, device: Device, base: str, name: str, pw: str) -> Page:
    page = device_context(browser, device).new_page()
    sign_in(page, base, name, pw)
    page.wait_for_url(f"{base}/gate")
    wait_until(lambda: word(page) in ("ADMIT", "HOLD"), 20, f"{name}'s order on the page")
    return page


@on_each(DEVICES)
def test_the_order_is_whole_in_its_colour_holds_at_once_and_taps_count(
    field: Field,
    served: tuple[str, subprocess.Popen[bytes]],
    phone: Browser,
    device: Device,
    shots: Shoot,
) -> None:
    base, server = served
    field.north_net(100)
    wait_until(lambda: (field.watcher.json(TOPICS.status) or {}).get("admit"), 20, "ADMIT")
    page = open_gate(phone, device, base, "jsmith", NORTH_PW)
    wait_until(lambda: word(page) == "ADMIT", 10, "ADMIT on the page")
    wait_until(lambda: "· hold at 550" in page.inner_text("#details"), 10, "the figures")
    assert_buttons_under_the_thumb(assert_whole_in_its_colour(page, device, "admit"))
    shots(page, f"gate-{device.name}-1-admit")

    field.north_net(HOLD_AT + 50)
    wait_until(lambda: attendance(field) > HOLD_AT, 20, "the aggregator's status past hold_at")
    shown_at = time.monotonic()
    wait_until(lambda: word(page) == "HOLD", 3, "HOLD within 3 s of the aggregator's status")
    held_after = time.monotonic() - shown_at
    assert_whole_in_its_colour(page, device, "hold")
    shots(page, f"gate-{device.name}-2-hold")

    before = manual(field)
    for button in ("#tap-in", "#tap-in", "#tap-out"):
        page.tap(button)
    wait_until(lambda: manual(field) == (before[0] + 2, before[1] + 1), 15, "the aggregator")
    wait_until(lambda: pending(page) == "This phone: 3 taps counted", 15, "3 taps counted")
    assert kept(page) == 0
    shots(page, f"gate-{device.name}-3-tally")
    assert apps_of(server, "gate") == []  # a phone costs a websocket, not a process
    page.context.close()
    print(f"{device.name}: HOLD on the page {held_after:.2f} s after the status")


def attendance(field: Field) -> int:
    status = field.watcher.json(TOPICS.status) or {}
    return (status.get("attendance") or {}).get("current") or 0


@pytest.mark.parametrize("phone", [IPHONE_14], ids=["iphone-14"], indirect=True)
def test_taps_without_a_link_are_kept_and_counted_in_order_and_once(
    field: Field, served: tuple[str, subprocess.Popen[bytes]], phone: Browser, shots: Shoot
) -> None:
    base, _ = served
    page = open_gate(phone, IPHONE_14, base, "jsmith", NORTH_PW)
    context = page.context
    mark = len(field.watcher.history)
    before = manual(field)
    page.tap("#tap-in")
    wait_until(lambda: manual(field) == (before[0] + 1, before[1]), 15, "the first tap counted")

    context.set_offline(True)  # the phone loses its signal
    wait_until(lambda: page.is_visible("#banner"), 10, "the banner")
    assert "No link to the command post" in page.inner_text("#banner")
    for button in ("#tap-in", "#tap-in", "#tap-out", "#tap-in"):
        page.tap(button)
    assert kept(page) == 4
    assert "4 not yet sent (kept here): + + − +" in pending(page)
    assert "4 taps kept on this phone" in page.inner_text("#banner")
    shots(page, "gate-offline-1-kept")
    # Nothing more reached the aggregator, whose figure the page still shows.
    assert manual(field) == (before[0] + 1, before[1])

    context.set_offline(False)
    wait_until(lambda: kept(page) == 0, 30, "the kept taps sent")
    wait_until(lambda: manual(field) == (before[0] + 4, before[1] + 1), 15, "the aggregator")
    wait_until(lambda: not page.is_visible("#banner"), 10, "the banner gone")
    shots(page, "gate-offline-2-sent")

    # Reopened tab: taps made offline, the tab closed, the phone back online.
    context.set_offline(True)
    wait_until(lambda: page.is_visible("#banner"), 10, "the banner")
    for button in ("#tap-in", "#tap-out", "#tap-in"):
        page.tap(button)
    page.close()
    context.set_offline(False)
    page = context.new_page()
    page.goto(f"{base}/gate")
    wait_until(lambda: kept(page) == 0, 30, "the reopened tab to send what it kept")
    wait_until(lambda: manual(field) == (before[0] + 6, before[1] + 2), 15, "the aggregator")
    wait_until(lambda: "This phone: 8 taps counted" in pending(page), 15, "8 taps counted")

    # Reloaded at once after tapping: whatever was sent is counted once.
    for button in ("#tap-in", "#tap-in", "#tap-in", "#tap-out", "#tap-in"):
        page.tap(button)
    page.reload()
    wait_until(lambda: kept(page) == 0, 30, "the reloaded page to send what it kept")
    wait_until(lambda: manual(field) == (before[0] + 10, before[1] + 3), 15, "the aggregator")
    shots(page, "gate-offline-3-reloaded")
    context.close()

    messages = field.watcher.since(mark, MANUAL)
    seqs = [m["seq"] for m in messages]
    assert seqs == sorted(set(seqs)), seqs  # in order, none twice
    totals = [(m["in_total"], m["out_total"]) for m in messages]
    assert totals == sorted(totals), totals  # the totals never went back
    assert manual(field) == (before[0] + 10, before[1] + 3)  # each tap once
    assert field.counter_resets() == []


@pytest.mark.parametrize("phone", [PIXEL_7], ids=["pixel-7"], indirect=True)
def test_any_number_of_deputies_at_one_gate_and_a_gate_without_a_tally(
    field: Field, served: tuple[str, subprocess.Popen[bytes]], phone: Browser, shots: Shoot
) -> None:
    base, server = served
    first = open_gate(phone, PIXEL_7, base, "jsmith", NORTH_PW)
    second = open_gate(phone, PIXEL_7, base, "mjones", NORTH_PW)
    again = open_gate(phone, PIXEL_7, base, "jsmith", NORTH_PW)  # the same deputy, a 2nd phone
    before = manual(field)
    second.tap("#tap-in")
    again.tap("#tap-out")
    wait_until(lambda: manual(field) == (before[0] + 1, before[1] + 1), 15, "both counted")
    total = rf"in {before[0] + 1}\s+out {before[1] + 1}"
    for page in (first, second, again):  # nobody was closed; each sees the gate's tally
        wait_until(lambda p=page: re.search(total, p.inner_text("#tally-lines")), 10,
                   "the gate's tally on every phone")  # fmt: skip
        assert not page.is_visible("#banner")
    assert apps_of(server, "gate") == []

    south = open_gate(phone, SMALL_ANDROID, base, "asmith", SOUTH_PW)
    assert south.is_hidden("#keys")
    assert "south-manual is not a gate in the permit" in south.inner_text("#tally-lines")
    assert "Gate south" in south.inner_text("#counts")
    shots(south, "gate-south-no-tally")
    for page in (first, second, again, south):
        page.context.close()


@pytest.mark.parametrize("phone", [SMALL_ANDROID], ids=["small-android"], indirect=True)
@pytest.mark.slow
def test_a_refused_account_is_said_another_deputys_password_used_and_an_ended_sign_in_said(
    field: Field, phone: Browser, shots: Shoot
) -> None:
    base, _ = field.serve("serve-gate-short", "--session-minutes", "0.5")
    page = device_context(phone, SMALL_ANDROID).new_page()
    sign_in(page, base, "wrong", "not the broker password")
    page.wait_for_url(f"{base}/gate")
    wait_until(lambda: "not authorised as deputy-south" in page.inner_text("#banner"), 20,
               "the broker's refusal named")  # fmt: skip
    assert "unreachable" not in page.inner_text("#banner")
    assert word(page) == "NO ORDER"
    shots(page, "gate-refused")
    # A deputy of the same gate signs in with the broker's password: the gate's one
    # connection uses it next, and both phones see the order.
    other = open_gate(phone, SMALL_ANDROID, base, "asmith", SOUTH_PW)
    wait_until(lambda: word(page) in ("ADMIT", "HOLD"), 20, "the order on the first phone too")
    assert not other.is_visible("#banner")
    wait_until(lambda: "Signed out" in page.inner_text("#banner"), 60, "the sign-in's end")
    shots(page, "gate-signed-out")
    for each in (page, other):
        each.context.close()


# -- beside a rehearsal: the aggregator on its sensors' clock -------------------------------

SOUTH_MANUAL = TOPICS.gate_count("south-manual")


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Field]:
    """``kent-ops run --clock sensor`` fed by a gate counter on a simulated day, with a
    manual tally at both gates, on an event that signs its readings."""
    with Field(
        tmp_path_factory.mktemp("rehearsal"), clock="sensor",
        gates=("north", "south", "north-manual", "south-manual"), signing=True,
    ) as f:  # fmt: skip
        f.north_net(100)  # the aggregator's day starts: 11:00 in Kent
        wait_until(lambda: (f.watcher.json(TOPICS.status) or {}).get("ts"), 30, "its first status")
        yield f


@pytest.fixture(scope="module")
def rehearsal_served(rehearsal: Field) -> tuple[str, subprocess.Popen[bytes]]:
    """The web server, with the north tally's own key, and for the south tally a key the
    aggregator does not know (an old keys file): every south tap is refused."""
    keys = rehearsal.root / "serve-keys.toml"
    wrong = generate_keys_file(["south-manual"]).splitlines()[-1]
    keys.write_text(f'[keys]\n"north-manual" = "{rehearsal.keys["north-manual"].hex()}"\n{wrong}\n')
    keys.chmod(0o600)
    return rehearsal.serve("serve-rehearsal", "--keys", str(keys))


def rejections(field: Field, topic: str) -> list[str]:
    """Why the aggregator refused each message on ``topic``, from its evidence log."""
    path = field.root / "evidence.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as log:
        rows = log.execute(
            "SELECT reason FROM records WHERE kind = 'message' AND topic = ? AND accepted = 0",
            (topic,),
        ).fetchall()
    return [reason for (reason,) in rows]


@pytest.mark.parametrize("phone", [IPHONE_14], ids=["iphone-14"], indirect=True)
def test_beside_a_rehearsal_a_tap_carries_its_time_and_reads_counted_once_counted(
    rehearsal: Field, rehearsal_served: tuple[str, subprocess.Popen[bytes]], phone: Browser,
    shots: Shoot,
) -> None:  # fmt: skip
    base, _ = rehearsal_served
    page = open_gate(phone, IPHONE_14, base, "jsmith", NORTH_PW)
    mark = len(rehearsal.watcher.history)
    page.tap("#tap-in")
    page.tap("#tap-out")
    wait_until(lambda: manual(rehearsal) == (1, 1), 20, "the aggregator to count both taps")
    wait_until(lambda: pending(page) == "This phone: 2 taps counted", 15, "2 taps counted")
    wait_until(lambda: re.search(r"in 1\s+out 1\s+net 0\s+#2 counted", page.inner_text(
        "#tally-lines")), 10, "the gate's view to say the tally's taps are counted")  # fmt: skip
    assert "✓" not in page.inner_text("body")
    shots(page, "gate-rehearsal-counted")
    # Stamped with the aggregator's time (a simulated day months from the wall clock's),
    # so nothing of the tally was refused as being from another day.
    stamps = [datetime.fromisoformat(m["ts"]) for m in rehearsal.watcher.since(mark, MANUAL)]
    assert stamps
    assert all(SIMULATED_START <= t < SIMULATED_START + timedelta(hours=1) for t in stamps)
    assert rejections(rehearsal, MANUAL) == []
    # The screen keeps the aggregator's time too: 11:00 in Kent, not the wall clock's.
    assert re.match(r"11:0\d:\d\d EDT", page.inner_text("#header")), page.inner_text("#header")
    page.context.close()


@pytest.mark.parametrize("phone", [SMALL_ANDROID], ids=["small-android"], indirect=True)
def test_a_tap_the_aggregator_refuses_reads_not_counted_in_words(
    rehearsal: Field, rehearsal_served: tuple[str, subprocess.Popen[bytes]], phone: Browser,
    shots: Shoot,
) -> None:  # fmt: skip
    base, _ = rehearsal_served
    page = open_gate(phone, SMALL_ANDROID, base, "asmith", SOUTH_PW)
    page.tap("#tap-in")
    wait_until(lambda: "1 sent, not yet counted" in pending(page), 15, "the tap sent")
    sent = time.monotonic()
    said = "This phone: 0 taps counted · 1 tap not counted by the aggregator: tell the command post"
    wait_until(lambda: pending(page) == said, 30, "the page to say the tap was not counted")
    waited = time.monotonic() - sent
    wait_until(lambda: "#1 not counted by the aggregator: tell the command post" in
               page.inner_text("#tally-lines"), 10, "the gate's view to say so too")  # fmt: skip
    assert page.get_attribute("#pending", "class") == "t-alarm"
    assert "✓" not in page.inner_text("body")
    shots(page, "gate-rehearsal-not-counted")
    # The aggregator refused it (the server's key for the south tally is not the
    # event's) and counts nobody for that tally: not used, which is not offline.
    assert rejections(rehearsal, SOUTH_MANUAL)
    assert all(r.startswith("bad signature") for r in rejections(rehearsal, SOUTH_MANUAL))
    south = ((rehearsal.watcher.json(TOPICS.status) or {}).get("gates") or {})["south-manual"]
    assert (south["in"], south["out"], south["online"]) == (0, 0, None)
    page.context.close()
    print(f"'not counted' on the page {waited:.1f} s after 'sent'")
