"""One alert in full: figures, evidence record and hash, acknowledgements, history."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Static

from dashboards.common.format import clean
from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.common.widgets.keys_footer import KeysFooter
from dashboards.inspector.messages import AckRequested, NoteRequested
from dashboards.inspector.panels import alert_detail
from kent_ops.core import wire

__all__ = ["AlertDetailScreen"]


class AlertDetailScreen(Screen[None]):
    """The detail of one alert, kept live as the aggregator republishes it."""

    BINDINGS = [
        Binding("escape,backspace", "app.pop_screen", "Back"),
        Binding("a", "acknowledge", "Acknowledge"),
        Binding("n", "note", "Note on it"),
    ]

    alert: reactive[wire.Alert | None] = reactive(None, always_update=True, repaint=False)
    """The alert shown, in its latest form; None once its retained message is gone."""
    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot (notes about the alert, the event's time zone)."""

    def __init__(self, alert_id: str) -> None:
        super().__init__(id="alert-detail")
        self.alert_id = alert_id

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Alert {clean(self.alert_id, limit=60)}"), id="detail-title")
        yield ConnectionBanner(id="connection-banner")
        with VerticalScroll(id="detail-scroll"):
            yield Static(id="alert-detail-body")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.watch(self.app, "alerts", self._alerts_changed)
        self.watch(self.app, "status", self._status_changed)
        self.watch(self.app, "problem", self._problem_changed)
        self.query_one(VerticalScroll).focus()
        self._redraw()

    def _alerts_changed(self, alerts: dict[str, wire.Alert]) -> None:
        self.alert = alerts.get(self.alert_id)

    def _status_changed(self, status: wire.Status | None) -> None:
        self.status = status

    def _problem_changed(self, problem: str | None) -> None:
        self.query_one(ConnectionBanner).problem = problem

    def watch_alert(self) -> None:
        self._redraw()

    def watch_status(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        details = self.query("#alert-detail-body")
        if details:
            details.first(Static).update(alert_detail(self.alert, self.status))

    def action_acknowledge(self) -> None:
        self.post_message(AckRequested(self.alert_id))

    def action_note(self) -> None:
        self.post_message(NoteRequested(self.alert_id))
