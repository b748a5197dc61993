"""The lines under the sign: the order's figures, this gate's counter, the manual tally."""

from __future__ import annotations

from datetime import datetime

from textual.reactive import reactive

from dashboards.common.widgets.panel import Panel
from dashboards.gate.panels import GateOrder, counts_text, header_text, order_details, tally_text
from dashboards.gate.tally import TallyState
from kent_ops.core import wire

__all__ = ["GateCounts", "GateHeader", "OrderDetails", "TallyPanel"]


class GateHeader(Panel):
    """The event's local time, the gate and the event."""

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot (event name and time zone)."""
    now: reactive[datetime | None] = reactive(None, repaint=False)
    """The local clock."""

    def __init__(self, gate: str, event_id: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.gate, self.event_id = gate, event_id

    def _redraw(self) -> None:
        self.show(header_text(self.gate, self.event_id, self.status, self.now))

    def watch_status(self) -> None:
        self._redraw()

    def watch_now(self) -> None:
        self._redraw()


class OrderDetails(Panel):
    """Attendance against hold_at, and why."""

    order: reactive[GateOrder] = reactive(GateOrder(admit=None), repaint=False)
    """The order shown."""

    def watch_order(self, order: GateOrder) -> None:
        self.show(order_details(order))


class GateCounts(Panel):
    """This gate's counter, as the aggregator counts it."""

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot."""

    def __init__(self, gate: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.gate = gate

    def watch_status(self, status: wire.Status | None) -> None:
        self.show(counts_text(status, self.gate))


class TallyPanel(Panel):
    """The manual tally's totals, and whether the aggregator counted them (sent is not
    counted: docs/protocol.md, "Counted, not sent")."""

    tally: reactive[TallyState] = reactive(TallyState(), repaint=False)
    """The tally's totals and seq."""
    sent: reactive[int | None] = reactive(None, repaint=False)
    """Taps the broker has (None: no broker)."""
    waiting_s: reactive[float | None] = reactive(None, repaint=False)
    """Seconds since the broker took the first tap the aggregator has not counted."""
    unheard: reactive[bool] = reactive(False, repaint=False)
    """No aggregator for this event on the broker: the tally reaches no one."""
    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot (what the aggregator counted for the tally)."""

    def __init__(self, gate: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.gate = gate

    def _redraw(self) -> None:
        self.show(
            tally_text(
                self.tally,
                self.status,
                self.gate,
                sent=self.sent,
                waiting_s=self.waiting_s,
                unheard=self.unheard,
            )  # fmt: skip
        )

    def watch_tally(self) -> None:
        self._redraw()

    def watch_sent(self) -> None:
        self._redraw()

    def watch_waiting_s(self) -> None:
        self._redraw()

    def watch_unheard(self) -> None:
        self._redraw()

    def watch_status(self) -> None:
        self._redraw()
