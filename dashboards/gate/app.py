"""The deputy's gate view: ``kent-ops gate GATE --event ID [--broker URL] [--state-dir DIR]``.

A full-screen ADMIT or HOLD from ``kent/{e}/gate/{gate}/command``, attendance against
``hold_at``, this gate's counts, and the manual tally for when the gate counter fails.
The view holds no counts and no rules; the tally is a sensor, not a view: it
publishes as gate ``{gate}-manual`` (cumulative totals, rising seq, QoS 1), keeps its
totals on disk so a reboot continues, heartbeats every 30 s once used, and publishes
its availability (``online`` once used, ``offline`` when the app quits or, as the last
will, when it vanishes).

One factory, :func:`make_gate_app`, builds the app for the command line and the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from textual import on
from textual.binding import Binding
from textual.reactive import reactive

from dashboards.common.clock import Clock
from dashboards.common.connection import STALE_AFTER_S
from dashboards.common.feed_app import FeedApp
from dashboards.common.messages import CommandReceived, LinkChanged
from dashboards.gate.screens.help import GateHelpScreen
from dashboards.gate.screens.main import GateScreen
from dashboards.gate.tally import (
    DEFAULT_STATE_DIR,
    ManualTally,
    TallyState,
    manual_gate,
    tally_path,
)
from kent_ops.broker.client import BrokerAddress, parse_broker_url
from kent_ops.core.errors import UsageError
from kent_ops.core.wire import Topics, encode_payload, load_keys

__all__ = ["GateApp", "cli_gate", "make_gate_app"]

HEARTBEAT_S = 30.0
"""Gate counters publish at least this often even when nothing changed (SPEC 3)."""

_GATE_ID = re.compile(r"^[A-Za-z0-9_.-]+$")
_EVENT_ID = re.compile(r"^[a-z0-9-]+$")


class GateApp(FeedApp):
    """One gate's order, figures and manual tally."""

    CSS_PATH = "gate.tcss"
    TITLE = "kent-ops gate"
    BINDINGS = [
        Binding("plus,equals_sign", "count_in", "+1 in", key_display="+"),
        Binding("minus", "count_out", "+1 out", key_display="-"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    command: reactive[dict[str, Any] | None] = reactive(None, always_update=True, repaint=False)
    """The aggregator's last order for this gate (retained ``gate/{gate}/command``)."""
    tally: reactive[TallyState] = reactive(TallyState(), repaint=False)
    """The manual tally's totals and the seq of its last message."""
    delivered: reactive[bool | None] = reactive(None, repaint=False)
    """Whether the broker has the tally's last message; None with no broker."""

    def __init__(
        self,
        gate: str,
        event_id: str,
        broker: BrokerAddress | None,
        tally: ManualTally,
        *,
        ca_file: str | None = None,
        clock: Clock | None = None,
        statuses: Iterable[dict[str, Any]] = (),
        command: dict[str, Any] | None = None,
        heartbeat_s: float = HEARTBEAT_S,
        stale_after_s: float = STALE_AFTER_S,
        signing_key: bytes | None = None,
    ) -> None:
        topics = Topics(event_id)
        self.counter = manual_gate(gate)
        super().__init__(
            event_id=event_id,
            broker=broker,
            subscriptions=[
                topics.status,
                topics.gate_command(gate),
                topics.aggregator_availability,
            ],
            ca_file=ca_file,
            clock=clock,
            client_name=f"gate-{gate}",
            will=(topics.availability(self.counter), "offline"),
            stale_after_s=stale_after_s,
        )
        self.gate = gate
        self.manual = tally
        self.heartbeat_s = heartbeat_s
        self.signing_key = signing_key
        self._initial_statuses = list(statuses)
        self._initial_command = command
        self._last_sent: mqtt.MQTTMessageInfo | None = None
        self._announced = False
        self.set_reactive(GateApp.tally, tally.state)

    # lifecycle ----------------------------------------------------------------------

    def on_mount(self) -> None:
        screen = GateScreen(self.gate, self.event_id).data_bind(
            GateApp.status,
            GateApp.command,
            GateApp.tally,
            GateApp.delivered,
            GateApp.now,
            GateApp.problem,
        )
        self.push_screen(screen)
        for status in self._initial_statuses:
            self.show_status(status)
        if self._initial_command is not None:
            self.command = self._initial_command
        self.set_interval(self.heartbeat_s, self._heartbeat, name="tally-heartbeat")
        if self.manual.recovered_from is not None:
            self.notify(
                f"The tally file was unreadable and was moved to {self.manual.recovered_from}; "
                "counting starts again at 0 (the aggregator keeps the earlier totals).",
                severity="warning",
                timeout=30,
            )

    def on_unmount(self) -> None:
        if self.feed is not None and self._announced and self.feed.connected:
            info = self.feed.publish(self.topics.availability(self.counter), "offline", retain=True)
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(timeout=2.0)

    # what arrives -------------------------------------------------------------------

    @on(CommandReceived)
    def _command_received(self, message: CommandReceived) -> None:
        if message.gate == self.gate:
            self.command = message.command

    @on(LinkChanged)
    def _link_for_tally(self, message: LinkChanged) -> None:
        if message.connected and self.manual.state.in_use:
            # Back online (or restarted with a tally in use): say so and send the totals.
            self._send(self.manual.heartbeat(self.clock()))

    def tick(self) -> None:
        super().tick()
        if self._last_sent is not None:
            self.delivered = _delivered(self._last_sent)

    # the manual tally ---------------------------------------------------------------

    def action_count_in(self) -> None:
        """One person in through this gate, counted by hand."""
        self._send(self.manual.count(self.clock(), persons_in=1))

    def action_count_out(self) -> None:
        """One person out through this gate, counted by hand."""
        self._send(self.manual.count(self.clock(), persons_out=1))

    def _heartbeat(self) -> None:
        if self.manual.state.in_use and self.feed is not None and self.feed.connected:
            self._send(self.manual.heartbeat(self.clock()))

    def _send(self, payload: dict[str, Any]) -> None:
        """Publish a tally message (already saved to disk) at QoS 1."""
        self.tally = self.manual.state
        if self.feed is None:
            self.delivered = None
            return
        if not self._announced:
            self.feed.publish(self.topics.availability(self.counter), "online", retain=True)
            self._announced = True
        body = encode_payload(payload, self.signing_key)
        self._last_sent = self.feed.publish(self.topics.gate_count(self.counter), body, qos=1)
        self.delivered = _delivered(self._last_sent)

    def action_help(self) -> None:
        if not isinstance(self.screen, GateHelpScreen):
            self.push_screen(GateHelpScreen())


def _delivered(info: mqtt.MQTTMessageInfo) -> bool:
    """Whether the broker acknowledged a message; one queued while offline says so late."""
    try:
        return info.is_published()
    except (RuntimeError, ValueError):  # published while the link was down: still queued
        return False


def make_gate_app(
    gate: str,
    event_id: str,
    broker: BrokerAddress | None,
    *,
    state_dir: Path | str | None = None,
    ca_file: str | None = None,
    clock: Clock | None = None,
    statuses: Iterable[dict[str, Any]] = (),
    command: dict[str, Any] | None = None,
    signing_key: bytes | None = None,
    heartbeat_s: float = HEARTBEAT_S,
    stale_after_s: float = STALE_AFTER_S,
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
        signing_key: the tally's HMAC key when the event signs its messages (issue 7).
        heartbeat_s: how often a tally in use repeats its totals (SPEC 3: 30 s).
        stale_after_s: how old a status may be before the banner says so (15 s).
    """
    if not _EVENT_ID.match(event_id):
        raise UsageError(f"event id {event_id!r} must be lower-case letters, digits and dashes")
    if not _GATE_ID.match(gate):
        raise UsageError(f"gate id {gate!r} must be letters, digits, '.', '_' or '-'")
    directory = Path(state_dir) if state_dir is not None else DEFAULT_STATE_DIR
    try:
        tally = ManualTally(tally_path(directory, event_id, gate))
    except OSError as exc:
        raise UsageError(f"cannot read the tally in {directory}: {exc.strerror}") from None
    return GateApp(
        gate,
        event_id,
        broker,
        tally,
        ca_file=ca_file,
        clock=clock,
        statuses=statuses,
        command=command,
        heartbeat_s=heartbeat_s,
        stale_after_s=stale_after_s,
        signing_key=signing_key,
    )


def cli_gate(args: argparse.Namespace) -> int:
    """``kent-ops gate GATE``: run the deputy's gate view until the deputy quits."""
    broker = parse_broker_url(args.broker)
    signing_key = None
    if args.keys:
        try:
            keys = load_keys(args.keys)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        counter = manual_gate(args.gate)
        if counter not in keys:
            raise UsageError(f"the signing keys file {args.keys} has no key for {counter}")
        signing_key = keys[counter]
    app = make_gate_app(
        args.gate,
        args.event,
        broker,
        state_dir=args.state_dir,
        ca_file=args.ca_file,
        signing_key=signing_key,
    )
    app.run()
    return 0
