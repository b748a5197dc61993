"""The aggregator's broker session: an id only its own credentials make, and a watch on it.

The broker keeps what arrives while the aggregator is away in its persistent session,
found by client id alone. Mosquitto 2.0 lets any account connect with any client id
(a client id is not bound to a user name), and a connection with the aggregator's id
kicks the aggregator off and takes its queue, or wipes it with a clean session. A fixed
id such as ``kent-ops-aggregator-{event}`` let a gate counter's account do exactly that.

So the id is derived from a secret (:func:`session_identity`): an HMAC of the event
and the user name, keyed with the aggregator's broker password, or, on a broker
without passwords, with a random key kept beside the evidence log
(``kent-ops-{event}.session-key``, mode 600). Only whoever holds that secret can name
the session; the log, the service's own log lines and the records show only a short
fingerprint of it. Over plain ``mqtt://`` the id crosses the network in clear, like the
password: use TLS where anyone else shares the network.

:class:`SessionWatch` is what the service concludes from its connection events: a
session found new where the log shows one before (the ``broker-session`` alert), and
a connection closed again and again (another client using the session).
"""

from __future__ import annotations

import sqlite3
from collections import deque
from pathlib import Path

import msgspec

from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.session_id import Session, secret_client_id
from kent_ops.core.errors import UsageError
from kent_ops.evidence.records import connect_ro
from kent_ops.evidence.system import (
    BrokerConnected,
    BrokerSessionContested,
    BrokerSessionLost,
    read_system,
)

__all__ = [
    "DISCONNECTS",
    "WITHIN_S",
    "Session",
    "SessionWatch",
    "connected_before",
    "session_identity",
]

DISCONNECTS = 3
"""This many connections closed by the broker within :data:`WITHIN_S` raise the alert."""
WITHIN_S = 60.0


def session_identity(event_id: str, address: BrokerAddress, folder: Path) -> Session:
    """The aggregator's client id for this event, keyed with its password or a key file.

    Raises:
        UsageError: the key file beside the log cannot be read or made (one sentence).
    """
    return secret_client_id("aggregator", event_id, address, folder)


def connected_before(evidence_path: Path) -> bool:
    """Whether the log records a connection to the broker (a log without a head file:
    one written before there was one). Read from the end, so usually quick."""
    try:
        conn = connect_ro(evidence_path)
    except UsageError:
        return False
    try:
        rows = conn.execute("SELECT payload FROM records WHERE kind = 'system' ORDER BY id DESC")
        return any(isinstance(read_system(payload), BrokerConnected) for (payload,) in rows)
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


class SessionWatch:
    """What the connection events say about the session.

    Args:
        fingerprint: this run's session fingerprint.
        expected: the log shows an earlier connection (a session the broker should hold).
        previous: the fingerprint of the session the log last used; ``""`` when the log
            shows a session whose id is not known (a log older than the head file).
    """

    def __init__(self, fingerprint: str, *, expected: bool, previous: str | None) -> None:
        self.fingerprint = fingerprint
        self.expected = expected
        self.previous = previous
        self._closed: deque[float] = deque()
        self._quiet_until = 0.0

    def connected(self, session_present: bool) -> BrokerSessionLost | None:
        """A connection: the record (its figures the alert's) if the session was lost."""
        lost = None
        if not session_present and self.expected:
            changed = self.previous is not None and self.previous != self.fingerprint
            lost = BrokerSessionLost(
                cause="session-new",
                session_present=False,
                changed_id=changed,
                previous_session=self.previous or msgspec.UNSET,
            )
        self.expected = True
        self.previous = self.fingerprint
        return lost

    def disconnected(self, mono: float) -> BrokerSessionContested | None:
        """A connection the broker closed: the record if it keeps happening."""
        closed = self._closed
        closed.append(mono)
        while closed and closed[0] < mono - WITHIN_S:
            closed.popleft()
        if len(closed) < DISCONNECTS or mono < self._quiet_until:
            return None
        self._quiet_until = mono + WITHIN_S  # once a minute while it goes on
        return BrokerSessionContested(cause="disconnects", count=len(closed), within_s=WITHIN_S)
