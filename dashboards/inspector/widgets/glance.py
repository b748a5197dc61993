"""The top of the main screen: the header line, the permit's alarm, attendance, and
staffing and parking."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.reactive import reactive

from dashboards.common.widgets.panel import FittedPanel, Panel, set_border_title
from dashboards.inspector.panels import (
    attendance_panel,
    compliance_panel,
    compliance_title,
    header_text,
    permit_alarm,
)
from kent_ops.core import wire

__all__ = ["AttendancePanel", "CompliancePanel", "HeaderBar", "PermitAlarm"]


class HeaderBar(FittedPanel):
    """The event, its permit, the event's local time and who is signed in."""

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""
    now: reactive[datetime | None] = reactive(None, repaint=False)
    """The local clock (shown in the event's time zone)."""

    def __init__(self, event_id: str, inspector: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.event_id = event_id
        self.inspector = inspector

    def draw(self, width: int) -> Text:
        return header_text(self.status, self.event_id, self.inspector, self.now, width=width)

    def watch_status(self) -> None:
        self.redraw()

    def watch_now(self) -> None:
        self.redraw()


class AttendancePanel(FittedPanel):
    """Attendance large, the bar to the maximum, the last hour's trend, uncertainty."""

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""
    trend: reactive[tuple[tuple[float, int], ...]] = reactive(tuple, repaint=False)
    """The last hour of attendance seen by this dashboard."""

    def draw(self, width: int) -> Text:
        return attendance_panel(self.status, self.trend, width=width)

    def watch_status(self) -> None:
        self.redraw()

    def watch_trend(self) -> None:
        self.redraw()


class CompliancePanel(FittedPanel):
    """Doctors, nurses, security and parking against what is required."""

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""

    def watch_status(self, status: wire.Status | None) -> None:
        set_border_title(self, compliance_title(status))
        self.redraw()

    def draw(self, width: int) -> Text:
        return compliance_panel(self.status, width=width)


class PermitAlarm(Panel):
    """A red line under the header while the permit is not issued (revoked: since when,
    by which resolution); hidden while it is."""

    status: reactive[wire.Status | None] = reactive(None, always_update=True, repaint=False)
    """The status snapshot shown."""

    def watch_status(self, status: wire.Status | None) -> None:
        alarm = permit_alarm(status)
        self.set_class(alarm is not None, "-shown")
        if alarm is not None:
            self.show(alarm)
