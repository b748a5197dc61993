"""Text from the wire never breaks a dashboard: markup, escapes and 10 KB strings in every field.

Every string a dashboard shows arrives over MQTT from someone else: a note, a comment, an
id, the Clerk's resolution, a sensor's name. Each text field of each inbound record (the
status, the alerts, a gate's command, the aggregator's availability) is filled with
hostile text (arbitrary unicode, Rich and Textual markup, ANSI escapes, 10 KB strings),
sent through the feed's own decoding (:func:`dashboards.common.feed.classify`) and
posted to both dashboards as the feed posts it; then every screen that shows such text
is opened and drawn (main, each alert in full, the checklist and its items, the forms
that quote the wire, help, the gate view). Nothing may raise. Few examples, derandomized,
so the test stays within a minute and repeats.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from textual.visual import visualize
from textual.widgets import Static

from dashboards.common.clock import fixed_clock
from dashboards.common.feed import BadPayload, FeedEvent, classify
from dashboards.common.format import clean
from dashboards.common.messages import to_message
from dashboards.gate.app import make_gate_app
from dashboards.inspector.app import InspectorApp, make_inspector_app
from dashboards.inspector.panels import alert_detail
from dashboards.inspector.screens.forms import Form
from kent_ops.core.wire import Topics

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

EVENT = "kent-summer-fest-2027"
TOPICS = Topics(EVENT)
NOW = datetime(2027, 7, 4, 18, 3, 7, tzinfo=UTC)
TS = (NOW - timedelta(seconds=2)).isoformat()
SIZE = (100, 30)

MARKUP = [
    "[/x]",
    "[/]",
    "[b]bold",
    "[red",
    "]",
    "\\[b]",
    "[link=http://example.com]x[/link]",
    "[@click=app.quit]quit[/]",
    "[$accent]x[/]",
    "$text",
    ":warning:",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "\x1b[2J\x1b[H",
    "\x07\x08\x00\x7f",
    "\u202eevil\u202c",
    "line\nbreak\r\ttab",
    "\ud800",
    "日本語🎉\u200d👨",
]
LONG = ["x" * 10_240, "[/x]" * 2_560, "\x1b[31m" * 2_048, "日" * 5_120]

hostile = st.one_of(
    st.text(max_size=30),
    st.sampled_from(MARKUP),
    st.sampled_from(LONG),
    st.lists(st.sampled_from(MARKUP), min_size=2, max_size=4).map("".join),
)
"""One hostile string: arbitrary unicode, markup, escapes, or 10 KB of it."""


def _cycle(texts: list[str]) -> Callable[[], str]:
    it: Iterator[str] = itertools.cycle(texts)
    return lambda: next(it)


def _gate(t: Callable[[], str], online: bool = True) -> dict[str, Any]:
    return {"in": 12, "out": 2, "net": 10, "per_minute": 3.5, "last_seen": TS, "online": online,
            "manual": False, "property": t()}  # fmt: skip


def status_json(t: Callable[[], str]) -> dict[str, Any]:
    """A status whose every text field (and every key that is an id) comes from ``t``."""
    return {
        "ts": TS, "event": t(), "event_name": t(), "timezone": t(),
        "permit": {"number": t(), "status": t(), "since": TS, "resolution": t()},
        "assembly": {"on": True, "window": 0},
        "properties": {
            t(): {"attendance": 9, "owner": t(), "address": t(), "tenant": t()},
            t() + "2": {"attendance": 3, "owner": t(), "address": t(), "tenant": None},
        },
        "window": {"inside": False, "start": TS, "end": TS},
        "attendance": {"current": 3120, "entries": 4000, "exits": 880, "peak": 3200,
                       "max_at_one_time": 4000, "max_collective": 9000, "uncertain": True},
        "admit": False, "hold_at": 4000, "resume_below": 3960,
        "sensors": {t(): {"kind": t(), "online": False, "last_seen": TS}},
        "gates": {t(): _gate(t, online=False), "north": _gate(t), "north-manual": _gate(t)},
        "lots": {t(): {"capacity": 10, "occupied": 9, "free": 1, "share": 0.9, "online": False}},
        "active_alerts": [t()],
        "pending": [{"rule": t(), "subject": t(), "since": TS}],
        "notes": [{"by": t(), "at": TS, "text": t(), "alert": "A-1"},
                  {"by": t(), "at": TS, "text": t(), "alert": t()}],
        "adjustments": [{"by": t(), "at": TS, "attendance": 3000, "offset": -120,
                         "reason": t()}],
        "checklist": {"C(1)(a)": {"result": "deficient", "by": t(), "at": TS, "note": t()},
                      t(): {"result": t(), "by": t(), "at": TS, "note": t()}},
        "checklist_items": [
            {"item": "C(1)(a)", "paragraph": t(), "text": t(), "cite": t()},
            {"item": t(), "paragraph": t(), "text": t(), "cite": t()},
            {"item": t(), "paragraph": "C(1) Drinking water", "text": t(), "cite": t()},
        ],
        "evidence": {"ok": False, "error": t(), "since": TS, "held": 3},
    }  # fmt: skip


def alert_json(t: Callable[[], str], **fixed: Any) -> dict[str, Any]:
    """An alert whose every text field comes from ``t`` (``fixed`` overrides some)."""
    alert = {
        "id": t(), "rule": t(), "subject": t(), "cite": t(), "severity": "breach",
        "state": "active", "since": TS, "raised_at": TS,
        "observed": {t(): t(), "share": 0.97, "note": t(), t() + "n": 5},
        "required": {"share_below": 0.95, t(): t()},
        "worst": {"observed": {t(): t()}, "required": {}},
        "message": t(),
        "acknowledged": [{"by": t(), "at": TS, "comment": t()}],
        "notes": [{"by": t(), "at": TS, "text": t(), "alert": t()}],
        "evidence": {"record": 7, "hash": t()},
    }  # fmt: skip
    alert.update(fixed)
    return alert


def topic_id(text: str) -> str:
    """A hostile id as it can appear in a topic level (no separators, never empty)."""
    return "".join(ch for ch in text if ch not in "/+#\x00")[:200] or "empty"


def inbound(texts: list[str]) -> list[FeedEvent]:
    """Every inbound message with hostile text, decoded at the feed's edge."""
    t = _cycle(texts)
    messages: list[tuple[str, bytes]] = [
        (TOPICS.aggregator_availability, t().encode("utf-8", "surrogatepass")),
        (TOPICS.aggregator_availability, b"online"),
        (TOPICS.status, json.dumps(status_json(t)).encode()),
        (TOPICS.alert("A-1"), json.dumps(alert_json(t)).encode()),
        (TOPICS.alert("A-2"), json.dumps(alert_json(t, id="A-1")).encode()),
        (
            TOPICS.alert("A-3"),
            json.dumps(alert_json(t, rule="facility-deficient", subject="C(1)(a)")).encode(),
        ),
        (TOPICS.alert(topic_id(t())), json.dumps(alert_json(t, state="cleared")).encode()),
        (
            TOPICS.gate_command("north"),
            json.dumps(
                {"admit": False, "attendance": 4010, "hold_at": 4000, "reason": t()}
            ).encode(),
        ),
    ]
    events = []
    for topic, payload in messages:
        try:
            event = classify(TOPICS, topic, payload, NOW)
        except BadPayload:
            continue  # the feed logs and counts it: never reaches a screen
        if event is not None:
            events.append(event)
    return events


