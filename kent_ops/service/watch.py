"""What the service watches about its own evidence: its session, its log's head, its clock.

The worker asks the :class:`Watch` at four points of its one path to the disk, and the
watch answers with records to append (``system`` records and ``S-`` alerts), so every
finding is in the log before anyone is told:

- :meth:`Watch.started`: the first commit: a rollback the operator accepted
  (``--accept-rollback``), a host clock behind the log's time;
- :meth:`Watch.on_event`: after a connection event: a session the broker no longer held
  (``broker-session``), a connection closed again and again, a broker that restarted
  (its uptime: ``broker-restarted``, which the worker hands to the engine), the
  broker's retained checkpoint read late (the broker did not answer at the start);
- :meth:`Watch.due`: each pass of the timers: a host clock jump starting or ending, alerts
  to clear, the head file to rewrite;
- :meth:`Watch.committed` after each commit: the head file, and the alerts just logged
  are published; :meth:`Watch.refused` when the disk refused them instead.

A log found behind the broker's checkpoint only late, without ``--accept-rollback``,
sets :attr:`Watch.fatal`: the worker stops with it (exit 2). :class:`CheckpointGate` keeps
the published checkpoint from ever moving back. A bare ``Watch()`` watches nothing (the
worker's unit tests).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kent_ops.core import wire
from kent_ops.core.errors import KentOpsError
from kent_ops.core.wire import Topics
from kent_ops.evidence.system import (
    BrokerConnected,
    BrokerDisconnected,
    BrokerSessionContested,
    BrokerSessionLost,
    BrokerUptime,
    CheckpointRead,
    RollbackAccepted,
    RollbackFound,
    SystemRecord,
    figures,
)
from kent_ops.service.broker_restart import UptimeWatch
from kent_ops.service.clock import JUMP_S, ClockCheck, ServiceClock, steady
from kent_ops.service.flush import Lead
from kent_ops.service.rollback import (
    Claim,
    HeadFile,
    LogRolledBack,
    behind,
    refusal,
)
from kent_ops.service.service_alerts import ServiceAlerts
from kent_ops.service.session import SessionWatch

__all__ = ["CheckpointGate", "Lead", "StartHead", "Watch"]

log = logging.getLogger("aggregator")


class CheckpointGate:
    """Which checkpoints may be published: none before the broker's retained one was read,
    and never one below it (a lower record, or the same record with another hash)."""

    def __init__(self, floor: Claim | None = None, *, checked: bool = True) -> None:
        self.floor = floor
        self.checked = checked
        self._said = ""

    def allows(self, payload: bytes) -> bool:
        if not self.checked:
            return self._withheld("the broker's retained checkpoint has not been read yet")
        floor = self.floor
        if floor is None:
            return True
        point = wire.decode_json(wire.Checkpoint, payload)
        if point.record > floor.record or (point.record, point.hash) == (floor.record, floor.hash):
            self.floor = None  # passed: the log only grows from here
            return True
        return self._withheld(f"the broker retains a checkpoint at record {floor.record:,}")

    def _withheld(self, why: str) -> bool:
        if why != self._said:
            log.warning("checkpoint not published: %s", why)
            self._said = why
        return False


@dataclass(frozen=True, slots=True)
class StartHead:
    """The log as it stood at the start, for a retained checkpoint read only later."""

    path: Path
    count: int
    hash_of: Callable[[int], str | None]
    accept: bool
    head_file: Path


def rollback_records(
    head: StartHead, claim: Claim, alerts: ServiceAlerts, at: datetime
) -> list[Lead]:
    """The record and the ``evidence-rollback`` alert of a log found behind ``claim``."""
    kind = RollbackAccepted if head.accept else RollbackFound
    observed = {"records": head.count, "source": claim.source, "accepted": head.accept}
    required = {"record": claim.record, "hash": claim.hash}
    alert = alerts.raise_("evidence-rollback", observed, required, at)
    log.error("EVIDENCE ROLLED BACK: %s", alert.message)
    return [kind(records=head.count, claim=claim), alert]


class Watch:
    """See the module docstring. Every part is optional."""

    def __init__(
        self,
        *,
        topics: Topics | None = None,
        publish: Callable[[str, bytes], None] | None = None,
        alerts: ServiceAlerts | None = None,
        clock: ServiceClock | None = None,
        session: SessionWatch | None = None,
        head_file: HeadFile | None = None,
        gate: CheckpointGate | None = None,
        start: StartHead | None = None,
        found: list[Claim] | tuple[Claim, ...] = (),
        clock_at_start: ClockCheck | None = None,
        leftover: list[wire.Alert] | tuple[wire.Alert, ...] = (),
        mono: Callable[[], float] = steady,
        uptime: UptimeWatch | None = None,
    ) -> None:
        self.topics = topics
        self.publish = publish
        self.alerts = alerts
        self.clock = clock
        self.session = session
        self.head_file = head_file
        self.gate = gate or CheckpointGate()
        self.start = start
        self.found = list(found)
        self.clock_at_start = clock_at_start
        self.leftover = list(leftover)
        """Service alerts a crashed run left open: cleared at the start."""
        self.mono = mono
        self.uptime = uptime
        """The broker's uptime against the broker seen before (None: not watched)."""
        self.fatal: KentOpsError | None = None
        """A reason to stop (a log found behind its checkpoint late, not accepted)."""
        self._queued: list[wire.Alert] = []

    # -- the worker's four points ------------------------------------------------------------

    def started(self, at: datetime) -> list[Lead]:
        """Records for the first commit: open alerts of a crashed run cleared, accepted
        rollbacks, a clock behind the log."""
        lead: list[Lead] = []
        if self.alerts is None:
            return lead
        lead += [self.alerts.cleared(alert, at) for alert in self.leftover]
        if self.start is not None:
            for claim in self.found:
                lead += rollback_records(self.start, claim, self.alerts, at)
        if self.clock_at_start is not None:
            lead += self._clock_records(self.clock_at_start, at)
        return self._queue(lead)

    def on_event(self, event: SystemRecord, at: datetime) -> list[Lead]:
        """Records after one of the service's own events (already appended)."""
        lead: list[Lead] = []
        if isinstance(event, BrokerUptime) and self.uptime is not None:
            restarted = self.uptime.read(event.uptime_s, at)
            if restarted is not None:
                log.error("BROKER RESTARTED: %s; what it acknowledged may be lost", restarted.how)
                lead.append(restarted)
            return lead
        if self.alerts is None:
            return lead
        session = self.session
        if isinstance(event, BrokerConnected) and session is not None:
            if self.head_file is not None:
                self.head_file.note_session(session.fingerprint)
            lost = session.connected(event.session_present)
            if lost is not None:
                lead = self._session_records(lost, at)
        elif isinstance(event, BrokerDisconnected) and session is not None:
            contested = session.disconnected(self.mono())
            if contested is not None:
                lead = self._session_records(contested, at)
        elif isinstance(event, CheckpointRead):
            lead = self._late_checkpoint(event.retained, at)
        return self._queue(lead)

    def due(self, at: datetime) -> list[Lead]:
        """The timers' records: a clock jump starting or ending, alerts clearing."""
        if self.head_file is not None:
            self.head_file.sync(self.mono())
        if self.alerts is None:
            return []
        lead: list[Lead] = []
        check = self.clock.check() if self.clock is not None else None
        if check is not None:
            lead += self._clock_records(check, at)
        lead += self.alerts.due(at)
        return self._queue(lead)

    def closing(self, at: datetime) -> list[Lead]:
        """A clean stop: every open alert clears."""
        if self.alerts is None:
            return []
        return self._queue(list(self.alerts.close_all(at)))

    def committed(self, head: tuple[int, str], at: datetime, *, final: bool = False) -> None:
        """After a commit: the head file, then the alerts it held go out."""
        if self.head_file is not None:
            self.head_file.committed(head, at, self.mono())
            if final:
                self.head_file.sync(self.mono(), force=True)
        queued, self._queued = self._queued, []
        if self.publish is None or self.topics is None:
            return
        for alert in queued:
            self.publish(self.topics.alert(alert.id), wire.encode(alert))

    def refused(self) -> None:
        """The disk refused the commit: what it held is not published."""
        self._queued = []

    # -- parts -------------------------------------------------------------------------------

    def _queue(self, lead: list[Lead]) -> list[Lead]:
        self._queued += [obj for obj in lead if isinstance(obj, wire.Alert)]
        return lead

    def _session_records(
        self, record: BrokerSessionLost | BrokerSessionContested, at: datetime
    ) -> list[Lead]:
        assert self.alerts is not None
        observed = figures(record)
        alert = self.alerts.raise_("broker-session", observed, {"session_present": True}, at)
        log.error("BROKER SESSION: %s", alert.message)
        return [record, alert]

    def _clock_records(self, check: ClockCheck, at: datetime) -> list[Lead]:
        assert self.alerts is not None
        lead: list[Lead] = [check.record()]
        jump = {"jump_s": round(check.jump_s, 1)}
        ended = self.alerts.end("clock-jump", at, {**jump, "agrees": not check.jumped})
        lead += ended
        if check.jumped:
            observed = {
                **jump,
                "host_clock": check.wall.isoformat(),
                "service_clock": check.service.isoformat(),
            }
            required = {"jump_s_at_most": JUMP_S}
            alert = self.alerts.raise_("clock-jump", observed, required, at, momentary=False)
            log.warning("HOST CLOCK: %s", alert.message)
            lead.append(alert)
        else:
            log.warning("the host clock agrees with the service's clock again")
        return lead

    def _late_checkpoint(self, retained: Claim | str | None, at: datetime) -> list[Lead]:
        """The broker answered at last: is the log (as it stood at the start) behind it?"""
        claim = retained if isinstance(retained, Claim) else None
        start = self.start
        self.gate.checked = True
        if claim is None or start is None or not behind(start.count, start.hash_of, claim):
            return []
        assert self.alerts is not None
        lead = rollback_records(start, claim, self.alerts, at)
        if start.accept:
            self.gate.floor = claim
        else:
            self.fatal = LogRolledBack(refusal(start.path, start.count, claim, start.head_file))
        return lead
