"""What one flush appends, and in which order: the worker's one path to the disk, planned.

Everything the service decides reaches the disk and then the broker through
:meth:`kent_ops.service.worker.Worker.flush`: record time → collect the engine's changes
→ append → commit → acknowledge → publish. What differs between a batch of messages, a
timer, the first commit, a probe of a refusing disk and the stop is only what gets
appended, and that is a :class:`FlushPlan`, named for its occasion (:meth:`FlushPlan.batch`,
:meth:`FlushPlan.due`, …). :func:`append_plan` appends it after anything already
appended (a batch's messages), always in this order:

1. a ``tick`` record, if the engine's time was let pass and a record follows it (the
   engine's time, written down: see :mod:`kent_ops.service.worker`);
2. the plan's ``lead``: the service's own records and alerts (a flood, a session lost,
   a clock jump, a storage outage …);
3. the engine's alert changes (their evidence hash filled) and gate commands;
4. a status snapshot; a checkpoint (the head before it);
5. the plan's ``tail`` (the ``stopped`` record);
6. the engine's whole state (a ``snapshot`` record) and, after it, the active flood
   alerts, which a restart replays from the tail.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec

from kent_ops.core import wire
from kent_ops.core.engine import Changes
from kent_ops.core.wire import Topics
from kent_ops.evidence.cite import with_hash
from kent_ops.evidence.log import EvidenceLog, EvidenceWriteError, format_time, json_bytes
from kent_ops.evidence.system import Checkpointed, Stopped, SystemRecord
from kent_ops.service.rhythm import Due

__all__ = [
    "EngineState",
    "FlushPlan",
    "Flushed",
    "Lead",
    "Written",
    "append_lead",
    "append_plan",
    "append_tick",
    "publish_written",
]

log = logging.getLogger("aggregator")

Lead = SystemRecord | wire.Alert
"""A record a flush appends ahead of the engine's changes: the service's own, or an alert."""


@dataclass(frozen=True, slots=True)
class FlushPlan:
    """What one flush appends besides what is appended already; see the module docstring.

    Attributes:
        lead: the service's own records and alerts, ahead of the engine's changes.
        status: a status snapshot.
        checkpoint: a checkpoint record (published after the commit).
        tail: system records after the checkpoint.
        state: the engine's whole state, last.
        collect: collect the engine's changes (not while a refusing disk is probed: the
            engine was rebuilt from the log and holds nothing unlogged).
        acks: the messages to acknowledge once the commit is on disk.
    """

    lead: Sequence[Lead] = ()
    status: bool = False
    checkpoint: bool = False
    tail: Sequence[SystemRecord] = ()
    state: bool = False
    collect: bool = True
    acks: Sequence[tuple[int, int]] = ()

    @classmethod
    def batch(cls, acks: Sequence[tuple[int, int]], lead: Sequence[Lead]) -> FlushPlan:
        """A batch of messages (appended already): what it changed, then acknowledge it."""
        return cls(lead=lead, acks=acks)

    @classmethod
    def start(cls, lead: Sequence[Lead], *, state: bool) -> FlushPlan:
        """The first commit: the start's records and a status (and the engine's state after
        a replay of the whole log, so the next start need not)."""
        return cls(lead=lead, status=True, state=state)

    @classmethod
    def due(cls, due: Due, lead: Sequence[Lead]) -> FlushPlan:
        """The timers: a status snapshot, a checkpoint, the engine's state, when due."""
        return cls(lead=lead, status=due.snapshot, checkpoint=due.checkpoint, state=due.engine)

    @classmethod
    def probe(cls, lead: Sequence[Lead]) -> FlushPlan:
        """A refusing disk probed with the outage's records, the engine left alone."""
        return cls(lead=lead, collect=False)

    @classmethod
    def stop(cls, lead: Sequence[Lead]) -> FlushPlan:
        """A clean stop: a status, the ``stopped`` record, the engine's state."""
        return cls(lead=lead, status=True, tail=(Stopped(),), state=True)

    def writes(self, changes: Changes) -> bool:
        """Whether a record of the service's own is appended (a tick then goes first)."""
        return bool(changes) or any(
            (self.lead, self.status, self.checkpoint, self.tail, self.state)
        )


@dataclass(frozen=True, slots=True)
class EngineState:
    """The engine's whole state (a ``snapshot`` record's payload) and the active flood
    alerts logged after it."""

    snapshot: bytes
    alerts: Sequence[wire.Alert] = ()


@dataclass(frozen=True, slots=True)
class Written:
    """What a flush appended that is published after its commit."""

    alerts: list[wire.Alert]
    commands: dict[str, wire.GateCommand]
    point: wire.Checkpoint | None


@dataclass(frozen=True, slots=True)
class Flushed:
    """What one flush did: its record time, and the disk's refusal if any."""

    now: datetime
    refused: EvidenceWriteError | None = None
    changed: bool = False


def append_tick(evidence: EvidenceLog, at: datetime, engine_time: datetime) -> None:
    """The engine's time, written down: a replay ticks its engine exactly there."""
    evidence.append_json("tick", at, {"engine_time": format_time(engine_time)})


def append_lead(evidence: EvidenceLog, at: datetime, lead: Sequence[Lead]) -> None:
    """Append the service's own records and alerts, in order."""
    for obj in lead:
        if isinstance(obj, wire.Alert):
            evidence.append("alert", at, payload=wire.encode(obj))
        else:
            evidence.append_system(at, obj)


def append_plan(
    evidence: EvidenceLog,
    plan: FlushPlan,
    changes: Changes,
    now: datetime,
    *,
    tick_at: datetime | None,
    status: wire.Status | None,
    state: EngineState | None,
) -> Written:
    """Append what ``plan`` says, in the module docstring's order, at ``now``.

    ``tick_at`` is the engine's time when it was let pass (None: it was not); ``status``
    and ``state`` are the engine's, taken after its changes were collected, when the
    plan asks for them.
    """
    alerts = [with_hash(a, evidence.hash_of) for a in changes.alerts]
    if tick_at is not None and plan.writes(changes):
        append_tick(evidence, now, tick_at)
    append_lead(evidence, now, plan.lead)
    for alert in alerts:
        evidence.append("alert", now, payload=wire.encode(alert))
    for gate, command in changes.commands.items():
        body = {"gate": gate, "command": msgspec.to_builtins(command)}
        evidence.append("command", now, payload=json_bytes(body))
    if status is not None:
        evidence.append("status", now, payload=wire.encode(status))
    point = None
    if plan.checkpoint:
        count, head = evidence.head
        point = wire.Checkpoint(record=count, hash=head, ts=now)
        ts = now.isoformat()
        evidence.append_system(now, Checkpointed(record=count, hash=head, ts=ts))
    for record in plan.tail:
        evidence.append_system(now, record)
    if state is not None:
        evidence.append("snapshot", now, payload=state.snapshot)
        for alert in state.alerts:
            evidence.append("alert", now, payload=wire.encode(alert))
    return Written(alerts, changes.commands, point)


def publish_written(
    publish: Callable[[str, bytes], None], topics: Topics, written: Written
) -> None:
    """Publish what a committed flush wrote: alert changes, gate commands, a checkpoint."""
    for alert in written.alerts:
        publish(topics.alert(alert.id), wire.encode(alert))
        log.info("alert %s %s %s: %s", alert.id, alert.rule, alert.state, alert.message)
    for gate, command in written.commands.items():
        publish(topics.gate_command(gate), wire.encode(command))
    if written.commands:
        log.info("gate command: %s", next(iter(written.commands.values())).reason)
    if written.point is not None:
        publish(topics.checkpoint, wire.encode(written.point))
