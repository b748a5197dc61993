"""Whether the event's broker restarted: its uptime, read after every (re)connection.

A broker killed between its saves (a power cut, the OOM killer) comes back with what it
had saved: the aggregator's session may even come back "present", yet messages it had
acknowledged to the sensors since the save are gone. Nothing in MQTT says so. Mosquitto
says how long it has run, on ``$SYS/broker/uptime`` (retained, refreshed every
``sys_interval``); the link records it after each connection and then every
:data:`UPTIME_EVERY_S` of it (``broker-uptime``), and this compares each with what the
aggregator saw before, in this run or, after a restart of the aggregator, in its log:

- the uptime fell: it restarted;
- or it started later than the broker the aggregator saw before (the earlier uptime's
  start, or a connection the log records: the broker was up then), by more than
  :data:`MARGIN_S` (a retained uptime lags by up to ``sys_interval``, 10 s by default).

Then the service records ``broker-restarted`` and the engine takes it where it stands in
the log (every sensor in doubt until heard again: docs/protocol.md, "The broker
restarted"). A broker that publishes no uptime (``sys_interval 0``, not Mosquitto) is
not watched this way.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from kent_ops.broker.mosquitto import UPTIME_TOPIC
from kent_ops.core.errors import UsageError
from kent_ops.evidence.records import connect_ro
from kent_ops.evidence.system import (
    BrokerConnected,
    BrokerRestarted,
    BrokerUptime,
    read_system,
)

__all__ = [
    "MARGIN_S",
    "UPTIME_EVERY_S",
    "UPTIME_TOPIC",
    "Seen",
    "UptimeWatch",
    "last_seen",
    "parse_uptime",
]

MARGIN_S = 15.0
"""Two readings of one broker's start may differ by Mosquitto's ``sys_interval`` (10 s by
default) and the service's stamping: a later start by more than this is a restart."""
UPTIME_EVERY_S = 60.0
"""While connected, the broker's uptime is recorded again once it has grown by this much:
the log then knows the broker's age to a minute when the aggregator itself restarts."""


def parse_uptime(payload: bytes) -> float | None:
    """``b"3600 seconds"`` → 3600.0; None for anything else."""
    words = payload.split()
    if len(words) != 2 or words[1] != b"seconds" or not words[0].isdigit():
        return None
    return float(words[0])


@dataclass(frozen=True, slots=True)
class Seen:
    """The broker as the aggregator last saw it: its uptime ``at`` a time on the service's
    clock, or only that it was up then (``uptime_s`` None: a connection)."""

    uptime_s: float | None
    at: datetime

    @property
    def started_by(self) -> datetime:
        """The broker had started by then."""
        return self.at - timedelta(seconds=self.uptime_s or 0.0)


def last_seen(evidence_path: Path) -> Seen | None:
    """The broker as the log last saw it: its last uptime, else its last connection."""
    try:
        conn = connect_ro(evidence_path)
    except UsageError:
        return None
    try:
        rows = conn.execute(
            "SELECT received_at, payload FROM records WHERE kind = 'system' ORDER BY id DESC"
        )
        connected = None
        for at, payload in rows:
            record = read_system(payload)
            if isinstance(record, BrokerUptime | BrokerRestarted):
                return Seen(record.uptime_s, datetime.fromisoformat(at))
            if connected is None and isinstance(record, BrokerConnected):
                connected = Seen(None, datetime.fromisoformat(at))
        return connected
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()


class UptimeWatch:
    """Each uptime read against the broker seen before (:func:`last_seen` at the start)."""

    def __init__(self, previous: Seen | None) -> None:
        self.previous = previous

    def read(self, uptime_s: float, at: datetime) -> BrokerRestarted | None:
        """The uptime read at ``at``: the record to write if the broker restarted."""
        prev, self.previous = self.previous, Seen(uptime_s, at)
        if prev is None:
            return None
        if prev.uptime_s is not None and uptime_s < prev.uptime_s:
            how = f"its uptime fell from {prev.uptime_s:,.0f} s to {uptime_s:,.0f} s"
        elif at - timedelta(seconds=uptime_s) > prev.started_by + timedelta(seconds=MARGIN_S):
            ago = (at - prev.at).total_seconds()
            how = (
                f"it had run {uptime_s:,.0f} s, though the aggregator saw it running "
                f"{ago:,.0f} s before"
            )
        else:
            return None
        return BrokerRestarted(
            how=how,
            uptime_s=uptime_s,
            previous_uptime_s=prev.uptime_s,
            previous_at=prev.at.isoformat(),
        )
