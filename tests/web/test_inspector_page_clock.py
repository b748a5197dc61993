"""One clock: the inspector's page stamps what it sends with the aggregator's own time.

An aggregator on its sensors' clock (``kent-ops run --clock sensor``: a rehearsal, the
demo) says ``"clock": "sensor"`` in its status, and its time is the readings' ``ts``,
here the simulated day's, far from the wall clock. A note made on the page in Chromium is
published with that time, not the phone's nor the server's wall clock, so a rehearsal
records it just as the field does (docs/protocol.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from browser_support import SMALL_ANDROID, device_context, launched, need_chromium, sign_in
from field_support import TOPICS, Field, password
from live_support import wait_until
from playwright.sync_api import sync_playwright

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Field]:
    with Field(tmp_path_factory.mktemp("field"), clock="sensor") as f:
        yield f


def test_a_note_made_on_the_page_carries_the_aggregators_sensor_time(field: Field) -> None:
    need_chromium()
    simulated = field.sensor_now().replace(microsecond=0)
    field.north_net(120, at=simulated)

    def on_the_sensor_clock() -> bool:
        status = field.watcher.json(TOPICS.status) or {}
        return status.get("clock") == "sensor" and (status.get("ts") or "").startswith(
            simulated.strftime("%Y-%m-%dT%H:%M:%S")
        )

    wait_until(on_the_sensor_clock, 30, "a status on the simulated clock")
    base, _ = field.serve()
    with sync_playwright() as playwright, launched(playwright, SMALL_ANDROID) as browser:
        page = device_context(browser, SMALL_ANDROID).new_page()
        sign_in(page, base, "insp-1", password("inspector-insp-1"))
        page.wait_for_url(f"{base}/inspector")
        wait_until(lambda: page.is_visible("#figure"), 30, "the first screen")
        page.get_by_role("button", name="Add note", exact=True).tap()
        page.fill("#f-text", "noted on the rehearsal's clock")
        page.get_by_role("button", name="Send", exact=True).tap()
        wait_until(lambda: "✓ recorded" in page.inner_text("#pending"), 30, "the note recorded")
    (accepted, note), *_ = field.logged(TOPICS.inspector("insp-1", "note"))
    assert accepted
    stamped = datetime.fromisoformat(note["ts"])
    assert abs(stamped - simulated) < timedelta(seconds=5), (stamped, simulated)
    assert abs(datetime.now(UTC) - stamped) > timedelta(days=1)  # not the wall clock
