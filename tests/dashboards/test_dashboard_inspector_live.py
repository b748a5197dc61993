"""The inspector dashboard driven with Pilot against a real Mosquitto.

A fixture publishes retained status and alerts with a paho client (no aggregator);
the dashboard must show them, publish exactly the payloads of docs/protocol.md for its actions, show
"recorded" when the published alert or status reflects them, and raise the banner
when the broker goes away, keeping the figures on screen.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import dashboard_samples as samples
import pytest
from dashboard_mqtt import Collector, publish
from live_support import until
from rich.console import Console

from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.inspector.app import InspectorApp, make_inspector_app
from dashboards.inspector.widgets.action_log import ActionLog
from dashboards.inspector.widgets.alert_list import AlertList
from dashboards.inspector.widgets.glance import AttendancePanel
from dashboards.inspector.widgets.tables import GatesTable, LotsTable
from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core import wire
from kent_ops.core.wire import Topics

pytestmark = pytest.mark.timeout(60)

TOPICS = Topics(samples.EVENT)
ISO_KEYS = {"ts"}


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def live_status(**changes: Any) -> wire.Status:
    """The fixture status stamped now, so the wall clock does not find it stale."""
    return samples.status(ts=now_iso(), **changes)


def shown(widget: Any) -> str:
    """What a Static widget shows, as plain text."""
    console = Console(width=200, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


@pytest.fixture
def retained(broker: MosquittoBroker) -> MosquittoBroker:
    publish(
        broker,
        [
            (TOPICS.status, live_status()),
            (TOPICS.aggregator_availability, wire.encode_availability(True)),
        ]
        + [(TOPICS.alert(a.id), a) for a in samples.alerts()],
    )
    return broker


@pytest.fixture
def inspector_topics(broker: MosquittoBroker) -> Iterator[Collector]:
    collector = Collector(broker, Topics(samples.EVENT).inspector("+", "+"))
    yield collector
    collector.close()


def make_app(broker: MosquittoBroker) -> InspectorApp:
    return make_inspector_app(samples.EVENT, parse_broker_url(broker.url), "insp-2", blink=False)


@pytest.mark.integration
async def test_retained_status_and_alerts_appear(retained: MosquittoBroker) -> None:
    app = make_app(retained)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.status is not None and len(app.alerts) == 3)
        await pilot.pause()
        screen = app.screen
        assert "max 4,000" in shown(screen.query_one(AttendancePanel))
        assert "UNCERTAIN: south down" in shown(screen.query_one(AttendancePanel))
        assert screen.query_one(GatesTable).row_count == 3
        assert screen.query_one(LotsTable).row_count == 2
        alert_list = screen.query_one(AlertList)
        assert alert_list.option_count == 4  # three alerts and one pending condition
        assert alert_list.selected_alert == "A-0004"  # the breach, first
        assert "A-0004" in app.rung  # the new breach rang the bell, once
        assert app.bells == 1
        assert app.problem is None
        assert not screen.query_one(ConnectionBanner).has_class("-shown")


@pytest.mark.integration
async def test_acknowledging_publishes_spec_payload_and_shows_recorded(
    retained: MosquittoBroker, inspector_topics: Collector
) -> None:
    app = make_app(retained)
    ack_topic = TOPICS.inspector("insp-2", "ack")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(app.alerts) == 3)
        await pilot.press("a")
        await until(pilot, lambda: app.screen.query("#ack-comment"))
        await pilot.press(*"Called", "enter")
        await until(pilot, lambda: app.screen.query("#confirm-send"))
        assert not inspector_topics.on(ack_topic)  # nothing is sent before confirmation
        await pilot.press("y")
        await until(pilot, lambda: bool(inspector_topics.on(ack_topic)))
        (payload,) = inspector_topics.on(ack_topic)
        assert set(payload) == {"ts", "alert", "comment"}
        assert payload["alert"] == "A-0004"
        assert payload["comment"] == "Called"
        assert datetime.fromisoformat(payload["ts"]).tzinfo is not None
        await until(pilot, lambda: app.actions[-1].state == "delivered")
        assert "sent, not yet recorded" in shown(app.screen.query_one(ActionLog))

        # The aggregator records it: the alert is republished with the acknowledgement.
        ack = {"by": "insp-2", "at": now_iso(), "comment": "Called"}
        publish(retained, [(TOPICS.alert("A-0004"), samples.alert(acknowledged=[ack]))])
        await until(pilot, lambda: app.actions[-1].state == "recorded")
        await pilot.pause()
        assert "✓ recorded" in shown(app.screen.query_one(ActionLog))
        entry = app.screen.query_one(AlertList).item("A-0004")
        assert entry is not None
        assert "✓ insp-2" in entry.text.plain


@pytest.mark.integration
async def test_cancelling_sends_nothing(
    retained: MosquittoBroker, inspector_topics: Collector
) -> None:
    app = make_app(retained)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(app.alerts) == 3)
        await pilot.press("a")
        await until(pilot, lambda: app.screen.query("#ack-comment"))
        await pilot.press(*"oops", "enter")
        await until(pilot, lambda: app.screen.query("#confirm-send"))
        await pilot.press("n")
        await until(pilot, lambda: app.screen.id == "main")
        # Then something that is sent: the dashboard publishes in order on one
        # connection, so a cancelled acknowledgement, had it gone out, comes first.
        await pilot.press("c")
        await until(pilot, lambda: app.screen.query("#adjust-attendance"))
        await pilot.press(*"3050", "enter", *"sweep", "enter")
        await until(pilot, lambda: app.screen.query("#confirm-send"))
        await pilot.press("y")
        await until(pilot, lambda: bool(inspector_topics.messages))
        assert [a.kind for a in app.actions] == ["adjust"]
    assert [topic for topic, _, _ in inspector_topics.messages] == [
        TOPICS.inspector("insp-2", "adjust")
    ]


@pytest.mark.integration
async def test_a_note_and_an_adjustment_publish_spec_payloads_and_are_recorded(
    retained: MosquittoBroker, inspector_topics: Collector
) -> None:
    app = make_app(retained)
    note_topic = TOPICS.inspector("insp-2", "note")
    adjust_topic = TOPICS.inspector("insp-2", "adjust")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: len(app.alerts) == 3)
        await pilot.press("enter")  # the breach's detail screen
        await until(pilot, lambda: app.screen.id == "alert-detail")
        await pilot.press("n")
        await until(pilot, lambda: app.screen.query("#note-text"))
        await pilot.press(*"No water", "enter")
        await until(pilot, lambda: app.screen.query("#confirm-send"))
        await pilot.press("y")
        await until(pilot, lambda: bool(inspector_topics.on(note_topic)))
        (note,) = inspector_topics.on(note_topic)
        assert set(note) == {"ts", "text", "alert"}
        assert note["text"] == "No water"
        assert note["alert"] == "A-0004"

        await pilot.press("escape")  # back to the main screen
        await until(pilot, lambda: app.screen.id == "main")
        await pilot.press("c")
        await until(pilot, lambda: app.screen.query("#adjust-attendance"))
        await pilot.press(*"3050", "enter")
        assert app.screen.query_one(".form-error").render()  # the reason is required
        await pilot.press(*"sweep", "enter")
        await until(pilot, lambda: app.screen.query("#confirm-send"))
        await pilot.press("y")
        await until(pilot, lambda: bool(inspector_topics.on(adjust_topic)))
        (adjust,) = inspector_topics.on(adjust_topic)
        assert set(adjust) == {"ts", "attendance", "reason"}
        assert adjust["attendance"] == 3050
        assert adjust["reason"] == "sweep"

        # The aggregator's next status carries both.
        notes = [*samples.status_data()["notes"], {"by": "insp-2", "at": now_iso(), **note}]
        adjustments = [
            {
                "by": "insp-2",
                "at": now_iso(),
                "attendance": 3050,
                "offset": -70,
                "reason": "sweep",
            }
        ]
        publish(retained, [(TOPICS.status, live_status(notes=notes, adjustments=adjustments))])
        await until(pilot, lambda: [a.state for a in app.actions] == ["recorded", "recorded"])
        assert "adjusted to 3,050" in shown(app.screen.query_one(AttendancePanel))


@pytest.mark.integration
async def test_the_banner_appears_when_the_broker_stops_and_the_figures_stay(
    retained: MosquittoBroker,
) -> None:
    app = make_app(retained)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.status is not None and len(app.alerts) == 3)
        await until(pilot, lambda: app.problem is None)
        retained.stop()
        await until(pilot, lambda: (app.problem or "").startswith("Broker unreachable"))
        await pilot.pause()
        banner = app.screen.query_one(ConnectionBanner)
        assert banner.has_class("-shown")
        assert "Broker unreachable" in shown(banner)
        assert app.has_class("-stale")  # the figures are greyed...
        assert app.screen.query_one(GatesTable).row_count == 3  # ...never blanked
        assert app.screen.query_one(AlertList).option_count == 4
        assert "UNCERTAIN" in shown(app.screen.query_one(AttendancePanel))


@pytest.mark.integration
async def test_the_banner_shows_when_the_aggregator_goes_offline(retained: MosquittoBroker) -> None:
    app = make_app(retained)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.status is not None and app.problem is None)
        publish(retained, [(TOPICS.aggregator_availability, wire.encode_availability(False))])
        await until(pilot, lambda: (app.problem or "").startswith("The aggregator is offline"))
        publish(retained, [(TOPICS.aggregator_availability, wire.encode_availability(True))])
        await until(pilot, lambda: app.problem is None)


class SteppingClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


async def test_a_status_older_than_15_s_raises_the_banner_by_the_injected_clock() -> None:
    clock = SteppingClock(samples.NOW)
    app = make_inspector_app(
        samples.EVENT, None, "insp-2", clock=clock, statuses=[samples.status()], blink=False
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.problem is None
        clock.now = samples.STATUS_TS + timedelta(seconds=16)
        app.tick()
        await pilot.pause()
        assert app.problem == "No status for 16 s; showing figures from 14:03:05"
        assert app.screen.query_one(ConnectionBanner).has_class("-shown")
        app.show_status(samples.status(ts=samples.iso(clock.now)))
        await pilot.pause()
        assert app.problem is None


async def test_a_breach_rings_once_and_flashes_until_acknowledged() -> None:
    app = make_inspector_app(samples.EVENT, None, "insp-2", statuses=[samples.status()])
    async with app.run_test(size=(120, 40)) as pilot:
        app.show_alert("A-0004", samples.alert())
        app.show_alert("A-0004", samples.alert(observed={"nurses_on_duty": 5}))
        app.show_alert("A-0003", samples.alerts()[1])  # a warning: no bell
        await pilot.pause()
        assert app.bells == 1

        def prompt() -> object:
            """The breach's first line as drawn on the screen, styles and all."""
            alert_list = app.screen.query_one(AlertList)
            entry = alert_list.item("A-0004")
            assert entry is not None
            line = alert_list.render_line(0)
            return [(seg.text, seg.style) for seg in line if seg.text.strip()]

        first = prompt()
        app.flash_on = not app.flash_on
        await pilot.pause()
        assert prompt() != first  # the unacknowledged breach flashes on screen...
        assert [t for t, _ in prompt()] == [t for t, _ in first]  # ...same words, other style
        ack = [{"by": "insp-1", "at": now_iso(), "comment": "seen"}]
        app.show_alert("A-0004", samples.alert(acknowledged=ack))
        await pilot.pause()
        steady = prompt()
        app.flash_on = not app.flash_on
        await pilot.pause()
        assert prompt() == steady  # acknowledged: no more flashing
        app.show_alert("A-0005", samples.alert("A-0005"))
        await pilot.pause()
        assert app.bells == 2
        assert app.rung == {"A-0004", "A-0005"}


