"""The words of a notice: what is wrong, the law it breaks, when, and where to look.

A notice is read on a phone's lock screen, so the title says it all in one line and the
text adds the alert's own sentence, its citation, its times in the event's zone to the
second, and the dashboard link. Pure: the same alert always gives the same notice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from kent_ops.core import wire
from kent_ops.core.rules import RULES

__all__ = ["Notice", "compose", "local_time"]


@dataclass(frozen=True, slots=True)
class Notice:
    title: str
    body: str


def local_time(t: datetime | None, tz: ZoneInfo) -> str:
    """``2027-07-04 10:03:05 EDT``: the event's wall clock, to the second; ``?`` if unknown."""
    if t is None:
        return "?"
    return t.astimezone(tz).strftime("%Y-%m-%d %H:%M:%S %Z")


def _clock(t: datetime | None, tz: ZoneInfo) -> str:
    """``10:03:05``: the time alone, for a second instant on the same line."""
    return "?" if t is None else t.astimezone(tz).strftime("%H:%M:%S")


def _what(alert: wire.Alert) -> str:
    rule = RULES.get(alert.rule)
    what = rule.title if rule is not None else alert.rule
    return f"{what} ({alert.subject})" if alert.subject else what


def compose(alert: wire.Alert, *, event_name: str, tz: ZoneInfo, dashboard: str) -> Notice:
    """The notice for ``alert`` in its present state (``active``: raised; ``cleared``: ended)."""
    kind = alert.severity.upper() if alert.severity == "breach" else alert.severity.capitalize()
    cite = f" ({alert.cite})" if alert.cite else ""
    if alert.state == "cleared":
        title = f"{event_name}: ended: {kind.lower()} {alert.id} {_what(alert)}{cite}"
        when = (
            f"Held from {local_time(alert.since, tz)} to {_clock(alert.ended_at, tz)}; "
            f"cleared at {_clock(alert.cleared_at, tz)}."
        )
        lead = f"Ended: {alert.message}" if alert.message else "Ended."
    else:
        title = f"{event_name}: {kind} {alert.id} {_what(alert)}{cite}"
        when = f"Since {local_time(alert.since, tz)} (raised at {_clock(alert.raised_at, tz)})."
        lead = alert.message or _what(alert)
    lines = [lead, f"Alert {alert.id}, {alert.severity}, {alert.cite or 'no citation'}.", when]
    if alert.uncertain:
        why = "; ".join(alert.stretches[-1].rests_on) if alert.stretches else ""
        lines.append(
            f"Its figures are indeterminate ({why or 'a sensor was offline or silent'}): not "
            "proven while that lasts."
        )
    if dashboard:
        lines.append(f"Dashboard: {dashboard}")
    return Notice(title=title, body="\n".join(lines))
