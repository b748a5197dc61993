"""The Town Clerk revokes and reinstates the permit from the dashboard, against a real
aggregator on a real Mosquitto (permit:G).

Key, form, confirmation naming the resolution, one QoS 1 message on the Clerk's topic in
the wire's ``ClerkPermit`` shape, and "✓ recorded" once the aggregator's status shows
the permit revoked by that resolution; then the alarm under the header. Reinstating is
the same way back.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dashboard_mqtt import Collector
from form_support import keys
from live_support import EVENT, FAST, TOPICS, Watcher, permit_text, until
from rich.console import Console
from textual.widgets import Static

from dashboards.inspector.app import make_inspector_app
from dashboards.inspector.screens.forms import ConfirmScreen
from dashboards.inspector.screens.permit_form import PermitForm
from dashboards.inspector.widgets.action_log import ActionLog
from dashboards.inspector.widgets.glance import PermitAlarm
from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import load_permit
from kent_ops.core.wire import Topics
from kent_ops.service.aggregator import Aggregator

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

CLERK_TOPIC = Topics(EVENT).clerk_permit("town-clerk")


def shown(widget: Static) -> str:
    console = Console(width=300, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


@pytest.fixture
def aggregator(broker: MosquittoBroker, watcher: Watcher, tmp_path: Path) -> Iterator[Aggregator]:
    """A real aggregator on the wall clock, its permitted window around now."""
    path = tmp_path / "permit.toml"
    path.write_text(permit_text(window_now=True))
    agg = Aggregator(
        load_permit(path),
        tmp_path / "evidence.sqlite",
        parse_broker_url(broker.url),
        clock="wall",
        timing=FAST,
    )
    agg.start()
    try:
        watcher.wait_for(TOPICS.aggregator_availability, lambda b: b == b"online")
        yield agg
    finally:
        agg.stop()
        assert agg.wait(20), "the aggregator did not stop"
    assert agg.failure is None


@pytest.fixture
def clerk_topic(broker: MosquittoBroker) -> Iterator[Collector]:
    collector = Collector(broker, CLERK_TOPIC)
    yield collector
    collector.close()


async def test_the_clerk_revokes_and_reinstates_the_permit(
    broker: MosquittoBroker, aggregator: Aggregator, clerk_topic: Collector
) -> None:
    app = make_inspector_app(
        EVENT, parse_broker_url(broker.url), "insp-1", clerk="town-clerk", blink=False
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.status is not None and app.problem is None)
        assert app.status is not None
        assert app.status.permit.status == "issued"
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, PermitForm))
        await pilot.press(*keys("TB-2027-41"), "tab", *keys("no doctor on site"), "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = shown(app.screen.query_one(".form-title", Static))
        assert question.startswith("Revoke permit MG-2027-003 from ")
        assert "(now) by resolution TB-2027-41?" in question
        assert not clerk_topic.on(CLERK_TOPIC)  # nothing is sent before confirmation
        await pilot.press("y")

        await until(pilot, lambda: bool(clerk_topic.on(CLERK_TOPIC)))
        (sent,) = clerk_topic.on(CLERK_TOPIC)
        assert list(sent) == ["ts", "status", "effective_at", "resolution", "reason"]
        assert sent["status"] == "revoked"
        assert sent["resolution"] == "TB-2027-41"
        assert sent["reason"] == "no doctor on site"
        effective = datetime.fromisoformat(sent["effective_at"])
        assert abs(effective - datetime.now(UTC)) < timedelta(seconds=30)

        await until(pilot, lambda: app.actions[-1].state == "recorded", within=15)
        assert app.status.permit.status == "revoked"
        assert app.status.permit.resolution == "TB-2027-41"
        await pilot.pause()
        alarm = app.screen.query_one(PermitAlarm)
        assert alarm.has_class("-shown")
        assert "PERMIT MG-2027-003 REVOKED" in shown(alarm)
        assert "resolution TB-2027-41" in shown(alarm)
        log = shown(app.screen.query_one(ActionLog))
        assert "✓ recorded" in log
        assert "revoke the permit from" in log

        # Reinstated by a later resolution: the form offers it, the alarm goes.
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, PermitForm))
        await pilot.press(*keys("TB-2027-44"), "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Reinstate permit MG-2027-003" in shown(app.screen.query_one(".form-title"))
        await pilot.press("y")
        await until(pilot, lambda: len(app.actions) == 2 and app.actions[1].state == "recorded")
        assert app.status.permit.status == "issued"
        await pilot.pause()
        assert not app.screen.query_one(PermitAlarm).has_class("-shown")
    assert [m["status"] for m in clerk_topic.on(CLERK_TOPIC)] == ["revoked", "issued"]
