"""Debian's chromium, headless, driven by Playwright: phones at their real scale, and
textual-serve's terminal read from its own buffer.

The browser is the system's ``/usr/bin/chromium`` (scripts/test installs it); no
browser is downloaded. A phone is emulated as a phone is: Chromium launched with the
phone's real pixel ratio (``--force-device-scale-factor``) *and* a context with its
viewport, that ratio, ``is_mobile`` and ``has_touch``. The ratio given to the context
alone is not what a phone does (xterm.js issue 4728: a page measuring its elements in
CSS pixels against a canvas that assumes device pixels draws three times too large),
so a test would not see what a deputy sees. What a dashboard shows is read from
xterm.js's own screen buffer:
an init script notes textual-serve's terminal object when its page creates it (the
``websocket_url`` it sets is unique to that object), so a test reads the very
characters the browser draws, and taps and clicks land on the cells it finds them in.
Screenshots go to a temporary folder, or to ./out/screenshots with
``KENT_OPS_KEEP_SCREENSHOTS=1``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from live_support import wait_until
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
PHONE = {"width": 390, "height": 844}
TABLET = {"width": 1280, "height": 800}
KEEP = "KENT_OPS_KEEP_SCREENSHOTS"

Shoot = Callable[[Page, str], Path]
"""Takes a screenshot of a page under a name; returns where it went."""


@dataclass(frozen=True)
class Device:
    """A phone or tablet as the browser sees it: CSS pixels, pixel ratio, touch."""

    name: str
    width: int
    height: int
    scale: float
    mobile: bool = True

    @property
    def viewport(self) -> dict[str, int]:
        return {"width": self.width, "height": self.height}


IPHONE_14 = Device("iphone-14", 390, 844, 3)
PIXEL_7 = Device("pixel-7", 412, 915, 2.625)
SMALL_ANDROID = Device("small-android", 360, 640, 2)
TABLET_10 = Device("tablet", 820, 1180, 2)
DEVICES = (IPHONE_14, PIXEL_7, SMALL_ANDROID, TABLET_10)


def on_each(devices: tuple[Device, ...]) -> pytest.MarkDecorator:
    """A test run on each device: its ``phone`` a Chromium at the device's real scale
    (tests/web/conftest.py), its ``device`` the device."""
    return pytest.mark.parametrize(
        ("phone", "device"), [(d, d) for d in devices], ids=[d.name for d in devices],
        indirect=["phone"],
    )  # fmt: skip


def need_chromium() -> None:
    """Fail, saying why, where Debian's chromium is missing: no browser is downloaded."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"the browser tests need {CHROMIUM} (scripts/test installs Debian's chromium)")


@contextmanager
def driving_chromium() -> Iterator[Playwright]:
    """Playwright, once Debian's chromium is known to be there."""
    need_chromium()
    with sync_playwright() as playwright:
        yield playwright


def launch(playwright: Playwright, device: Device) -> Browser:
    """Chromium drawing at the device's real pixel ratio."""
    scale = f"--force-device-scale-factor={device.scale:g}"
    return playwright.chromium.launch(executable_path=CHROMIUM, args=[*FLAGS, scale], headless=True)


@contextmanager
def launched(playwright: Playwright, device: Device) -> Iterator[Browser]:
    """Chromium at the device's real pixel ratio, closed at the end."""
    browser = launch(playwright, device)
    try:
        yield browser
    finally:
        browser.close()


def device_context(browser: Browser, device: Device) -> BrowserContext:
    """A fresh profile (no cookies, empty storage) on the device."""
    context = browser.new_context(
        viewport=device.viewport,
        screen=device.viewport,
        device_scale_factor=device.scale,
        is_mobile=device.mobile,
        has_touch=device.mobile,
        ignore_https_errors=True,
    )
    context.add_init_script(_NOTE_TERMINAL)
    return context


_NOTE_TERMINAL = """
Object.defineProperty(Object.prototype, "websocket_url", {
  configurable: true,
  set(value) {
    window.__kentTerminal = this;
    Object.defineProperty(this, "websocket_url",
      {value, writable: true, configurable: true, enumerable: true});
  },
});
"""

_SCREEN = """() => {
  const holder = window.__kentTerminal;
  if (!holder || !holder.terminal) return null;
  const t = holder.terminal, buffer = t.buffer.active, lines = [];
  for (let y = 0; y < t.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    lines.push(line ? line.translateToString(true) : "");
  }
  const box = t.element.querySelector(".xterm-screen").getBoundingClientRect();
  return {lines, cols: t.cols, rows: t.rows, x: box.x, y: box.y, w: box.width, h: box.height};
}"""


def screenshot_dir(default: Path) -> Path:
    """Where screenshots go: ./out/screenshots when kept, else the test's temporary folder."""
    if os.environ.get(KEEP):
        folder = Path.cwd() / "out" / "screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return default


def shooter(folder: Path) -> Shoot:
    """Screenshots into ``folder``, each a PNG named for what it shows."""

    def shoot(page: Page, name: str) -> Path:
        path = folder / f"{name}.png"
        page.screenshot(path=str(path))
        return path

    return shoot


def new_context(browser: Browser, viewport: dict[str, int]) -> BrowserContext:
    """A fresh browser profile (no cookies), phone-like at phone size."""
    phone = viewport["width"] < 500
    context = browser.new_context(
        viewport=viewport, is_mobile=phone, has_touch=phone, ignore_https_errors=True
    )
    context.add_init_script(_NOTE_TERMINAL)
    return context


def sign_in(page: Page, base: str, name: str, password: str) -> None:
    page.goto(f"{base}/")
    page.fill("#name", name)
    page.fill("#password", password)
    page.click("#signin")


def pending(page: Page) -> str:
    """What a phone page (the gate view, the inspector's page) says of what this phone
    keeps and sent, or "" when it says nothing."""
    return page.inner_text("#pending") if page.is_visible("#pending") else ""


class Screen:
    """The terminal on a page: its text, where a text is, and taps on it."""

    def __init__(self, page: Page) -> None:
        self.page = page

    def _state(self) -> dict[str, Any] | None:
        return self.page.evaluate(_SCREEN)  # type: ignore[no-any-return]

    def text(self) -> str:
        state = self._state()
        return "\n".join(state["lines"]) if state else ""

    def wait_for_text(self, pattern: str, timeout: float = 30) -> re.Match[str]:
        """Poll the terminal until ``pattern`` (a regular expression) is on it."""
        return wait_until(
            lambda: re.search(pattern, self.text()), timeout, f"{pattern!r} on screen"
        )  # type: ignore[no-any-return]

    def cell_point(self, text: str) -> tuple[float, float]:
        """The page coordinates of the middle of the first cell showing ``text``."""
        state = self._state()
        assert state is not None, "no terminal on the page"
        for row, line in enumerate(state["lines"]):
            col = line.find(text)
            if col >= 0:
                width, height = state["w"] / state["cols"], state["h"] / state["rows"]
                return state["x"] + (col + 0.5) * width, state["y"] + (row + 0.5) * height
        raise AssertionError(f"{text!r} is not on the screen:\n{self.text()}")

    def tap(self, text: str) -> None:
        """Tap (a phone) or click the cell showing ``text``, as a person would."""
        x, y = self.cell_point(text)
        if self.page.context.browser and self.page.viewport_size["width"] < 500:  # type: ignore[index]
            self.page.touchscreen.tap(x, y)
        else:
            self.page.mouse.click(x, y)

    def size(self) -> tuple[int, int]:
        state = self._state()
        assert state is not None
        return state["cols"], state["rows"]
