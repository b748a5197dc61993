"""The facilities checklist screen (permit:C, D and F): what no sensor sees, marked on site.

Items are grouped by paragraph of the ordinance (C(1) Drinking water … D, F), only
those that apply to the permit (the aggregator's status lists them). One key marks
the highlighted item: ``o`` ok, ``d`` deficient (a note saying what was found is
required), ``n`` n/a. Each marking is confirmed, published at QoS 1 on this
inspector's inspection topic, and shown "✓ recorded" once the status carries it; a
deficient item then also appears among the alerts as ``facility-deficient``.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import OptionList, Static

from dashboards.common.format import clean, event_zone, local_clock
from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.common.widgets.keys_footer import KeysFooter
from dashboards.inspector.checklist_panels import checklist_summary, item_detail
from dashboards.inspector.messages import InspectionRequested
from dashboards.inspector.screens.main import NARROW_BELOW
from dashboards.inspector.widgets.action_log import ActionLog
from dashboards.inspector.widgets.checklist_list import ChecklistList
from kent_ops.core import wire
from kent_ops.core.inspector_actions import SentAction

__all__ = ["ChecklistScreen", "waiting_items"]


def waiting_items(actions: tuple[SentAction, ...]) -> dict[str, str]:
    """Items whose latest marking by this inspector is not recorded yet, with its result."""
    waiting: dict[str, str] = {}
    for action in actions:
        mark = action.payload
        if not isinstance(mark, wire.Inspection):
            continue
        if action.state in ("sent", "delivered"):
            waiting[mark.item] = mark.result
        else:
            waiting.pop(mark.item, None)
    return waiting


NO_MARKINGS = "No markings yet: o ok · d deficient (with a note) · n n/a, then y to send"
NO_MARKINGS_SHORT = "No markings yet"


class ChecklistScreen(Screen[None]):
    """The applicable checklist items, each with its state and who marked it when."""

    BINDINGS = [
        Binding("escape,backspace", "app.pop_screen", "Back"),
        Binding("o", "mark('ok')", "OK"),
        Binding("d", "mark('deficient')", "Deficient"),
        Binding("n", "mark('n/a')", "N/A"),
    ]

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The last status snapshot (items that apply, latest marks, the time zone)."""
    alerts: reactive[dict[str, wire.Alert]] = reactive(dict, always_update=True, repaint=False)
    """Every alert seen (a deficient item's ``facility-deficient`` alert)."""
    actions: reactive[tuple[SentAction, ...]] = reactive(tuple, repaint=False)
    """This inspector's actions this session (what is still on its way)."""
    now: reactive[datetime | None] = reactive(None, repaint=False)
    """The local clock, for the title line."""

    def __init__(self, inspector: str) -> None:
        super().__init__(id="checklist-screen")
        self.inspector = inspector

    def compose(self) -> ComposeResult:
        yield Static(id="checklist-title")
        yield ConnectionBanner(id="connection-banner")
        yield ChecklistList(id="checklist-list")
        yield Static(id="checklist-detail")
        narrow = self.app.size.width < NARROW_BELOW  # a phone: the footer has the keys
        yield ActionLog(id="action-log", hint=NO_MARKINGS_SHORT if narrow else NO_MARKINGS)
        yield KeysFooter()

    def on_mount(self) -> None:
        app = self.app
        self.watch(app, "status", self._take_status)
        self.watch(app, "alerts", self._take_alerts)
        self.watch(app, "actions", self._take_actions)
        self.watch(app, "now", self._take_now)
        self.watch(app, "problem", self._take_problem)
        self.query_one(ChecklistList).focus()

    # what the app has -----------------------------------------------------------------

    def _take_status(self, status: wire.Status | None) -> None:
        self.status = status

    def _take_alerts(self, alerts: dict[str, wire.Alert]) -> None:
        self.alerts = alerts

    def _take_actions(self, actions: tuple[SentAction, ...]) -> None:
        self.actions = actions

    def _take_now(self, now: datetime | None) -> None:
        self.now = now

    def _take_problem(self, problem: str | None) -> None:
        self.query_one(ConnectionBanner).problem = problem

    def watch_status(self, status: wire.Status | None) -> None:
        self.query_one(ChecklistList).status = status
        self.query_one(ActionLog).status = status
        self.query_one("#checklist-list", ChecklistList).border_title = checklist_summary(status)
        self._title()
        self._detail()

    def watch_alerts(self) -> None:
        self._detail()

    def watch_actions(self, actions: tuple[SentAction, ...]) -> None:
        self.query_one(ChecklistList).waiting = waiting_items(actions)
        self.query_one(ActionLog).actions = actions

    def watch_now(self) -> None:
        self._title()

    def _title(self) -> None:
        zone = event_zone(self.status)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(local_clock(self.now, zone, with_zone=True), style="bold")
        text.append(f"  {self.inspector}", style="dim")
        text.append("  Facilities checklist", style="bold")
        text.append("  permit:C, D, F", style="cyan")
        name = clean(self.status.event_name) if self.status is not None else ""
        if name:
            text.append(f"  {name}", style="dim")
        self.query_one("#checklist-title", Static).update(text)

    def _detail(self) -> None:
        chosen = self.query_one(ChecklistList).selected_item
        self.query_one("#checklist-detail", Static).update(
            item_detail(chosen, self.status, self.alerts)
        )

    def on_screen_resume(self) -> None:
        # Installed once and shown again: the terminal may have been resized meanwhile,
        # so bring the item the inspector left highlighted back into view.
        self.query_one(ChecklistList).scroll_to_highlight()

    def on_resize(self) -> None:
        self.call_after_refresh(self.query_one(ChecklistList).scroll_to_highlight)

    @on(OptionList.OptionHighlighted, "#checklist-list")
    def _highlighted(self) -> None:
        self._detail()

    # marking -------------------------------------------------------------------------

    def action_mark(self, result: str) -> None:
        """Mark the highlighted item; deficient asks what was found first."""
        item = self.query_one(ChecklistList).selected_item
        if item is None:
            self.notify("Choose an item to mark first.", severity="warning")
            return
        self.post_message(InspectionRequested(item, result))
