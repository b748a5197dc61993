"""Which notices an alert calls for: one when it is raised, one when it ends; never twice.

The aggregator republishes an alert at every change (an acknowledgement, a note, a
worse figure, a condition that stops and returns within ``clear_s``), always under the
same id. The notifier keys each notice on (alert id, state, person, channel), so only
the first ``active`` and the first ``cleared`` of an alert tell anyone anything: a
flapping condition is one alert, and one notice. A person is told that an alert ended
only if they were told it was raised (an alert first seen already cleared, such as
yesterday's, wakes no one).
"""

from __future__ import annotations

from collections.abc import Iterable

from kent_ops.core import wire
from kent_ops.notify.config import Channel, Person
from kent_ops.notify.ledger import Ledger, NoticeKey

__all__ = ["notices_for"]


def notices_for(
    alert: wire.Alert, people: Iterable[Person], ledger: Ledger
) -> list[tuple[NoticeKey, Channel]]:
    """The notices this state of ``alert`` calls for that the ledger does not hold yet."""
    out: list[tuple[NoticeKey, Channel]] = []
    for person in people:
        if alert.severity not in person.severities:
            continue
        for channel in person.channels:
            key = NoticeKey(alert.id, alert.state, person.id, channel.number)
            if ledger.has(key):
                continue
            if alert.state == "cleared":
                raised = NoticeKey(alert.id, "active", person.id, channel.number)
                if not ledger.has(raised):
                    continue
            out.append((key, channel))
    return out
