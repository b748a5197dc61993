"""The main screen: everything at a glance, the tables, the alerts, the last action.

The app binds its reactives into this screen and the screen binds them on into its
widgets (``data_bind``), so one status snapshot reaches every panel in the same
refresh. ``i`` opens the facilities checklist, a screen of its own. On the Town
Clerk's dashboard ``R`` revokes or reinstates the permit; elsewhere the key is absent.
Every widget's id names it (``#attendance-panel``), so a rule in the stylesheet meant
for one can never reach a form's field of a similar name.

Two layouts of the same widgets. From :data:`NARROW_BELOW` columns up, a terminal or
a tablet: attendance and staffing side by side, the gates beside the lots, the
alerts under them. Narrower, a phone held upright: one column that scrolls, in the
order an inspector needs it, attendance and the order first, then the alerts
(active breaches on top), then staffing, gates and lots. The screen is composed
again when a resize crosses the breakpoint (a phone turned), and carries the
``-narrow`` class while narrow.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import OptionList

from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.common.widgets.keys_footer import KeysFooter
from dashboards.common.widgets.panel import set_border_title
from dashboards.inspector.messages import (
    AckRequested,
    AdjustRequested,
    AlertChosen,
    ChecklistRequested,
    NoteRequested,
    PermitChangeRequested,
)
from dashboards.inspector.widgets.action_log import NO_ACTIONS, NO_ACTIONS_SHORT, ActionLog
from dashboards.inspector.widgets.alert_list import AlertList
from dashboards.inspector.widgets.glance import (
    AttendancePanel,
    CompliancePanel,
    HeaderBar,
    PermitAlarm,
)
from dashboards.inspector.widgets.notice import NoticeBar
from dashboards.inspector.widgets.tables import GatesTable, LotsTable, PropertiesTable
from kent_ops.core import wire
from kent_ops.core.inspector_actions import SentAction

__all__ = ["NARROW_BELOW", "MainScreen"]

NARROW_BELOW = 80
"""Screens narrower than this many columns (a phone upright: about 40) get one column."""


class MainScreen(Screen[None]):
    """Attendance, staffing, gates, lots and alerts of one event, live."""

    BINDINGS = [
        Binding("a", "acknowledge", "Ack alert"),
        Binding("n", "note", "Note"),
        Binding("c", "adjust", "Adjust att."),
        Binding("i", "checklist", "Checklist"),
        Binding("R", "permit", "Permit status", key_display="R"),
        Binding("d", "details", "Details", show=False),
        Binding("tab", "app.focus_next", "Next panel", show=False),
    ]

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The last status snapshot, whole."""
    alerts: reactive[dict[str, wire.Alert]] = reactive(dict, always_update=True, repaint=False)
    """Every alert seen, by id."""
    trend: reactive[tuple[tuple[float, int], ...]] = reactive(tuple, repaint=False)
    """The last hour of attendance seen by this dashboard."""
    flash_on: reactive[bool] = reactive(False, repaint=False)
    """The flash phase of unacknowledged breaches."""
    now: reactive[datetime | None] = reactive(None, repaint=False)
    """The local clock."""
    problem: reactive[str | None] = reactive(None, repaint=False)
    """Why the figures may be out of date; None when current."""
    actions: reactive[tuple[SentAction, ...]] = reactive(tuple, repaint=False)
    """This inspector's actions this session."""

    def __init__(
        self,
        event_id: str,
        inspector: str,
        *,
        clerk: str | None = None,
        notice: Sequence[str] = (),
    ) -> None:
        super().__init__(id="main")
        self.event_id = event_id
        self.inspector = inspector
        self.clerk = clerk
        self.notice = tuple(notice)
        self.narrow = False
        """Whether the screen is in its one-column layout (set as it is composed)."""
        self._resumed = False
        self._titled: tuple[GatesTable, LotsTable, AlertList] | None = None
        """The widgets whose titles carry counts, once composed."""

    def compose(self) -> ComposeResult:
        self.narrow = self.app.size.width < NARROW_BELOW
        self.set_class(self.narrow, "-narrow")
        signed = f"clerk {self.clerk}" if self.clerk else self.inspector
        yield HeaderBar(self.event_id, signed, id="header-bar").data_bind(
            MainScreen.status, MainScreen.now
        )
        yield ConnectionBanner(id="connection-banner").data_bind(MainScreen.problem)
        yield PermitAlarm(id="permit-alarm").data_bind(MainScreen.status)
        attendance = AttendancePanel(id="attendance-panel").data_bind(
            MainScreen.status, MainScreen.trend
        )
        compliance = CompliancePanel(id="compliance-panel").data_bind(MainScreen.status)
        gates = GatesTable(id="gates-table").data_bind(MainScreen.status)
        lots = LotsTable(id="lots-table").data_bind(MainScreen.status)
        properties = PropertiesTable(id="properties-table").data_bind(MainScreen.status)
        alerts = AlertList(id="alert-list").data_bind(
            MainScreen.alerts, MainScreen.status, MainScreen.flash_on
        )
        # Titles go on the widgets as they are made: when the screen's mount is handled,
        # a container's own children may still be mounting, so a query could miss them.
        attendance.border_title = "Attendance"
        properties.border_title = "Properties"
        self._titled = (gates, lots, alerts)
        self._titles()
        if self.narrow:
            with VerticalScroll(id="narrow-column"):
                yield from (attendance, alerts, compliance, gates, lots, properties)
        else:
            with Horizontal(id="glance"):
                yield from (attendance, compliance)
            with Horizontal(id="tables"):
                yield gates
                with VerticalScroll(id="side-tables"):
                    yield from (lots, properties)
            yield alerts
        hint = NO_ACTIONS_SHORT if self.narrow else NO_ACTIONS  # the footer has the keys
        yield ActionLog(id="action-log", hint=hint).data_bind(MainScreen.actions, MainScreen.status)
        yield NoticeBar(self.notice, id="notice-bar")
        yield KeysFooter()

    def show_notice(self, lines: Sequence[str]) -> None:
        """New lines for the notice at the foot, kept if the screen is composed again."""
        self.notice = tuple(lines)
        self.query_one("#notice-bar", NoticeBar).show(self.notice)

    def on_mount(self) -> None:
        self._composed()

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """Shown the first time: its widgets were styled as they were mounted, a moment
        ago, so Textual's restyle of all of them on resuming would change nothing (it is
        for a screen coming back from under another). Later resumes restyle as ever."""
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def _composed(self) -> None:
        """What the stylesheet cannot say: the alert list's focus, and the titles."""
        if self.app.app_focus:  # else when the page takes the focus (FeedApp)
            if not self.query(AlertList):  # still mounting inside its container
                self.call_after_refresh(self._composed)
                return
            self.focus_first()
        self._titles()

    def focus_first(self) -> None:
        """The alert list, not scrolled to: on a phone the column stays at its top."""
        self.query_one(AlertList).focus(scroll_visible=False)

    async def on_resize(self, event: events.Resize) -> None:
        if (event.size.width < NARROW_BELOW) != self.narrow:
            await self.recompose()
            self._composed()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The permit key exists only on the Clerk's dashboard (hidden from the footer too)."""
        if action == "permit":
            return self.clerk is not None
        return True

    def watch_status(self) -> None:
        self._titles()

    def watch_alerts(self) -> None:
        self._titles()

    def _titles(self) -> None:
        """The counts in the tables' titles, set on the widgets composed (mounted or not)."""
        if self._titled is None:
            return  # not composed yet
        gates_table, lots_table, alert_list = self._titled
        status = self.status
        gates = status.gates if status is not None else {}
        lots = status.lots if status is not None else {}
        pending = len(status.pending) if status is not None else 0
        down = sum(1 for g in gates.values() if g.down())
        set_border_title(gates_table, f"Gates ({len(gates)}, {down} down)")
        set_border_title(lots_table, f"Lots ({len(lots)})")
        active = sum(1 for a in self.alerts.values() if a.state == "active")
        counts = f"{active} active, {pending} pending"
        set_border_title(
            alert_list,
            f"Alerts: {counts}" if self.narrow else f"Alerts ({counts}, {len(self.alerts)} in all)",
        )

    @property
    def selected_alert(self) -> str | None:
        return self.query_one(AlertList).selected_alert

    def action_acknowledge(self) -> None:
        alert_id = self.selected_alert
        if alert_id is None:
            self.notify("Select an alert to acknowledge first.", severity="warning")
            return
        self.post_message(AckRequested(alert_id))

    def action_note(self) -> None:
        self.post_message(NoteRequested(None))

    def action_adjust(self) -> None:
        self.post_message(AdjustRequested())

    def action_checklist(self) -> None:
        self.post_message(ChecklistRequested())

    def action_permit(self) -> None:
        if self.clerk is not None:
            self.post_message(PermitChangeRequested())

    def action_details(self) -> None:
        alert_id = self.selected_alert
        if alert_id is not None:
            self.post_message(AlertChosen(alert_id))

    @on(OptionList.OptionSelected, "#alert-list")
    def _alert_chosen(self, event: OptionList.OptionSelected) -> None:
        self.action_details()
