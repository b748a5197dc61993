"""The checklist screen of the inspector dashboard, driven with Pilot.

Standalone (no broker) for what the screen shows and refuses; against a real
aggregator on a real Mosquitto for a marking's whole way: key, note, confirmation,
QoS 1 publish, "✓ recorded", and the ``facility-deficient`` alert on the main screen.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from checklist_support import engine_status, running_aggregator, write_permit
from live_support import EVENT, T0, TOPICS, Watcher
from live_support import until as app_until
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Footer, Static

from dashboards.common.clock import fixed_clock
from dashboards.inspector.app import InspectorApp, make_inspector_app
from dashboards.inspector.screens.checklist import ChecklistScreen
from dashboards.inspector.screens.forms import ConfirmScreen, DeficientForm
from dashboards.inspector.screens.help import HelpScreen
from dashboards.inspector.screens.main import MainScreen
from dashboards.inspector.widgets.action_log import ActionLog
from dashboards.inspector.widgets.alert_list import AlertList
from dashboards.inspector.widgets.checklist_list import ChecklistList
from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import load_permit

pytestmark = pytest.mark.timeout(60)


def shown(widget: Static) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


async def until(pilot: Pilot[Any], check: Callable[[], bool], within: float = 15.0) -> None:
    """Let the app run until ``check()`` holds; fail after ``within`` seconds."""
    await app_until(pilot, check, within, "the dashboard")


async def type_text(pilot: Pilot[Any], text: str) -> None:
    await pilot.press(*("space" if ch == " " else ch for ch in text))


def standalone(tmp_path: Path, *, overnight: bool = False) -> InspectorApp:
    tmp_path.mkdir(parents=True, exist_ok=True)
    permit = load_permit(write_permit(tmp_path, overnight=overnight))
    status, alerts = engine_status(
        permit, [("insp-1", "C(1)(h)", "deficient", "common cup at water station 2", 60)]
    )
    return make_inspector_app(
        EVENT,
        None,
        "insp-1",
        clock=fixed_clock(T0.replace(minute=2)),
        statuses=[status],
        alerts=alerts,
        blink=False,
    )


def listed(app: InspectorApp) -> list[str]:
    checklist = app.screen.query_one(ChecklistList)
    return [str(o.id) for o in checklist.options if not o.disabled]


async def test_i_opens_the_checklist_from_the_main_screen_footer_palette_and_help(
    tmp_path: Path,
) -> None:
    app = standalone(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        keys = {k: b.binding.description for k, b in app.screen.active_bindings.items()}
        assert keys["i"] == "Checklist"
        assert app.screen.query_one(Footer)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Facilities checklist" in titles
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "the facilities checklist" in shown(app.screen.query_one("#help-keys", Static))
        await pilot.press("escape", "i")
        await pilot.pause()
        assert isinstance(app.screen, ChecklistScreen)
        assert app.screen.query_one(ChecklistList).selected_item == "C(1)(a)"
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_items_that_do_not_apply_are_not_shown(tmp_path: Path) -> None:
    day = standalone(tmp_path / "day")
    async with day.run_test(size=(120, 40)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        items = listed(day)
        assert "C(7)" not in items
        assert items[0] == "C(1)(a)"
        assert items[-1] == "F"
        assert len(items) == 20
    night = standalone(tmp_path / "night", overnight=True)
    async with night.run_test(size=(120, 40)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        assert "C(7)" in listed(night)


async def test_headings_cannot_be_chosen(tmp_path: Path) -> None:
    app = standalone(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("i", "up")  # from the first item round to the last
        await pilot.pause()
        checklist = app.screen.query_one(ChecklistList)
        assert checklist.selected_item == "F"
        await pilot.press("up")  # past the "F Clean-up" heading
        assert checklist.selected_item == "D"
        await pilot.press("down", "down")  # round again, past "C(1) Drinking water"
        assert checklist.selected_item == "C(1)(a)"
        await pilot.press(*["down"] * 10)  # C(1)(j), then past the C(2) heading
        assert checklist.selected_item == "C(2)(a)"


async def test_deficient_asks_what_was_found_and_refuses_an_empty_note(tmp_path: Path) -> None:
    app = standalone(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("i", "down", "d")
        await until(pilot, lambda: isinstance(app.screen, DeficientForm))
        form = app.screen
        assert "Mark C(1)(b) deficient" in shown(form.query_one(".form-title", Static))
        await pilot.press("space", "enter")
        assert isinstance(app.screen, DeficientForm)
        assert "needs a note" in shown(form.query_one(".form-error", Static))
        await type_text(pilot, "taps feed from the pond")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        what = shown(app.screen.query(".form-context").first(Static))
        assert "mark C(1)(b) deficient: “taps feed from the pond”" in what
        assert "Only drinking water is piped to easily reached taps" in what
        await pilot.press("n")  # cancelled: nothing is sent
        await until(pilot, lambda: isinstance(app.screen, ChecklistScreen))
        assert app.actions == ()
        await pilot.press("o")  # ok needs no note, only the confirmation
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "mark C(1)(b) ok" in shown(app.screen.query(".form-context").first(Static))
        await pilot.press("escape")


class InspectorTopics:
    """A real subscriber (QoS 1) to every inspector's messages, as received."""

    def __init__(self, broker: MosquittoBroker) -> None:
        self.received: list[tuple[str, dict[str, Any], int]] = []
        self._lock = threading.Lock()
        subscribed = threading.Event()
        self.client = make_client(parse_broker_url(broker.url))
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        self.client.subscribe(TOPICS.inspector("+", "+"), qos=1)
        if not subscribed.wait(10):
            raise TimeoutError("could not subscribe")

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        with self._lock:
            self.received.append((msg.topic, json.loads(msg.payload), msg.qos))

    def got(self) -> list[tuple[str, dict[str, Any], int]]:
        with self._lock:
            return list(self.received)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def watcher(broker: MosquittoBroker) -> Iterator[Watcher]:
    w = Watcher(broker)
    yield w
    w.close()


