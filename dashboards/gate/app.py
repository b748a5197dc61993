"""The deputy's gate view (``kent-ops gate GATE``): ADMIT or HOLD, figures, a manual tally.

A full-screen ADMIT or HOLD from this gate's retained command (docs/protocol.md,
"gate/{gate}/command"), attendance against ``hold_at``, this gate's counts, and the
manual tally for when the gate counter fails. The view holds no counts and no rules;
the tally is a sensor, not a view (:class:`dashboards.gate.tally.ManualTally`, the
sensors' gate counter): it publishes as gate ``{gate}-manual`` through this view's
connection, keeps its totals on disk so a reboot continues, heartbeats every 30 s once
used, and publishes its availability (``online`` once used and on every reconnection,
``offline`` when the app quits or, as the last will, when it vanishes). On a remote
property's broker it also says when that broker cannot reach the command post
(:mod:`dashboards.gate.bridge`), while the last order stays on the screen.

One factory, :func:`make_gate_app`, builds the app for the command line
(:mod:`kent_ops.commands.gate`) and the tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from textual import on
from textual.binding import Binding
from textual.reactive import reactive
from textual.timer import Timer

from dashboards.common.clock import Clock, following
from dashboards.common.connection import NO_AGGREGATOR_AFTER_S, STALE_AFTER_S
from dashboards.common.feed_app import FeedApp
from dashboards.common.format import event_zone
from dashboards.common.messages import CommandReceived, LinkChanged
from dashboards.gate.bridge import BridgeChanged, bridge_problem, watch_bridge
from dashboards.gate.screens.help import GateHelpScreen
from dashboards.gate.screens.main import GateScreen
from dashboards.gate.tally import DEFAULT_STATE_DIR, FeedLink, ManualTally, TallyState
from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.witness import WitnessKeeper
from kent_ops.core import wire
from kent_ops.core.errors import UsageError
from kent_ops.core.gate_view import NOT_COUNTED_AFTER_S, counted_taps, tally_listed
from kent_ops.core.permit import ID_PATTERN, SENSOR_ID_PATTERN

__all__ = ["GateApp", "make_gate_app"]

HEARTBEAT_S = 30.0
"""Gate counters publish at least this often even when nothing changed (docs/protocol.md)."""


class GateApp(FeedApp):
    """One gate's order, figures and manual tally."""

    CSS_PATH = "gate.tcss"
    TITLE = "kent-ops gate"
    BINDINGS = [
        Binding("plus,equals_sign", "count_in", "in", key_display="+"),
        Binding("minus", "count_out", "out", key_display="-"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    command: reactive[wire.GateCommand | None] = reactive(None, always_update=True, repaint=False)
    """The aggregator's last order for this gate (its retained command)."""
    tally: reactive[TallyState] = reactive(TallyState(), repaint=False)
    """The manual tally's totals and the seq of its last message."""
    sent: reactive[int | None] = reactive(None, repaint=False)
    """Taps the broker has (the most an acknowledged message carried); None with no broker."""
    waiting_s: reactive[float | None] = reactive(None, repaint=False)
    """Real seconds since the broker took the first tap the aggregator has not counted."""
    unheard: reactive[bool] = reactive(False, repaint=False)
    """No aggregator for this event on the broker (a mistyped ``--event``): what the tally
    sends reaches no one, though the broker takes it."""

    def __init__(
        self,
        gate: str,
        event_id: str,
        broker: BrokerAddress | None,
        tally: ManualTally,
        *,
        ca_file: str | None = None,
        clock: Clock | None = None,
        statuses: Iterable[wire.Status] = (),
        command: wire.GateCommand | None = None,
        stale_after_s: float = STALE_AFTER_S,
        no_aggregator_after_s: float = NO_AGGREGATOR_AFTER_S,
    ) -> None:
        topics = wire.Topics(event_id)
        super().__init__(
            event_id=event_id,
            broker=broker,
            subscriptions=[
                topics.status,
                topics.gate_command(gate),
                topics.aggregator_availability,
                topics.bridge_states,
            ],
            ca_file=ca_file,
            clock=clock,
            client_name=f"gate-{gate}",
            will_topic=tally.availability_topic,
            stale_after_s=stale_after_s,
            no_aggregator_after_s=no_aggregator_after_s,
        )
        self.gate = gate
        self.manual = tally
        self.link = FeedLink(self.feed, tally.topic) if self.feed is not None else None
        """The tally's way to the broker: this view's own connection (None standalone)."""
        self.bridges_down: dict[str, datetime | None] = {}
        """Properties whose bridge to the command post is down, with since when if known."""
        if self.feed is not None:
            watch_bridge(self.feed, self.post_message)
        self._attached = False
        self._late_check: Timer | None = None
        self._initial_statuses = list(statuses)
        self._initial_command = command
        self.set_reactive(GateApp.tally, tally.state)

    # lifecycle ----------------------------------------------------------------------

    def on_mount(self) -> None:
        screen = GateScreen(self.gate, self.event_id).data_bind(
            GateApp.status,
            GateApp.command,
            GateApp.tally,
            GateApp.sent,
            GateApp.waiting_s,
            GateApp.unheard,
            GateApp.now,
            GateApp.problem,
        )
        self.push_screen(screen)
        for status in self._initial_statuses:
            self.show_status(status)
        if self._initial_command is not None:
            self.command = self._initial_command
        beat = min(1.0, self.manual.heartbeat_s or HEARTBEAT_S)
        self.set_interval(beat, self._heartbeat, name="tally-heartbeat")
        if self.manual.recovered_from is not None:
            self.notify(
                f"The tally file was unreadable and was moved to {self.manual.recovered_from}; "
                "counting starts again at 0 (the aggregator keeps the earlier totals).",
                severity="warning",
                timeout=30,
                markup=False,
            )

    def on_unmount(self) -> None:
        if self.link is None or not self._attached or not self.link.online:
            return
        self.manual.close(announce=True)  # says offline, retained: a clean disconnect has no will
        sent = self.link.sent.get(self.manual.availability_topic)
        if sent is not None:
            sent.wait(2.0)

    # what arrives -------------------------------------------------------------------

    def show_status(self, status: wire.Status) -> None:
        """As every view; and a tally in use before a restart speaks from the first status
        on, so its first message carries the aggregator's time, not the wall clock's."""
        super().show_status(status)
        if self.manual.state.in_use:
            self._attach_tally()

    @on(CommandReceived)
    def _command_received(self, message: CommandReceived) -> None:
        if message.gate == self.gate:
            self.command = message.command

    @on(LinkChanged)
    def _link_for_tally(self, message: LinkChanged) -> None:
        if self.link is None:
            return
        if message.connected:
            # Back online (or restarted with a tally in use): say so and send the totals.
            self.link.came_up()
        else:
            self.link.went_down()
        self._show_tally()

    @on(BridgeChanged)
    def _bridge_changed(self, message: BridgeChanged) -> None:
        if message.up:
            self.bridges_down.pop(message.property_id, None)
        elif message.property_id not in self.bridges_down:
            self.bridges_down[message.property_id] = None if message.retained else self.clock()
        self.tick()

    def tick(self) -> None:
        """As every view, but while this property's bridge is down, that is the problem.

        A broker that cannot be reached comes first (then nothing is known); with the
        local broker up, a bridge that is down explains why no status arrives.
        """
        if self.bridges_down and self.connection.link == "up":
            now = self.clock()
            self.now = now
            since = [t for t in self.bridges_down.values() if t is not None]
            self.problem = bridge_problem(
                min(since) if since else None, self.connection.status_ts, event_zone(self.status)
            )
        else:
            super().tick()
        self._show_tally()

    # the manual tally ---------------------------------------------------------------

    def action_count_in(self) -> None:
        """One person in through this gate, counted by hand."""
        self._count(entered=1)

    def action_count_out(self) -> None:
        """One person out through this gate, counted by hand."""
        self._count(exited=1)

    def _attach_tally(self) -> None:
        if self.link is not None and not self._attached:
            self.manual.attach(self.link)
            self._attached = True

    def _count(self, *, entered: int = 0, exited: int = 0) -> None:
        """Count, save, and publish at QoS 1 (or keep for the reconnection).

        Not at a gate whose permit has no manual tally: the broker would refuse the
        counts (``kent-ops deploy acl``) and the aggregator would reject them. Before the
        aggregator's first status the count is kept here, and sent with that status's
        time once it comes (beside a demo the wall clock's would be refused).
        """
        if tally_listed(self.status, self.gate) is False:
            self.notify(
                f"Gate {self.gate} has no manual tally in the permit: nothing was counted.",
                severity="warning",
                markup=False,
            )
            return
        if self.status is not None:
            self._attach_tally()
        self.manual.count(entered, exited)
        self._show_tally()

    def _heartbeat(self) -> None:
        if self.manual.tick():
            self._show_tally()

    def _show_tally(self) -> None:
        state = self.manual.state
        self.tally = state
        self.unheard = self.no_aggregator
        if self.link is None:
            self.sent, self.waiting_s = None, None
            return
        sends = self.link.sends
        self.sent = sends.sent()
        waiting = self.waiting_s = sends.waiting_s(counted_taps(self.status, self.gate))
        if waiting is not None and waiting < NOT_COUNTED_AFTER_S and self._late_check is None:
            # Look again the moment the oldest tap waiting becomes late, not at a tick.
            self._late_check = self.set_timer(
                NOT_COUNTED_AFTER_S - waiting + 0.01, self._late, name="tally-late"
            )

    def _late(self) -> None:
        self._late_check = None
        self._show_tally()

    def action_help(self) -> None:
        if not isinstance(self.screen, GateHelpScreen):
            self.push_screen(GateHelpScreen())


def make_gate_app(
    gate: str,
    event_id: str,
    broker: BrokerAddress | None,
    *,
    state_dir: Path | str | None = None,
    ca_file: str | None = None,
    clock: Clock | None = None,
    statuses: Iterable[wire.Status] = (),
    command: wire.GateCommand | None = None,
    signing_key: bytes | None = None,
    heartbeat_s: float = HEARTBEAT_S,
    stale_after_s: float = STALE_AFTER_S,
    no_aggregator_after_s: float = NO_AGGREGATOR_AFTER_S,
    witness: WitnessKeeper | None = None,
) -> GateApp:
    """Build the gate view: the command line and every test come through here.

    Args:
        gate: the gate this deputy stands at (its tally is gate ``{gate}-manual``).
        event_id: the event, as in the permit and the topics.
        broker: where the aggregator publishes; None runs standalone (snapshots).
        state_dir: where the tally's totals are kept (default ~/.local/state/kent-ops).
        ca_file: CA certificate for an ``mqtts://`` broker.
        clock: "now"; the wall clock by default.
        statuses: status snapshots to show at start (tests).
        command: a gate command to show at start (tests).
        signing_key: the tally's HMAC key when the event signs its messages
            (docs/protocol.md, "Signed payloads").
        heartbeat_s: how often a tally in use repeats its totals (30 s, docs/protocol.md).
        stale_after_s: how old a status may be before the banner says so (15 s).
        no_aggregator_after_s: real seconds with the broker up and nothing from the
            event's aggregator before the banner says there is none (a mistyped event id).
        witness: keeps every checkpoint of the evidence log received (a witness file).
    """
    if not ID_PATTERN.match(event_id):
        raise UsageError(f"event id {event_id!r} must be lower-case letters, digits and dashes")
    if not SENSOR_ID_PATTERN.match(gate):
        raise UsageError(f"gate id {gate!r} must be letters, digits, '.', '_' or '-'")
    directory = Path(state_dir) if state_dir is not None else DEFAULT_STATE_DIR
    # One clock for the view and its tally: beside a demo both run on the demo's time,
    # so the counts the deputy taps carry the time the aggregator keeps.
    shared = following(clock)
    try:
        tally = ManualTally(
            event_id,
            gate,
            state_dir=directory,
            clock=shared,
            key=signing_key,
            heartbeat_s=heartbeat_s,
        )
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the tally in {directory}: {exc}") from None
    app = GateApp(
        gate,
        event_id,
        broker,
        tally,
        ca_file=ca_file,
        clock=shared,
        statuses=statuses,
        command=command,
        stale_after_s=stale_after_s,
        no_aggregator_after_s=no_aggregator_after_s,
    )
    if witness is not None and app.feed is not None:
        app.feed.keep_checkpoints(witness)
    return app
