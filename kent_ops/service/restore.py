"""The engine at a start: restored from the log's last snapshot, then the tail replayed.

A restart is the moment everyone is watching (systemd restarts the service after a
crash), and replaying a festival's whole log takes minutes. So the engine is restored
from the last ``snapshot`` record (see :mod:`kent_ops.core.snapshot`) and only the
records after it are fed: the engine then stands exactly where a replay of the whole log
would leave it. A snapshot of another program version, format, permit, clock or keys is
refused, and the whole log is replayed as before. The tail is checked against the chain
as it is read (from the snapshot record on); the whole chain is verified by
:class:`kent_ops.evidence.background.BackgroundVerify` while the service serves.

The last logged state of every alert and gate command is kept for republishing (a crash
between a commit and its publish would otherwise leave the broker's retained copy one
state behind for good): those in the tail as logged, the rest as the restored engine
holds them.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from kent_ops.core import wire
from kent_ops.core.engine import Clock, Engine
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit
from kent_ops.core.snapshot import SnapshotRefused, read_header
from kent_ops.core.wire import Topics, keys_for_permit
from kent_ops.evidence.cite import cited_records, with_hash
from kent_ops.evidence.log import ChainBroken, json_bytes
from kent_ops.evidence.replay import Replayed, last_snapshot, record_hashes, replay
from kent_ops.evidence.system import VerificationFailed
from kent_ops.service.storage_outage import StorageOutage

__all__ = ["Rebuilt", "rebuild"]

log = logging.getLogger("aggregator")


@dataclass(slots=True)
class Rebuilt:
    """An engine standing where the log leaves it, and what to republish."""

    engine: Engine
    messages: int
    """How many message records were fed (the tail's, after a snapshot)."""
    recorded_clock: str | None
    retained: dict[str, bytes] = field(default_factory=dict)
    snapshot: int | None = None
    """The snapshot record the engine was restored from; None: the whole log was fed."""
    refused: str | None = None
    """Why the log's last snapshot was not used, if it has one that was not."""


def rebuild(
    permit: Permit, path: Path, clock: Clock, topics: Topics, outage: StorageOutage
) -> Rebuilt:
    """The engine the log proves: from its last usable snapshot, or from its start.

    Alerts and commands the replay produces were already logged, so they are collected
    and discarded; alert ids then continue where they were. Logged ``S-`` alerts (and
    the count the snapshot carries) continue the outage numbering.

    Raises:
        ChainBroken: a record of the tail does not match the chain, or an earlier run
            found the log broken (it logged so): the service must not start on it.
    """
    retained: dict[str, bytes] = {}
    resume: tuple[Engine, int] | None = None
    refused: str | None = None
    found = last_snapshot(path)
    if found is not None:
        record, data = found
        try:
            engine = Engine.restore(permit, data, clock, _keys(permit))
        except SnapshotRefused as exc:
            refused = f"the snapshot in record {record} was not used: {exc}"
            log.warning("%s; replaying the whole log", refused)
        else:
            issued = read_header(data).service.get("storage_alerts", 0)
            outage.note_issued(issued if isinstance(issued, int) else 0)
            retained = _held(engine, path, topics)
            resume = (engine, record)

    def keep_retained(rec: Replayed, engine: Engine) -> None:
        if rec.kind == "alert":
            alert = wire.decode_json(wire.Alert, rec.payload)
            retained[topics.alert(alert.id)] = rec.payload
            outage.note_logged(alert)  # the service's own S- alerts continue their numbering
        elif rec.kind == "command":
            body = json.loads(rec.payload)  # republished as logged: the log is the truth
            retained[topics.gate_command(body["gate"])] = json_bytes(body["command"])
        elif isinstance(rec.system, VerificationFailed):
            _refuse_broken(path, rec.id, rec.system)

    result = replay(
        permit,
        path,
        clock=clock,
        on_record=keep_retained,
        on_message=lambda verdict, engine: False,
        verify=resume is not None,  # the tail here; the whole chain in the background
        resume=resume,
    )
    result.engine.collect_changes()
    snapshot = None if resume is None else resume[1]
    return Rebuilt(
        result.engine, result.messages, result.recorded_clock, retained, snapshot, refused
    )


def _keys(permit: Permit) -> dict[str, bytes] | None:
    try:
        keys = keys_for_permit(permit.signing_keys_file)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return None if keys is None else dict(keys)


def _held(engine: Engine, path: Path, topics: Topics) -> dict[str, bytes]:
    """Every alert and gate command as the restored engine holds them, ready to publish."""
    alerts = engine.alerts
    hashes = record_hashes(path, cited_records(alerts.values()))
    held = {topics.alert(aid): wire.encode(with_hash(a, hashes.get)) for aid, a in alerts.items()}
    if engine.orders.decided:
        for gate, command in engine.commands().items():
            held[topics.gate_command(gate)] = wire.encode(command)
    return held


def _refuse_broken(path: Path, record_id: int, found: VerificationFailed) -> None:
    """An earlier run found the log broken: refuse it at once, as an unverified log is."""
    bad, problem = found.record, found.problem or "it does not verify"
    where = f"record {bad}: " if bad is not None else ""
    raise ChainBroken(
        f"{path} does not verify: {where}{problem} (found by an earlier run, which logged so "
        f"in record {record_id}); keep this file as it is and start a new evidence file",
        bad if bad is not None else record_id,
        problem,
    )
