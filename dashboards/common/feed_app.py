"""The part of both dashboards that is about being connected, written once.

An app built on :class:`FeedApp` starts the MQTT feed on mount and stops it on
unmount, turns feed records into messages, keeps the connection state, ticks its
(injectable) clock once a second and publishes ``problem`` (the banner's sentence)
and the ``-stale`` class that greys the figures. Built with ``broker=None`` it runs
standalone on injected data: the snapshot tests and the benchmark use that.

An app may draw statuses at most every ``STATUS_EVERY_S`` seconds: the aggregator
publishes up to ten a second (docs/protocol.md), more than a person reads, and each
drawn status costs CPU that a command post serving dozens of dashboards needs. A
status arriving sooner waits (a newer one replaces it) and is drawn when the time
is up, so the newest figures are always drawn, late by at most that much.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import ClassVar

from textual import on
from textual.app import App
from textual.drivers.web_driver import WebDriver
from textual.reactive import reactive
from textual.timer import Timer

from dashboards.common.clock import Clock, FollowingClock, following
from dashboards.common.connection import (
    NO_AGGREGATOR_AFTER_S,
    STALE_AFTER_S,
    ConnectionState,
    connection_problem,
    unheard,
)
from dashboards.common.feed import FeedEvent, MqttFeed
from dashboards.common.format import event_zone
from dashboards.common.messages import (
    AvailabilityChanged,
    LinkChanged,
    StatusReceived,
    to_message,
)
from dashboards.common.shared_css import share_parsed_css
from kent_ops.broker.client import BrokerAddress
from kent_ops.core import wire
from kent_ops.core.wire import Topics

__all__ = ["FeedApp"]


class FeedApp(App[int]):
    """A Textual app whose figures come from the aggregator's retained topics."""

    STATUS_EVERY_S: ClassVar[float] = 0.0
    """The least time between two statuses drawn from the feed (0: each as it comes)."""

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The last status snapshot, whole (docs/protocol.md); None until the first arrives."""

    now: reactive[datetime | None] = reactive(None, repaint=False)
    """The local clock, ticked every second: the event's time and the status age."""

    problem: reactive[str | None] = reactive(None, repaint=False)
    """Why the figures may be out of date, in one sentence; None while they are current."""

    def __init__(
        self,
        *,
        event_id: str,
        broker: BrokerAddress | None,
        subscriptions: Sequence[str],
        ca_file: str | None = None,
        clock: Clock | None = None,
        client_name: str = "dashboard",
        will_topic: str | None = None,
        stale_after_s: float = STALE_AFTER_S,
        no_aggregator_after_s: float = NO_AGGREGATOR_AFTER_S,
    ) -> None:
        super().__init__()
        share_parsed_css(self)
        if issubclass(self.driver_class, WebDriver):
            # In a browser the app starts without focus (the web driver says so as it
            # starts): saying so first spares restyling every widget for the blur.
            self.set_reactive(App.app_focus, False)
        self.event_id = event_id
        self.topics = Topics(event_id)
        self.broker = broker
        self.clock: FollowingClock = following(clock)
        """"Now": the wall clock, or the aggregator's while it runs on its sensors' clock
        (the demo); an injected clock (tests) is kept as it is."""
        self.stale_after_s = stale_after_s
        self.no_aggregator_after_s = no_aggregator_after_s
        self.connection = ConnectionState(
            link="standalone" if broker is None else "connecting",
            event_id=event_id,
            broker_url=broker.url if broker is not None else "",
        )
        self._waiting: wire.Status | None = None
        """The newest status from the feed not drawn yet (it came too soon after one)."""
        self._next_draw = 0.0
        """When, by the monotonic clock, the next status may be drawn."""
        self._draw_timer: Timer | None = None
        self.feed: MqttFeed | None = None
        if broker is not None:
            # Connecting: the figures are grey from the first frame (as the first tick
            # would make them), set before any widget is styled rather than after.
            self.add_class("-stale", update=False)
            self.feed = MqttFeed(
                broker,
                self.topics,
                subscriptions,
                self._deliver,
                ca_file=ca_file,
                client_name=client_name,
                will_topic=will_topic,
            )

    # lifecycle ----------------------------------------------------------------------

    def on_mount(self) -> None:
        if self.feed is not None:
            self.feed.start()
        self.set_interval(1.0, self.tick, name="connection-clock")
        self.tick()

    def on_unmount(self) -> None:
        if self.feed is not None:
            self.feed.stop()

    def _deliver(self, event: FeedEvent) -> None:
        """Called in paho's thread: hand the record to the app's queue (thread-safe)."""
        self.post_message(to_message(event))

    # connection ---------------------------------------------------------------------

    def tick(self) -> None:
        """Advance the clock and re-judge whether the figures are current."""
        now = self.clock()
        self.now = now
        state = self.connection
        zone = event_zone(self.status)
        self.problem = connection_problem(
            state,
            now,
            zone,
            stale_after_s=self.stale_after_s,
            monotonic=time.monotonic(),
            no_aggregator_after_s=self.no_aggregator_after_s,
        )

    @property
    def no_aggregator(self) -> bool:
        """Nothing of this event's aggregator on the broker: what is sent reaches no one."""
        return unheard(self.connection, time.monotonic(), after_s=self.no_aggregator_after_s)

    def watch_problem(self, problem: str | None) -> None:
        self.set_class(problem is not None, "-stale")

    def watch_app_focus(self, focus: bool) -> None:
        """A page that takes the focus first focuses what a terminal would have.

        A screen composed while the page had no focus focused nothing (Textual focuses
        only in a focused app): its ``focus_first()`` says what, or else its
        ``AUTO_FOCUS``, as Textual would have.
        """
        screen = self.screen
        if not focus or screen.focused is not None:
            return
        first = getattr(screen, "focus_first", None)
        if callable(first):
            first()
            return
        selector = screen.AUTO_FOCUS if screen.AUTO_FOCUS is not None else self.AUTO_FOCUS
        for widget in screen.query(selector) if selector else ():
            if widget.focusable:
                screen.set_focus(widget)
                return

    @on(LinkChanged)
    def _link_changed(self, message: LinkChanged) -> None:
        state = self.connection
        if message.connected:
            if state.link != "up":
                state.up_at = time.monotonic()
                # Judge the aggregator's silence on time, not at the next second's tick.
                self.set_timer(self.no_aggregator_after_s, self.tick, name="aggregator-silence")
            state.link, state.reason, state.down_since = "up", None, None
            state.refused = state.unknown_host = False
        else:
            if state.link != "down":
                state.down_since = self.clock()
            state.link, state.reason = "down", message.reason
            state.refused, state.unknown_host = message.refused, message.unknown_host
        self.tick()

    @on(AvailabilityChanged)
    def _availability_changed(self, message: AvailabilityChanged) -> None:
        self.connection.aggregator_online = message.online
        self.tick()

    @on(StatusReceived)
    def _status_received(self, message: StatusReceived) -> None:
        self._waiting = message.status
        wait = self._next_draw - time.monotonic()
        if wait <= 0:
            self._draw_waiting()
        elif self._draw_timer is None:
            self._draw_timer = self.set_timer(wait, self._draw_waiting, name="status-draw")

    def _draw_waiting(self) -> None:
        self._draw_timer = None
        status, self._waiting = self._waiting, None
        if status is not None:
            self._next_draw = time.monotonic() + self.STATUS_EVERY_S
            self.show_status(status)

    def show_status(self, status: wire.Status) -> None:
        """Take a status snapshot as the current one (from the feed, or injected)."""
        self.clock.saw(status)
        self.connection.status_ts = status.ts
        self.connection.received_at = self.clock()
        self.connection.received_mono = time.monotonic()
        self.connection.simulated = status.clock == "sensor"
        self.status = status
        self.tick()
