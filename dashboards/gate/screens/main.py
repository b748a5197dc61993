"""The gate screen: the order filling the screen, the figures, the manual tally.

The same screen serves a terminal (80×24 and up) and a phone held upright in a
browser (``kent-ops serve``, about 40×45 cells): the order takes whatever height is
left, and the tally's buttons grow with the screen's height (gate.tcss).
"""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import Screen

from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.common.widgets.keys_footer import KeysFooter
from dashboards.gate.panels import GateOrder, gate_order
from dashboards.gate.tally import TallyState
from dashboards.gate.widgets.figures import GateCounts, GateHeader, OrderDetails, TallyPanel
from dashboards.gate.widgets.order_sign import OrderSign
from dashboards.gate.widgets.tally_keys import TallyKeys
from kent_ops.core import wire
from kent_ops.core.gate_view import tally_listed

__all__ = ["GateScreen"]


class GateScreen(Screen[None]):
    """ADMIT (green) or HOLD (red) for one gate, with its figures and the manual tally."""

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The last status snapshot."""
    command: reactive[wire.GateCommand | None] = reactive(None, always_update=True, repaint=False)
    """The aggregator's last order for this gate."""
    order: reactive[GateOrder] = reactive(GateOrder(admit=None), repaint=False)
    """The order shown, from the command (or the status until a command arrives)."""
    tally: reactive[TallyState] = reactive(TallyState(), repaint=False)
    """The manual tally."""
    sent: reactive[int | None] = reactive(None, repaint=False)
    """Taps the broker has (None: no broker)."""
    waiting_s: reactive[float | None] = reactive(None, repaint=False)
    """Seconds since the broker took the first tap the aggregator has not counted."""
    unheard: reactive[bool] = reactive(False, repaint=False)
    """No aggregator for this event on the broker: the tally reaches no one."""
    now: reactive[datetime | None] = reactive(None, repaint=False)
    """The local clock."""
    problem: reactive[str | None] = reactive(None, repaint=False)
    """Why the figures may be out of date; None when current."""

    def __init__(self, gate: str, event_id: str) -> None:
        super().__init__(id="gate")
        self.gate, self.event_id = gate, event_id

    def compose(self) -> ComposeResult:
        yield GateHeader(self.gate, self.event_id, id="header").data_bind(
            GateScreen.status, GateScreen.now
        )
        yield ConnectionBanner(id="banner").data_bind(GateScreen.problem)
        with Vertical(id="order", classes="-none"):
            yield OrderSign(id="sign").data_bind(GateScreen.order)
            yield OrderDetails(id="order-details").data_bind(GateScreen.order)
        yield GateCounts(self.gate, id="counts").data_bind(GateScreen.status)
        yield TallyPanel(self.gate, id="tally").data_bind(
            GateScreen.tally,
            GateScreen.sent,
            GateScreen.waiting_s,
            GateScreen.unheard,
            GateScreen.status,
        )
        yield TallyKeys(id="tally-keys")
        yield KeysFooter()

    def _reorder(self) -> None:
        self.order = gate_order(self.command, self.status)

    def watch_status(self) -> None:
        self._reorder()
        keys = self.query("#tally-keys")
        if keys:  # a gate whose permit has no manual tally gets no buttons to count with
            keys.first().display = tally_listed(self.status, self.gate) is not False

    def watch_command(self) -> None:
        self._reorder()

    def watch_order(self, order: GateOrder) -> None:
        panels = self.query("#order")
        if panels:
            panel = panels.first()
            panel.set_class(order.admit is True, "-admit")
            panel.set_class(order.admit is False, "-hold")
            panel.set_class(order.admit is None, "-none")

    def on_mount(self) -> None:
        self.watch_order(self.order)
        self.watch_status()
