"""The inspector dashboard: a live view of one event (``kent-ops dashboard``).

A pure view of what the aggregator publishes (docs/protocol.md): the retained status,
every alert, the gate commands and the aggregator's availability, each decoded once by
the feed into the wire's typed records. It keeps no counts and no rules; its only
state is what it has seen (the last hour's attendance line, which alerts already rang
the bell) and what this inspector sent. Acknowledgements, notes, adjustments and
checklist markings go out on this inspector's topics at QoS 1, each after a
confirmation, and are shown as "recorded" once the aggregator reflects them; on the
Town Clerk's dashboard (``--clerk``) so does the revocation or reinstatement of the
permit (:mod:`dashboards.inspector.acting`).

The screens ask for those actions with messages (:mod:`dashboards.inspector.messages`);
they never import this module. One factory, :func:`make_inspector_app`, builds the app
for the command line (:mod:`kent_ops.commands.dashboard`) and for the tests; with
``broker=None`` and injected statuses it runs without a broker (the snapshot tests and
the benchmark).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from textual import on
from textual.app import SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen

from dashboards.common.clock import Clock
from dashboards.common.connection import NO_AGGREGATOR_AFTER_S, STALE_AFTER_S
from dashboards.common.messages import AlertReceived, CommandReceived
from dashboards.inspector.acting import ActingApp
from dashboards.inspector.messages import (
    AckRequested,
    AdjustRequested,
    AlertChosen,
    ChecklistRequested,
    InspectionRequested,
    NoteRequested,
    PermitChangeRequested,
)
from dashboards.inspector.panels import is_flashing
from dashboards.inspector.screens.alert_detail import AlertDetailScreen
from dashboards.inspector.screens.checklist import ChecklistScreen
from dashboards.inspector.screens.help import HelpScreen
from dashboards.inspector.screens.main import MainScreen
from dashboards.inspector.trend import AttendanceTrend
from kent_ops.broker.acl import check_person_id
from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.witness import WitnessKeeper
from kent_ops.core import wire
from kent_ops.core.errors import UsageError

__all__ = ["InspectorApp", "make_inspector_app"]

_ID = re.compile(r"^[A-Za-z0-9_.-]+$")
CHECKLIST_SCREEN = "checklist"
"""The checklist screen is installed once, so reopening it keeps the inspector's place."""
_EVENT_ID = re.compile(r"^[a-z0-9-]+$")


