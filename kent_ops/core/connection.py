"""Is what a screen shows current? The connection state and the banner's sentence.

A dashboard that silently shows old figures is worse than none: an inspector could
cite a count from ten minutes ago. Three things make the figures doubtful
(docs/protocol.md: the status comes at least every 5 s, the aggregator's availability
is retained with a last will): the broker cannot be reached (or refuses the account),
the aggregator's availability says ``offline``, or the last status is older than 15 s
by the local clock. A fourth makes them absent: the broker answers but nothing of this
event's aggregator is on it (a mistyped ``--event``, or the wrong broker), which the
view says after 10 s rather than wait forever. Pure state and a pure function, shared
by the terminal dashboards and the deputy's page in a browser, so the wording and the
thresholds are unit tested without a broker.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Literal

from kent_ops.core.display import fmt_age, local_clock

__all__ = [
    "NO_AGGREGATOR_AFTER_S",
    "STALE_AFTER_S",
    "ConnectionState",
    "LinkState",
    "connection_problem",
    "unheard",
]

STALE_AFTER_S = 15.0
"""A status older than this (status ``ts`` against the local clock) is stale."""

NO_AGGREGATOR_AFTER_S = 10.0
"""With the broker up this long and neither the aggregator's retained availability nor
a status for the event, there is no aggregator for that event on that broker: both are
retained, so an aggregator that ever ran for it would have answered at once."""

LinkState = Literal["standalone", "connecting", "up", "down"]
"""``standalone`` is a dashboard built with no broker (snapshots, the benchmark)."""


@dataclass(slots=True)
class ConnectionState:
    """What the dashboard knows about its link, the aggregator and the last status."""

    link: LinkState = "connecting"
    reason: str | None = None
    """Why the link is down, when the client said (refused, auth, network)."""
    refused: bool = False
    """The broker answered and turned the account away (``reason`` says as whom): the
    broker is reachable, the password or the access list is wrong."""
    unknown_host: bool = False
    """The broker's host name does not resolve (``reason`` says which): a mistyped
    address, not a broker that does not answer."""
    down_since: datetime | None = None
    aggregator_online: bool | None = None
    """The retained ``aggregator/availability``; None until one arrives."""
    status_ts: datetime | None = None
    """The ``ts`` of the last status shown."""
    received_at: datetime | None = None
    """The local clock when it arrived: on a simulated clock (the demo) ``ts`` can run
    ahead of the wall clock, and the time since arrival still tells a dead aggregator."""
    event_id: str = ""
    """The event the view was started for (``--event``), named when nothing answers for it."""
    broker_url: str = ""
    """The broker it looks on (no password), named likewise."""
    received_mono: float | None = None
    """A monotonic clock's reading when the last status arrived (real seconds since)."""
    simulated: bool = False
    """The aggregator runs on its sensors' clock (``status.clock == "sensor"``): a
    simulation or the demo, whose time is not the wall clock's."""
    up_at: float | None = None
    """A monotonic clock's reading when the link last came up: waiting is measured in
    real seconds, whatever the dashboard's clock (the demo's runs 60 times fast)."""


def unheard(state: ConnectionState, monotonic: float, *, after_s: float) -> bool:
    """True when the broker has been up ``after_s`` seconds and nothing of the event's
    aggregator arrived: no availability (online or offline) and no status."""
    return (
        state.link == "up"
        and state.up_at is not None
        and state.aggregator_online is None
        and state.status_ts is None
        and monotonic - state.up_at >= after_s
    )


def connection_problem(
    state: ConnectionState,
    now: datetime,
    zone: tzinfo,
    *,
    stale_after_s: float = STALE_AFTER_S,
    monotonic: float | None = None,
    no_aggregator_after_s: float = NO_AGGREGATOR_AFTER_S,
) -> str | None:
    """One sentence saying why the figures may be out of date, or None if they are current.

    The broker comes first (nothing else can be known without it), then the
    aggregator's own word (or its silence), then the age of the last status.
    ``monotonic`` is a monotonic clock's reading now, to measure how long the link has
    been up.
    """
    shown = (
        f"figures from {local_clock(state.status_ts, zone)}"
        if state.status_ts is not None
        else "no figures yet"
    )
    if state.link == "connecting":
        return f"Connecting to the broker… ({shown})"
    if state.link == "down":
        if state.refused and state.reason:
            return f"The broker refused the connection: {state.reason}; showing {shown}"
        if state.unknown_host and state.reason:
            said = state.reason[:1].upper() + state.reason[1:]
            return f"{said}: check the broker's address; showing {shown}"
        why = f" ({state.reason})" if state.reason else ""
        since = (
            f" since {local_clock(state.down_since, zone)}" if state.down_since is not None else ""
        )
        at = f" at {state.broker_url}" if state.broker_url else ""
        return f"Broker unreachable{at}{since}{why}; showing {shown}"
    if state.aggregator_online is False:
        return f"The aggregator is offline; showing {shown}"
    if state.status_ts is None:
        if state.link == "standalone":
            return None
        if monotonic is not None and unheard(state, monotonic, after_s=no_aggregator_after_s):
            return (
                f"No aggregator for event {state.event_id} on {state.broker_url}: "
                "check --event (and --broker)"
            )
        return "Waiting for the aggregator's first status…"
    age = _status_age(state, now, monotonic)
    if age > stale_after_s:
        return f"No status for {fmt_age(age)}; showing {shown}"
    return None


def _status_age(state: ConnectionState, now: datetime, monotonic: float | None) -> float:
    """How old the last status is, in real seconds.

    On the wall clock, by its ``ts`` (and its arrival) against the local clock. On a
    simulated clock (the demo, a replay: ``simulated``) its ``ts`` is the simulation's
    time, which stops when the simulated day ends, so only the real time since it
    arrived counts: a finished simulation is not an outage, a silent aggregator is.
    """
    real = (
        monotonic - state.received_mono
        if monotonic is not None and state.received_mono is not None
        else None
    )
    if state.simulated and real is not None:
        return real
    assert state.status_ts is not None
    age = (now - state.status_ts).total_seconds()
    if state.received_at is not None:
        age = max(age, (now - state.received_at).total_seconds())
    return age if real is None else max(age, real)
