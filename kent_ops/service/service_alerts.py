"""The service's own alerts about its evidence: ``broker-session``, ``evidence-rollback``,
``clock-jump``.

No message raises them, so the engine does not hold them: they are numbered ``S-000n``
with the storage outage's alerts (one sequence, continued across restarts), logged as
``alert`` records and published retained like any other. A finding that is a moment (a
lost session, a rollback) is raised already ended and cleared ``clear_s`` later, as
``counter-reset`` is; a lasting one (a host clock that disagrees) ends when it does. A
clean stop clears whatever is still open, and a start clears what a crashed run left
open, so no retained alert is left active for good.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from kent_ops.core import wire
from kent_ops.core.alerts import raised_outside
from kent_ops.core.rules import RULES
from kent_ops.service.storage_outage import STORAGE_ALERT_PREFIX, StorageOutage

__all__ = ["SERVICE_RULES", "ServiceAlerts", "left_open"]

SERVICE_RULES = ("broker-session", "evidence-rollback", "clock-jump")


class ServiceAlerts:
    """The open service alerts and when each clears.

    Args:
        outage: holds the ``S-`` numbering shared with the storage alerts.
        clear_s: how long an ended alert stays active (the permit's ``clear_s``).
    """

    def __init__(self, outage: StorageOutage, clear_s: float) -> None:
        self.outage = outage
        self.clear = timedelta(seconds=clear_s)
        self.open: dict[str, wire.Alert] = {}

    def raise_(
        self,
        rule_name: str,
        observed: dict[str, Any],
        required: dict[str, Any],
        at: datetime,
        *,
        momentary: bool = True,
    ) -> wire.Alert:
        """A new active alert (already ended if ``momentary``)."""
        self.outage.issued += 1
        alert_id = f"{STORAGE_ALERT_PREFIX}{self.outage.issued:04d}"
        alert = raised_outside(alert_id, rule_name, at, observed, required, ended=momentary)
        self.open[alert.id] = alert
        return alert

    def end(self, rule_name: str, at: datetime, observed: dict[str, Any]) -> list[wire.Alert]:
        """End the lasting alerts of a rule; each clears ``clear_s`` later."""
        ended = []
        for alert_id, alert in list(self.open.items()):
            if alert.rule == rule_name and alert.ended_at is None:
                message = RULES[rule_name].sentence(None, observed, alert.required)
                alert = msgspec.structs.replace(
                    alert, ended_at=at.astimezone(UTC), observed=observed, message=message
                )
                self.open[alert_id] = alert
                ended.append(alert)
        return ended

    def due(self, at: datetime) -> list[wire.Alert]:
        """Alerts ended ``clear_s`` ago or more: cleared now."""
        cleared = []
        for alert_id, alert in list(self.open.items()):
            if alert.ended_at is not None and at >= alert.ended_at + self.clear:
                cleared.append(self._cleared(alert, alert.ended_at + self.clear))
                del self.open[alert_id]
        return cleared

    def close_all(self, at: datetime) -> list[wire.Alert]:
        """A clean stop: every open alert ends (if it had not) and clears now."""
        closed = [
            self._cleared(alert, at, ended=alert.ended_at or at.astimezone(UTC))
            for alert in self.open.values()
        ]
        self.open.clear()
        return closed

    def cleared(self, alert: wire.Alert, at: datetime) -> wire.Alert:
        """An alert a crashed run left open, cleared now (it is not watched any more)."""
        return self._cleared(alert, at, ended=alert.ended_at or at.astimezone(UTC))

    @staticmethod
    def _cleared(alert: wire.Alert, at: datetime, ended: datetime | None = None) -> wire.Alert:
        return msgspec.structs.replace(
            alert,
            state="cleared",
            ended_at=ended or alert.ended_at,
            cleared_at=at.astimezone(UTC),
        )


def left_open(retained: dict[str, bytes]) -> list[wire.Alert]:
    """The service alerts a run that did not stop cleanly left active (from what the
    restored engine republishes: the alerts the log's tail holds)."""
    found = []
    for topic, payload in retained.items():
        if f"/alerts/{STORAGE_ALERT_PREFIX}" not in topic:
            continue
        try:
            alert = wire.decode_json(wire.Alert, payload)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if alert.rule in SERVICE_RULES and alert.state != "cleared":
            found.append(alert)
    return found