class InspectorApp(ActingApp):
    """The inspector's live view of one event."""

    CSS_PATH = "inspector.tcss"
    TITLE = "kent-ops inspector"
    STATUS_EVERY_S = 0.25
    """Four statuses a second at most (FeedApp): more than anyone reads on a phone."""
    FIRST_STATUS_WAIT_S = 0.5
    """How long a connecting dashboard waits for the retained status before it shows
    its screen anyway (greyed, the banner saying why)."""
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("question_mark,f1", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    trend: reactive[tuple[tuple[float, int], ...]] = reactive(tuple, repaint=False)
    """The last hour of attendance, from the statuses received (view state only)."""
    flash_on: reactive[bool] = reactive(False, repaint=False)
    """The phase of the flash of unacknowledged breaches (from the clock, so it repeats)."""

    def __init__(
        self,
        event_id: str,
        broker: BrokerAddress | None,
        inspector: str,
        *,
        clerk: str | None = None,
        notice: Sequence[str] = (),
        ca_file: str | None = None,
        clock: Clock | None = None,
        statuses: Iterable[wire.Status] = (),
        alerts: Iterable[wire.Alert] = (),
        history: Iterable[tuple[datetime, int]] = (),
        blink: bool = True,
        stale_after_s: float = STALE_AFTER_S,
        no_aggregator_after_s: float = NO_AGGREGATOR_AFTER_S,
    ) -> None:
        topics = wire.Topics(event_id)
        super().__init__(
            event_id=event_id,
            broker=broker,
            subscriptions=[
                topics.status,
                topics.alerts_wildcard,
                topics.gate_commands_wildcard,
                topics.aggregator_availability,
            ],
            ca_file=ca_file,
            clock=clock,
            client_name=f"clerk-{clerk}" if clerk else f"inspector-{inspector}",
            stale_after_s=stale_after_s,
            no_aggregator_after_s=no_aggregator_after_s,
        )
        self.inspector = inspector
        self.clerk = clerk
        self.notice = tuple(notice)
        """Lines shown at the foot of the main screen and in help (the demo's broker and
        the commands that attach to it)."""
        self.blink = blink
        self.commands: dict[str, wire.GateCommand] = {}
        """The latest order for each gate (view state)."""
        self.rung: set[str] = set()
        """Breach alerts that have rung the bell: each rings once."""
        self.bells = 0
        """How many times the bell rang (a headless terminal has no bell to hear)."""
        self._trend = AttendanceTrend()
        for moment, attendance in history:
            self._trend.add(moment, attendance)
        self.set_reactive(InspectorApp.trend, self._trend.points())
        self._trend_shown = self._trend.newest
        self._initial_statuses = list(statuses)
        self._initial_alerts = list(alerts)
        self._flash_phase: bool | None = None
        self._held_notices: list[tuple[str, str, SeverityLevel, float | None, bool]] = []
        """Toasts that came while a dialog or an alert's detail was open (see notify)."""
        self._main_screen: MainScreen | None = None
        """The main screen until it is shown (then on the screen stack)."""
        self._setup_acting()

    # lifecycle ----------------------------------------------------------------------

    def on_mount(self) -> None:
        self._main_screen = MainScreen(
            self.event_id, self.inspector, clerk=self.clerk, notice=self.notice
        ).data_bind(
            InspectorApp.status,
            InspectorApp.alerts,
            InspectorApp.trend,
            InspectorApp.flash_on,
            InspectorApp.now,
            InspectorApp.problem,
            InspectorApp.actions,
        )
        if self.feed is None:
            self.show_main()
        else:
            # The broker hands over its retained status a moment after the connection:
            # the screen is laid out and drawn once, with the figures, rather than
            # greyed and empty first and whole again a moment later.
            self.set_timer(self.FIRST_STATUS_WAIT_S, self.show_main, name="first-status")
        for status in self._initial_statuses:
            self.show_status(status)
        for alert in self._initial_alerts:
            self.show_alert(alert.id, alert)
        self._flash()  # the first phase now, so a screen drawn at once repeats exactly
        self.set_interval(0.5, self._flash, name="alert-flash")

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """As Textual's toast, but held while a dialog or an alert's detail is open: there
        it would cover an input box or the evidence hash. It shows on the way back."""
        if self._holds_notices():
            self._held_notices.append((message, title, severity, timeout, markup))
            return
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def _holds_notices(self) -> bool:
        return bool(self.screen_stack) and isinstance(self.screen, ModalScreen | AlertDetailScreen)

    def _release_notices(self) -> None:
        """Show the toasts held for a dialog once the screen under it is back."""
        if not self._held_notices or self._holds_notices():
            return
        held, self._held_notices = self._held_notices, []
        for message, title, severity, timeout, markup in held:
            super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def announce(self, line: str) -> None:
        """Put ``line`` first in the notice at the foot of the main screen and in help:
        the demo says so when its simulated day is over, so the end is not an outage."""
        self.notice = (line, *self.notice)
        if self._main_screen is not None:  # not shown yet: it composes with the new lines
            self._main_screen.notice = self.notice
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                screen.show_notice(self.notice)

    # what arrives -------------------------------------------------------------------

    def show_main(self) -> None:
        """Show the main screen, once: at the first status, or when the wait is over."""
        main, self._main_screen = self._main_screen, None
        if main is not None:
            self.push_screen(main)

    def watch_status(self, status: wire.Status | None) -> None:
        if status is not None:
            self.show_main()
        if status is not None and self._trend.add_status(status):
            # Once a second, as a new point begins: a line of an hour in a few dozen
            # cells cannot show a figure raised within the second, and drawing it
            # again at every status (ten a second) was most of the attendance panel's
            # cost. The raised figure is drawn with the next second's point.
            newest = self._trend.newest
            if newest != self._trend_shown:
                self._trend_shown = newest
                self.trend = self._trend.points()
        self._check_recorded()

    @on(AlertReceived)
    def _alert_received(self, message: AlertReceived) -> None:
        self.show_alert(message.alert_id, message.alert)

    @on(CommandReceived)
    def _command_received(self, message: CommandReceived) -> None:
        if message.command is None:
            self.commands.pop(message.gate, None)
        else:
            self.commands[message.gate] = message.command

    def show_alert(self, alert_id: str, alert: wire.Alert | None) -> None:
        """Take one alert's latest form; ring the bell once for a new breach."""
        alerts = dict(self.alerts)
        if alert is None:
            alerts.pop(alert_id, None)
        else:
            alerts[alert_id] = alert
            if is_flashing(alert) and alert_id not in self.rung:
                self.rung.add(alert_id)
                self.bells += 1
                self.bell()
        self.alerts = alerts
        self._check_recorded()

    def _flash(self) -> None:
        """Follow the clock's half-second phase; a clock that stands still never flips it.

        The flash keeps real time (``clock.base``), also beside a demo whose screens show
        the simulation's time, which moves only when a status comes."""
        self._release_notices()  # twice a second: soon after a dialog closes
        phase = int(self.clock.base().timestamp() * 2) % 2 == 0
        if phase != self._flash_phase:
            self._flash_phase = phase
            self.flash_on = phase

    def tick(self) -> None:
        super().tick()
        self._check_delivered()

    # what the screens ask for ---------------------------------------------------------

    @on(AckRequested)
    def _ack_requested(self, message: AckRequested) -> None:
        self.start_ack(message.alert_id)

    @on(NoteRequested)
    def _note_requested(self, message: NoteRequested) -> None:
        self.start_note(message.alert_id)

    @on(AdjustRequested)
    def _adjust_requested(self) -> None:
        self.start_adjust()

    @on(InspectionRequested)
    def _inspection_requested(self, message: InspectionRequested) -> None:
        self.start_inspection(message.item, message.result)

    @on(PermitChangeRequested)
    def _permit_change_requested(self) -> None:
        self.start_permit_change()

    @on(AlertChosen)
    def _alert_chosen(self, message: AlertChosen) -> None:
        self.open_alert(message.alert_id)

    @on(ChecklistRequested)
    def _checklist_requested(self) -> None:
        self.open_checklist()

    # navigation ---------------------------------------------------------------------

    def open_alert(self, alert_id: str) -> None:
        """Show one alert in full."""
        self.show_main()
        self.push_screen(AlertDetailScreen(alert_id))

    def open_checklist(self) -> None:
        """Show the facilities checklist, where the inspector left it (one screen, kept)."""
        if isinstance(self.screen, ChecklistScreen):
            return
        self.show_main()
        if not self.is_screen_installed(CHECKLIST_SCREEN):
            self.install_screen(ChecklistScreen(self.inspector), CHECKLIST_SCREEN)
        self.push_screen(CHECKLIST_SCREEN)

    def action_help(self) -> None:
        self.show_main()
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(clerk=self.clerk, notice=self.notice))

    def _main(self) -> MainScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        return None

    def get_system_commands(self, screen: Screen[Any]) -> Iterator[SystemCommand]:
        yield from super().get_system_commands(screen)
        main = self._main()
        if main is not None:
            yield SystemCommand(
                "Acknowledge alert",
                "Acknowledge the chosen alert, with a comment",
                main.action_acknowledge,
            )
            yield SystemCommand("Alert details", "The chosen alert in full", main.action_details)
        yield SystemCommand(
            "Facilities checklist",
            "Mark permit:C, D, F items ok, deficient (with a note) or n/a",
            self.open_checklist,
        )
        yield SystemCommand("Add a note", "A note for the record", lambda: self.start_note(None))
        yield SystemCommand(
            "Adjust attendance", "Set attendance to a counted figure", self.start_adjust
        )
        if self.clerk is not None:
            yield SystemCommand(
                "Revoke or reinstate the permit",
                "The Town Clerk's change of the permit's status, by resolution (permit:G)",
                self.start_permit_change,
            )
        yield SystemCommand("Help", "Keys and rules", self.action_help)


