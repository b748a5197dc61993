"""The web tests share the dashboards' sample status and command (tests/dashboards), and
the browser tests their set-up: a field per module (field_support.py), ``kent-ops
serve`` on it, and Debian's chromium at a device's real scale (browser_support.py).

A module whose field needs more (a crowd over the limit, the sensors' clock) overrides
``field``; ``served`` then serves that one.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import IPHONE_14, Shoot, driving_chromium, launched, screenshot_dir, shooter
from field_support import Field
from playwright.sync_api import Browser, Playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dashboards"))


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Field]:
    """Broker, aggregator and users of the module's own event, stopped after its tests."""
    with Field(tmp_path_factory.mktemp("field")) as f:
        yield f


@pytest.fixture(scope="module")
def served(field: Field) -> tuple[str, subprocess.Popen[bytes]]:
    """``kent-ops serve`` over HTTPS on the module's field: its base URL and its process."""
    return field.serve()


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with driving_chromium() as p:
        yield p


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Shoot:
    return shooter(screenshot_dir(tmp_path_factory.mktemp("screenshots")))


@pytest.fixture
def phone(playwright: Playwright, request: pytest.FixtureRequest) -> Iterator[Browser]:
    """Chromium at the real scale of the device the test is parametrized with."""
    with launched(playwright, request.param) as browser:
        yield browser


@pytest.fixture(scope="module")
def iphone(playwright: Playwright) -> Iterator[Browser]:
    """Chromium at an iPhone 14's real scale, for all the module's tests."""
    with launched(playwright, IPHONE_14) as browser:
        yield browser
