"""A mistyped event id is said within 10 s, on a real broker, by both dashboards.

The broker answers and holds a retained status, but for another event: the views were
started with ``--event kent-summer-fest-2o27`` (a letter o for the zero). Neither the
aggregator's availability nor a status for that event ever comes, so after 10 s the
banner names the event and the broker; the gate view's manual tally keeps counting on
the tablet and says its counts reach no one. When an aggregator for the event does
appear, both go back to normal.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dashboard_samples as samples
import pytest
from dashboard_mqtt import publish
from live_support import until
from rich.console import Console
from textual.widgets import Static

from dashboards.common.connection import unheard
from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.gate.app import make_gate_app
from dashboards.gate.widgets.figures import TallyPanel
from dashboards.inspector.app import make_inspector_app
from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.wire import Topics, encode_availability

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

MISTYPED = "kent-summer-fest-2o27"


def shown(widget: Static) -> str:
    console = Console(width=300, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


@pytest.fixture
def other_event(broker: MosquittoBroker) -> MosquittoBroker:
    """The real event's aggregator is there: its retained status and availability."""
    topics = Topics(samples.EVENT)
    status = samples.status(ts=datetime.now(UTC).isoformat())
    publish(
        broker,
        [(topics.status, status), (topics.aggregator_availability, encode_availability(True))],
    )
    return broker


@pytest.mark.slow
async def test_the_gate_view_says_no_aggregator_answers_for_its_event_within_10_s(
    other_event: MosquittoBroker, tmp_path: Path
) -> None:
    app = make_gate_app("north", MISTYPED, parse_broker_url(other_event.url), state_dir=tmp_path)
    expected = (
        f"No aggregator for event {MISTYPED} on {other_event.url}: check --event (and --broker)"
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.feed is not None and app.feed.connected)
        # The banner follows the connection on the app's own loop, a moment later.
        await until(pilot, lambda: app.problem == "Waiting for the aggregator's first status…")
        await pilot.press("plus", "plus")  # counted on the tablet meanwhile
        await until(pilot, lambda: app.problem == expected, within=12)
        await pilot.pause()
        banner = app.screen.query_one(ConnectionBanner)
        assert banner.has_class("-shown")
        assert expected in shown(banner)
        assert app.tally.in_total == 2  # the tally keeps counting locally
        await until(pilot, lambda: app.unheard)
        await pilot.pause()
        tally = shown(app.screen.query_one(TallyPanel))
        assert "#2 not counted: no aggregator for this event on the broker" in tally
        assert "✓" not in tally

        # An aggregator for this event comes up: the banner goes; the tally speaks once
        # its first status says what time it keeps, and is counted once it says so.
        publish(
            other_event, [(Topics(MISTYPED).aggregator_availability, encode_availability(True))]
        )
        await until(pilot, lambda: not app.unheard)
        await until(pilot, lambda: app.problem == "Waiting for the aggregator's first status…")
        panel = app.screen.query_one(TallyPanel)
        await until(pilot, lambda: "waiting for the aggregator's first status" in shown(panel))
        manual = {"in": 0, "out": 0, "net": 0, "manual": True, "online": None}
        now = datetime.now(UTC).isoformat()
        publish(other_event, [(Topics(MISTYPED).status, status_with(now, manual))])
        await until(pilot, lambda: "#2 sent, not yet counted" in shown(panel))
        manual.update({"in": 2, "net": 2, "online": True, "last_seen": now})
        publish(other_event, [(Topics(MISTYPED).status, status_with(now, manual))])
        await until(pilot, lambda: "#2 counted" in shown(panel))


def status_with(ts: str, manual: dict[str, Any]) -> bytes:
    """The sample status at ``ts`` with this manual tally for the north gate."""
    data = samples.status_data(ts=ts)
    data["gates"]["north-manual"] = manual
    return json.dumps(data).encode()


async def test_the_dashboard_says_no_aggregator_answers_for_its_event(
    other_event: MosquittoBroker,
) -> None:
    app = make_inspector_app(
        MISTYPED,
        parse_broker_url(other_event.url),
        "insp-2",
        blink=False,
        no_aggregator_after_s=1.0,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: (app.problem or "").startswith("No aggregator"))
        await pilot.pause()
        banner = app.screen.query_one(ConnectionBanner)
        assert banner.has_class("-shown")
        assert f"No aggregator for event {MISTYPED} on {other_event.url}" in shown(banner)
        assert app.status is None  # another event's status is never shown as this one's


async def test_with_the_right_event_there_is_no_such_banner(other_event: MosquittoBroker) -> None:
    app = make_inspector_app(
        samples.EVENT,
        parse_broker_url(other_event.url),
        "insp-2",
        blink=False,
        no_aggregator_after_s=0.5,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.status is not None)
        assert app.problem is None
        # However long it now waits, an aggregator has answered for this event.
        later = time.monotonic() + 3600
        assert not unheard(app.connection, later, after_s=app.no_aggregator_after_s)