def make_inspector_app(
    event_id: str,
    broker: BrokerAddress | None,
    inspector: str = "inspector",
    *,
    clerk: str | None = None,
    notice: Sequence[str] = (),
    ca_file: str | None = None,
    clock: Clock | None = None,
    statuses: Iterable[wire.Status] = (),
    alerts: Iterable[wire.Alert] = (),
    history: Iterable[tuple[datetime, int]] = (),
    blink: bool = True,
    stale_after_s: float = STALE_AFTER_S,
    no_aggregator_after_s: float = NO_AGGREGATOR_AFTER_S,
    witness: WitnessKeeper | None = None,
) -> InspectorApp:
    """Build the inspector dashboard: the command line and every test come through here.

    Args:
        event_id: the event, as in the permit and the topics (``[a-z0-9-]+``).
        broker: where the aggregator publishes; None runs standalone on ``statuses``.
        inspector: the id that signs this inspector's notes and acknowledgements.
        clerk: the Town Clerk's id, on the Clerk's dashboard: adds the key that revokes
            or reinstates the permit (published on ``clerk/{clerk}/permit``).
        notice: lines to show at the foot of the main screen and in help (the demo's
            broker and how to attach to it).
        ca_file: CA certificate for an ``mqtts://`` broker.
        clock: "now" (status age, the event's local time); the wall clock by default.
        statuses: status snapshots to show at start, oldest first (tests, benchmark).
        alerts: alerts to show at start (tests).
        history: (time, attendance) seen before this dashboard started, for the trend
            line (the benchmark starts with a full hour).
        blink: whether text cursors blink (off for repeatable snapshots).
        stale_after_s: how old a status may be, by ``clock``, before the banner says
            so (15 s, docs/protocol.md; a demo whose clock runs 60 times fast may scale it).
        no_aggregator_after_s: real seconds with the broker up and nothing from the
            event's aggregator before the banner says there is none (a mistyped event id).
        witness: keeps every checkpoint of the evidence log received (a witness file).
    """
    if not _EVENT_ID.match(event_id):
        raise UsageError(f"event id {event_id!r} must be lower-case letters, digits and dashes")
    if not _ID.match(inspector):
        raise UsageError(f"inspector id {inspector!r} must be letters, digits, '.', '_' or '-'")
    problem = check_person_id("clerk", clerk) if clerk is not None else None
    if problem:
        raise UsageError(problem)
    app = InspectorApp(
        event_id,
        broker,
        inspector,
        clerk=clerk,
        notice=notice,
        ca_file=ca_file,
        clock=clock,
        statuses=statuses,
        alerts=alerts,
        history=history,
        blink=blink,
        stale_after_s=stale_after_s,
        no_aggregator_after_s=no_aggregator_after_s,
    )
    if witness is not None and app.feed is not None:
        app.feed.keep_checkpoints(witness)
    return app
