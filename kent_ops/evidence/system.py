"""The service's own records (kind ``system``): one frozen Struct per event, a tagged union.

Why a tagged union: every system record always said what it is in its ``"event"`` field,
so that field is msgspec's tag. One decode then gives the Struct of that event, its
fields typed, and a reader asks ``isinstance`` instead of matching bytes or picking at a
dict; a writer builds the Struct by keyword and cannot misspell a field. What each event
means is in docs/protocol.md ("The evidence log").

**Written** through :func:`encode_system` only (:meth:`EvidenceLog.append_system
<kent_ops.evidence.log.EvidenceLog.append_system>`): the Struct as plain values, then
:func:`~kent_ops.evidence.records.json_bytes`, the canonical JSON every system record was
always written in (keys sorted, compact, UTF-8), so each record's bytes are those the
service wrote before these Structs existed, and every existing log verifies and reads as
before. (msgspec's own encoder is not used for the bytes: it writes fields in their
declared order.) Times are fields of text, as the records hold them.

**Read** through :func:`read_system` (a replay does it once per record and hands the
Struct on in :attr:`~kent_ops.evidence.replay.Replayed.system`). Reading is as lenient
as it always was: every field has a default, so a record that lacks a field (an older
log's ``started``, written before the session and the snapshot were recorded; a
hand-made log's) still reads as its event; a payload that is not JSON, not an object or
names an event this program does not know reads as None (so does a checkpoint without
its record and hash, which the report always passed over). The service always sets
every field, and tests pin each event's bytes.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec

from kent_ops.evidence.records import json_bytes

__all__ = [
    "SYSTEM_RECORDS",
    "BrokerConnected",
    "BrokerDisconnected",
    "BrokerRestarted",
    "BrokerSessionContested",
    "BrokerSessionLost",
    "BrokerUptime",
    "CheckpointRead",
    "Checkpointed",
    "Claim",
    "ClockAgrees",
    "ClockJump",
    "FloodCountLost",
    "FloodStarted",
    "FloodSummary",
    "Opened",
    "PermitChanged",
    "RollbackAccepted",
    "RollbackFound",
    "Started",
    "Stopped",
    "StorageError",
    "SystemRecord",
    "VerificationFailed",
    "decode_system",
    "encode_system",
    "figures",
    "read_system",
]


class Claim(msgspec.Struct, frozen=True):
    """A record number and hash that the log once had, and who says so (the broker's
    retained checkpoint, or the head file beside the log)."""

    record: int
    hash: str
    ts: str | None = None
    source: str = ""


class SystemRecord(msgspec.Struct, frozen=True, kw_only=True, tag_field="event"):
    """What every system record is: its event's name is its tag (``"event"``).

    Subclasses repeat ``frozen`` and ``kw_only``: msgspec inherits them, but a type
    checker reads each class's own keywords only (PEP 681)."""

    @property
    def event(self) -> str:
        """The event's name, as the record's ``"event"`` field holds it."""
        return str(self.__struct_config__.tag)


class Opened(SystemRecord, frozen=True, kw_only=True, tag="opened"):
    """Record 1: the log opened for this event under this permit (the meta table's twin)."""

    event_id: str = ""
    permit_sha256: str = ""


class PermitChanged(SystemRecord, frozen=True, kw_only=True, tag="permit-changed"):
    """The log was continued under another permit file than the one it was opened with."""

    permit_sha256: str = ""
    opened_with: str | None = None


class Started(SystemRecord, frozen=True, kw_only=True, tag="started"):
    """The service started (or restarted) on this log; ``clock`` is how a replay runs it."""

    version: str = ""
    clock: str | None = None
    session: str | None = None
    session_keyed_by: str | None = None
    checkpoint: Claim | str | None = None
    """The broker's retained checkpoint as read at the start, ``unread: …``, or None."""
    broker: str = ""
    permit_sha256: str = ""
    signed: bool = False
    replayed: int = 0
    snapshot: int | None = None
    snapshot_refused: str | None = None


class Stopped(SystemRecord, frozen=True, kw_only=True, tag="stopped"):
    """A clean stop (the engine's whole state follows it)."""


class BrokerConnected(SystemRecord, frozen=True, kw_only=True, tag="broker-connected"):
    broker: str = ""
    session_present: bool = False


class BrokerDisconnected(SystemRecord, frozen=True, kw_only=True, tag="broker-disconnected"):
    broker: str = ""
    reason: str = ""


class BrokerUptime(SystemRecord, frozen=True, kw_only=True, tag="broker-uptime"):
    """How long the broker had been running, as it said after a (re)connection (Mosquitto's
    ``$SYS/broker/uptime``): its start is the record's time less this."""

    uptime_s: float = 0.0


class BrokerRestarted(SystemRecord, frozen=True, kw_only=True, tag="broker-restarted"):
    """The broker restarted since the aggregator last saw it: what it acknowledged since
    its last save may be lost. A replay feeds it to the engine where it stands (every
    sensor in doubt until heard again), as the live service did."""

    how: str = ""
    uptime_s: float = 0.0
    previous_uptime_s: float | None = None
    """The uptime the aggregator saw before (None: it knew only that it was connected)."""
    previous_at: str | None = None
    """When it saw that."""


