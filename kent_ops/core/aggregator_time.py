"""The aggregator's "now", read from its status: one clock for whatever stamps a message.

An aggregator on the wall clock (the field) takes each message at its receive time; one
on its sensors' clock (``kent-ops run --clock sensor``: the demo, a rehearsal, a
replay) takes it at its own ``ts``, and refuses a ``ts`` that lies far outside the
permit's windows. So whatever stamps a message on the event's broker (a deputy's tally,
the notifier's ``sent`` records) and every screen beside it use the time the
aggregator keeps: its status's ``ts`` while the status says ``"clock": "sensor"``, the
wall clock otherwise (docs/protocol.md, "One clock"). The caller reads the wall clock;
this stays pure.
"""

from __future__ import annotations

from datetime import datetime

from kent_ops.core import wire

__all__ = ["aggregator_now", "sensor_time"]


def sensor_time(status: wire.Status | None) -> datetime | None:
    """The aggregator's time when its status says it runs on its sensors' clock, else None."""
    if status is None or status.clock != "sensor" or status.ts is None:
        return None
    return status.ts


def aggregator_now(status: wire.Status | None, wall: datetime) -> datetime:
    """ "Now" as the aggregator keeps it: its sensors' time from the last ``status``, or
    ``wall`` (the caller's wall clock) when it runs on the wall clock or nothing is known.

    On the sensors' clock the status's ``ts`` is the latest time the aggregator reached;
    a message stamped with it is taken then (an aggregator never goes back in time), so
    it is never refused as being from another day, and it stands still when the
    simulated day ends, as the aggregator does.
    """
    followed = sensor_time(status)
    return followed if followed is not None else wall