@pytest.mark.integration
async def test_marking_deficient_from_the_dashboard_raises_the_alert_on_screen(
    tmp_path: Path, broker: MosquittoBroker, watcher: Watcher
) -> None:
    permit = load_permit(write_permit(tmp_path))
    sent = InspectorTopics(broker)
    try:
        with running_aggregator(
            permit, tmp_path / "evidence.sqlite", broker, watcher, clock="wall"
        ):
            app = make_inspector_app(EVENT, parse_broker_url(broker.url), "insp-1", blink=False)
            async with app.run_test(size=(120, 40)) as pilot:
                await until(
                    pilot, lambda: app.status is not None and bool(app.status.checklist_items)
                )
                await pilot.press("i", *["down"] * 7)  # C(1)(a) … C(1)(h)
                screen = app.screen
                assert screen.query_one(ChecklistList).selected_item == "C(1)(h)"
                await pilot.press("d")
                await until(pilot, lambda: isinstance(app.screen, DeficientForm))
                await type_text(pilot, "common cup at water station 2")
                await pilot.press("enter")
                await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
                await pilot.press("y")
                await until(
                    pilot, lambda: bool(app.actions) and app.actions[-1].state == "recorded"
                )
                assert "✓ recorded" in shown(screen.query_one(ActionLog))
                entry = screen.query_one(ChecklistList).entry("C(1)(h)")
                assert entry is not None
                assert entry.state is not None
                assert entry.state.plain == "✗ DEFICIENT"
                assert entry.who is not None
                assert entry.who.plain.startswith("insp-1 ")
                await until(
                    pilot,
                    lambda: any(a.rule == "facility-deficient" for a in app.alerts.values()),
                )
                (alert,) = [a for a in app.alerts.values() if a.rule == "facility-deficient"]
                assert alert.cite == "permit:C(1)(h), permit:G"
                await until(
                    pilot,
                    lambda: alert.id in shown(screen.query_one("#checklist-detail", Static)),
                )

                await pilot.press("escape")
                assert isinstance(app.screen, MainScreen)
                alerts = app.screen.query_one(AlertList)
                await until(pilot, lambda: alerts.item(alert.id) is not None)
                listed_alert = alerts.item(alert.id)
                assert listed_alert is not None
                text = listed_alert.text.plain
                assert "● BREACH" in text
                assert "facility-deficient [C(1)(h)]  permit:C(1)(h), permit:G" in text
                assert "No common drinking cup provided or in use — found: “common cup" in text

                # Back on the checklist, still on C(1)(h): o, y puts it right.
                await pilot.press("i")
                assert app.screen.query_one(ChecklistList).selected_item == "C(1)(h)"
                await pilot.press("o")
                await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
                await pilot.press("y")
                await until(
                    pilot,
                    lambda: (a := app.alerts.get(alert.id)) is not None and a.ended_at is not None,
                )
                await until(pilot, lambda: app.actions[-1].state == "recorded")
                entry = app.screen.query_one(ChecklistList).entry("C(1)(h)")
                assert entry is not None
                assert entry.state is not None
                assert entry.state.plain == "✓ ok"
    finally:
        sent.close()
    payloads = [(t, p, q) for t, p, q in sent.got() if t.endswith("/inspection")]
    assert [(t, q) for t, _, q in payloads] == [(TOPICS.inspector("insp-1", "inspection"), 1)] * 2
    deficient, ok = (p for _, p, _ in payloads)
    assert set(deficient) == {"ts", "item", "result", "note"}
    assert (deficient["item"], deficient["result"], deficient["note"]) == (
        "C(1)(h)",
        "deficient",
        "common cup at water station 2",
    )
    assert (set(ok), ok["item"], ok["result"]) == ({"ts", "item", "result"}, "C(1)(h)", "ok")


async def test_reopened_after_a_resize_the_chosen_item_is_in_view(tmp_path: Path) -> None:
    app = standalone(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("i", "up")  # round to F, the last item: all of it fits here
        checklist = app.screen.query_one(ChecklistList)
        assert checklist.selected_item == "F"
        assert checklist.scroll_y == 0
        await pilot.press("escape")
        await pilot.resize_terminal(80, 24)  # now it does not, and F is at the bottom
        await pilot.press("i")
        await pilot.pause()
        assert app.screen.query_one(ChecklistList) is checklist  # the same screen, kept
        assert checklist.selected_item == "F"
        index = checklist.highlighted
        assert index is not None
        top = checklist.scroll_y
        assert top <= index < top + checklist.scrollable_content_region.height


async def test_the_glance_panels_keep_their_height_when_the_first_status_comes_late(
    tmp_path: Path,
) -> None:
    """Found walking the round: with a live broker the first status arrives after the
    first layout, and the attendance panel stayed three lines tall until a resize."""
    permit = load_permit(write_permit(tmp_path))
    status, _ = engine_status(permit, [])
    app = make_inspector_app(EVENT, None, "insp-1", clock=fixed_clock(T0), blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        app.show_status(status)
        await pilot.pause()
        for panel in ("#attendance-panel", "#compliance-panel"):
            assert app.screen.query_one(panel).outer_size.height == 8