class Checkpointed(SystemRecord, frozen=True, kw_only=True, tag="checkpoint"):
    """A checkpoint the service published: the head before this record (the report has
    always passed over one without its record and hash: they are required)."""

    record: int
    hash: str
    ts: str | None = None


class CheckpointRead(SystemRecord, frozen=True, kw_only=True, tag="checkpoint-read"):
    """The broker answered late with its retained checkpoint (or that it holds none)."""

    retained: Claim | str | None = None


class StorageError(SystemRecord, frozen=True, kw_only=True, tag="storage-error"):
    """The disk refused commits from ``since`` on; ``held`` messages waited meanwhile."""

    error: str | None = None
    since: str = ""
    held: int = 0


class VerificationFailed(SystemRecord, frozen=True, kw_only=True, tag="verification-failed"):
    """The whole chain, verified beside the service, does not verify at ``record``."""

    record: int | None = None
    problem: str | None = None


class BrokerSessionLost(SystemRecord, frozen=True, kw_only=True, tag="broker-session-lost"):
    """The broker no longer held the session the log shows (also the alert's figures)."""

    cause: str = "session-new"
    session_present: bool = False
    changed_id: bool = False
    previous_session: str | msgspec.UnsetType = msgspec.UNSET
    """The fingerprint of the session the log last used, when known."""


class BrokerSessionContested(
    SystemRecord, frozen=True, kw_only=True, tag="broker-session-contested"
):
    """The broker closed the connection again and again (also the alert's figures)."""

    cause: str = "disconnects"
    count: int = 0
    within_s: float = 0.0


class RollbackFound(SystemRecord, frozen=True, kw_only=True, tag="rollback-found"):
    """The log holds ``records`` records and is behind ``claim``."""

    records: int = 0
    claim: Claim | None = None


class RollbackAccepted(SystemRecord, frozen=True, kw_only=True, tag="rollback-accepted"):
    """As :class:`RollbackFound`, and the operator accepted it (``--accept-rollback``)."""

    records: int = 0
    claim: Claim | None = None


class ClockJump(SystemRecord, frozen=True, kw_only=True, tag="clock-jump"):
    """The host clock disagrees with the service's by more than a few seconds."""

    jump_s: float = 0.0
    host_clock: str = ""
    service_clock: str = ""


class ClockAgrees(SystemRecord, frozen=True, kw_only=True, tag="clock-agrees"):
    """The host clock agrees with the service's again."""

    jump_s: float = 0.0
    host_clock: str = ""
    service_clock: str = ""


class FloodStarted(SystemRecord, frozen=True, kw_only=True, tag="flood-started"):
    """A source went over its budget for rejected records; ``alert`` was raised."""

    source: str = ""
    since: str = ""
    budget_bytes: int = 0
    period_s: float = 0.0
    alert: str = ""


class FloodSummary(SystemRecord, frozen=True, kw_only=True, tag="flood-summary"):
    """A source's rejected messages counted, not stored: how many, their sizes, a hash."""

    source: str = ""
    first_at: str = ""
    last_at: str = ""
    messages: int = 0
    size: int = msgspec.field(default=0, name="bytes")
    largest: int = 0
    sha256: str = ""
    reasons: dict[str, int] = msgspec.field(default_factory=dict)
    topics: dict[str, int] = msgspec.field(default_factory=dict)
    alert: str | None = None


class FloodCountLost(SystemRecord, frozen=True, kw_only=True, tag="flood-count-lost"):
    """A run stopped abruptly during a flood: what it counted since its last summary."""

    source: str = ""
    alert: str = ""
    why: str = ""


SYSTEM_RECORDS: tuple[type[SystemRecord], ...] = (
    Opened,
    PermitChanged,
    Started,
    Stopped,
    BrokerConnected,
    BrokerDisconnected,
    BrokerUptime,
    BrokerRestarted,
    Checkpointed,
    CheckpointRead,
    StorageError,
    VerificationFailed,
    BrokerSessionLost,
    BrokerSessionContested,
    RollbackFound,
    RollbackAccepted,
    ClockJump,
    ClockAgrees,
    FloodStarted,
    FloodSummary,
    FloodCountLost,
)
"""Every event a system record may be (docs/protocol.md lists them)."""

_DECODER = msgspec.json.Decoder(Union[SYSTEM_RECORDS])  # noqa: UP007 - a runtime tuple


def encode_system(record: SystemRecord) -> bytes:
    """A system record's payload: canonical JSON (see the module docstring)."""
    return json_bytes(msgspec.to_builtins(record))


def figures(record: SystemRecord) -> dict[str, Any]:
    """The record's fields as plain values, without its event (an alert's figures), in
    their declared order."""
    body = msgspec.to_builtins(record)
    del body["event"]
    return body


def decode_system(payload: bytes) -> SystemRecord:
    """The system record a payload holds.

    Raises:
        msgspec.ValidationError: JSON, but no system record this program knows.
        msgspec.DecodeError: not JSON at all.
    """
    return _DECODER.decode(payload)


def read_system(payload: bytes) -> SystemRecord | None:
    """The system record a payload holds, or None if it holds none this program knows."""
    try:
        return _DECODER.decode(payload)
    except msgspec.DecodeError:  # also a ValidationError
        return None