async def _inspector(events: list[FeedEvent]) -> None:
    app = make_inspector_app(EVENT, None, "insp-2", clerk="tc", clock=fixed_clock(NOW), blink=False)
    async with app.run_test(size=SIZE) as pilot:
        for event in events:
            app.post_message(to_message(event))
        await pilot.pause()  # drawn: a markup string would be parsed now, and raise
        # Every alert's detail drawn as its screen draws it; the screen itself opened for
        # the alert filed under a hostile topic id (its title quotes the id).
        console = Console(width=SIZE[0], file=io.StringIO())
        for alert in app.alerts.values():
            console.print(alert_detail(alert, app.status))
        key = _hostile_key(app)
        app.open_alert(key)
        await pilot.pause()
        title = app.screen.query_one("#detail-title", Static)
        assert clean(key, limit=60) in visualize(title, title.content).plain  # as typed
        await pilot.press("escape")
        await _forms(app, pilot)
        await pilot.press("i", "down", "down", "down")
        await pilot.pause()
        await pilot.press("escape", "question_mark")
        await pilot.pause()
        app.export_screenshot()  # and the whole of the last screen, once more
    assert app.return_code in (None, 0)


def _hostile_key(app: InspectorApp) -> str:
    """The alert filed under a hostile topic id (else any)."""
    plain = {"A-1", "A-2", "A-3"}
    return next((key for key in app.alerts if key not in plain), next(iter(app.alerts), "A-1"))


async def _forms(app: InspectorApp, pilot: Any) -> None:
    """The forms that quote the wire: an alert's message, the permit's standing."""
    for start in (lambda: app.start_ack(next(iter(app.alerts), "A-1")), app.start_permit_change):
        start()
        await pilot.pause()
        assert isinstance(app.screen, Form)
        await pilot.press("escape")
        await pilot.pause()


async def _gate_view(events: list[FeedEvent], state_dir: Path) -> None:
    app = make_gate_app("north", EVENT, None, state_dir=state_dir, clock=fixed_clock(NOW))
    async with app.run_test(size=SIZE) as pilot:
        for event in events:
            app.post_message(to_message(event))
        await pilot.pause()
        await pilot.press("plus", "question_mark")
        await pilot.pause()
        app.export_screenshot()
    assert app.return_code in (None, 0)


FUZZ = settings(
    max_examples=2,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


EVERY_FIELD = [[MARKUP[0]], [MARKUP[7]], [LONG[1], MARKUP[11], "日本語🎉"]]
"""Fixed cases on top of the drawn ones: one string in every field (``[/x]``, a Textual
click action), and 10 KB of markup beside an escape."""


@FUZZ
@example(texts=EVERY_FIELD[0])
@example(texts=EVERY_FIELD[1])
@example(texts=EVERY_FIELD[2])
@given(texts=st.lists(hostile, min_size=7, max_size=7))
def test_the_inspector_dashboard_shows_any_text_as_plain_text(texts: list[str]) -> None:
    asyncio.run(_inspector(inbound(texts)))


@FUZZ
@example(texts=EVERY_FIELD[0])
@example(texts=EVERY_FIELD[2])
@given(texts=st.lists(hostile, min_size=5, max_size=5))
def test_the_gate_view_shows_any_text_as_plain_text(
    texts: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    asyncio.run(_gate_view(inbound(texts), tmp_path_factory.mktemp("tally")))


def test_every_hostile_sample_reaches_the_screens() -> None:
    """The fixed samples decode (they are not refused at the edge), so the screens see them."""
    for sample in [*MARKUP, *LONG]:
        if sample == "\ud800":
            continue  # a lone surrogate is refused at the edge: not valid UTF-8 text
        events = inbound([sample])
        kinds = {type(e).__name__ for e in events}
        assert {"StatusUpdate", "AlertUpdate", "CommandUpdate"} <= kinds, sample