async def test_an_empty_alert_list_says_so() -> None:
    app = make_inspector_app(samples.EVENT, None, "insp-2", statuses=[samples.status(pending=[])])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        alert_list = app.screen.query_one(AlertList)
        assert alert_list.option_count == 1
        assert alert_list.item("-none-") is not None
        assert alert_list.selected_alert is None
        await pilot.press("a")  # nothing to acknowledge: a warning, no form
        await pilot.pause()
        assert app.screen.id == "main"


@pytest.mark.integration
async def test_the_main_screen_is_first_drawn_with_the_retained_figures(
    retained: MosquittoBroker,
) -> None:
    app = make_app(retained)
    async with app.run_test(size=(43, 40)) as pilot:
        await until(pilot, lambda: app.status is not None)
        assert app.screen.id == "main"
        await pilot.pause()
        panel = app.screen.query_one(AttendancePanel)
        drawn = "\n".join(strip.text for strip in panel.render_lines(panel.region.reset_offset))
        assert "ADMIT" in drawn
        assert "max 4,000" in drawn
        assert not app.has_class("-stale")


@pytest.mark.integration
async def test_without_a_status_the_main_screen_shows_greyed_after_the_wait(
    broker: MosquittoBroker,
) -> None:
    app = make_app(broker)  # nothing retained: no status will come
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.screen.id != "main"  # waiting for the retained status
        await until(pilot, lambda: app.screen.id == "main", within=app.FIRST_STATUS_WAIT_S + 5)
        await pilot.pause()
        assert app.status is None
        assert app.has_class("-stale")
        assert app.screen.query_one(ConnectionBanner).has_class("-shown")
