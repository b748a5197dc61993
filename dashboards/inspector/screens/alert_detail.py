"""One alert in full: figures, evidence record and hash, acknowledgements, history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.inspector.panels import alert_detail

if TYPE_CHECKING:
    from dashboards.inspector.app import InspectorApp

__all__ = ["AlertDetailScreen"]


class AlertDetailScreen(Screen[None]):
    """The detail of one alert, kept live as the aggregator republishes it."""

    BINDINGS = [
        Binding("escape,backspace", "app.pop_screen", "Back"),
        Binding("a", "acknowledge", "Acknowledge"),
        Binding("n", "note", "Note on it"),
    ]

    alert: reactive[dict[str, Any] | None] = reactive(None, always_update=True, repaint=False)
    """The alert shown, in its latest form; None once its retained message is gone."""
    status: reactive[dict[str, Any] | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot (notes about the alert, the event's time zone)."""

    def __init__(self, alert_id: str) -> None:
        super().__init__(id="alert-detail")
        self.alert_id = alert_id

    @property
    def inspector_app(self) -> InspectorApp:
        return cast("InspectorApp", self.app)

    def compose(self) -> ComposeResult:
        yield Static(f"Alert {self.alert_id}", id="detail-title")
        yield ConnectionBanner(id="banner")
        with VerticalScroll(id="detail-scroll"):
            yield Static(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "alerts", self._alerts_changed)
        self.watch(self.app, "status", self._status_changed)
        self.watch(self.app, "problem", self._problem_changed)
        self.query_one(VerticalScroll).focus()
        self._redraw()

    def _alerts_changed(self, alerts: dict[str, dict[str, Any]]) -> None:
        self.alert = alerts.get(self.alert_id)

    def _status_changed(self, status: dict[str, Any] | None) -> None:
        self.status = status

    def _problem_changed(self, problem: str | None) -> None:
        self.query_one(ConnectionBanner).problem = problem

    def watch_alert(self) -> None:
        self._redraw()

    def watch_status(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        details = self.query("#detail")
        if details:
            details.first(Static).update(alert_detail(self.alert, self.status))

    def action_acknowledge(self) -> None:
        self.inspector_app.start_ack(self.alert_id)

    def action_note(self) -> None:
        self.inspector_app.start_note(self.alert_id)
