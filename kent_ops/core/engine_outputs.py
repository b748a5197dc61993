"""What the engine hands out when asked: every alert, the changes to publish, each gate's
command and the status. A part of :class:`~kent_ops.core.engine.Engine`, which holds the
state named here; reading any of it changes nothing but the alerts' folded worst figures
(core/band.py), which the next rule pass would record anyway.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Literal

from kent_ops.core import wire
from kent_ops.core.alerts import Alert, AlertBook
from kent_ops.core.assembly import AssemblyTrack
from kent_ops.core.band import AttendanceBand
from kent_ops.core.counting import Counting
from kent_ops.core.engine_io import Changes
from kent_ops.core.foresight import Foresight
from kent_ops.core.gate_orders import GateOrders
from kent_ops.core.inspectors import InspectorRecords
from kent_ops.core.permit import Permit, PermitStatus
from kent_ops.core.rules import Condition, Terms
from kent_ops.core.status_view import Snapshot, build_status

__all__ = ["EngineOutputs"]

Key = tuple[str, str | None]


class EngineOutputs:
    """The engine's outputs (mixed into :class:`~kent_ops.core.engine.Engine`)."""

    permit: Permit
    clock: Literal["wall", "sensor"]
    terms: Terms
    counts: Counting
    band: AttendanceBand
    alert_book: AlertBook
    orders: GateOrders
    foresight: Foresight
    inspectors: InspectorRecords
    assembly: AssemblyTrack
    permit_status: PermitStatus
    rejected: int
    accepted: int
    _now: int | None
    _checklist_items: list[wire.ChecklistItemInfo]
    _conditions_at: Callable[[int, int, dict[str, int] | None], dict[Key, Condition]]

    def _fold_stretch(self) -> None:
        """Offer the peak of the messages whose evaluation waited to the alerts' worst
        figures (core/band.py)."""
        self.band.fold(self.alert_book, self._conditions_at)

    @property
    def alerts(self) -> dict[str, wire.Alert]:
        """Every alert so far, by id, as published (reading changes nothing).

        Worst figures include the highest attendance of messages not yet folded in, so
        looking now gives what the next evaluation will record.
        """
        at_peak = self.band.at_peak(self._conditions_at)
        return {aid: self._record(a, at_peak) for aid, a in self.alert_book.alerts.items()}

    def _record(self, alert: Alert, at_peak: dict[Key, Condition] | None = None) -> wire.Alert:
        if at_peak is not None:
            cond = at_peak.get((alert.rule, alert.subject))
            if cond is not None and self.alert_book.live.get((alert.rule, alert.subject)) is alert:
                alert = dataclasses.replace(alert)
                alert.offer_worst(cond)
        return alert.to_record()

    def collect_changes(self) -> Changes:
        """Alerts and gate commands that changed since the last call, to publish and log."""
        self._fold_stretch()
        book = self.alert_book
        changes = Changes(alerts=[self._record(book.alerts[aid]) for aid in sorted(book.changed)])
        book.changed.clear()
        if self.orders.changed:
            changes.commands = self.commands()
            self.orders.changed = False
        return changes

    def commands(self) -> dict[str, wire.GateCommand]:
        """Each gate's ADMIT/HOLD for its deputy, with the attendance now and the forecast."""
        command = self.orders.command(self.counts.attendance, self.foresight.command_hold_in_s)
        return dict.fromkeys(self.permit.gates, command)

    def status(self) -> wire.Status:
        """The live picture at the engine's current time."""
        t = self._now if self._now is not None else 0
        return build_status(
            Snapshot(
                permit=self.permit,
                counts=self.counts,
                inspectors=self.inspectors,
                now=self._now,
                inside=self.terms.inside_window(t),
                window_index=self.terms.window_at(t),
                assembly_on=self.assembly.on,
                permit_state=self.permit_status.state(t),
                next_window=next(((s, e) for s, e in self.terms.windows if e > t), None),
                admit=self.orders.admit,
                hold_at=self.orders.hold_at,
                resume_below=self.orders.resume_below,
                active_alerts=self.alert_book.active_ids(),
                pending=self.alert_book.pending_list(),
                rejected=self.rejected,
                accepted=self.accepted,
                checklist_items=self._checklist_items,
                clock=self.clock,
                hold_in_s=self.foresight.hold_in_s(self.counts.attendance, self.orders.hold_at),
            )
        )
