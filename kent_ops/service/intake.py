"""One received message into the evidence log: fed to the engine, then stored.

Every message is fed and stored in the order received (:meth:`Intake.take`). What the
log keeps of it:

- an accepted message, and one the engine's state rejects, whole, as a ``message``
  record: it is the evidence, and a replay needs every byte of it;
- a message rejected for its size (over 64 KiB) in part: its first 1,024 bytes, its
  size and SHA-256 in the reason (:func:`kent_ops.evidence.records.excerpt`);
- once its source used its budget for rejected records in this period, a message the
  decoder alone rejects is not fed or stored but counted into the source's summary
  (:mod:`kent_ops.service.flood`). The engine never decodes it, live or on replay; it
  only counts it among the rejected (a replay, from the summary record).

Should the engine raise on a message after all, the message is stored as rejected with
the exception's name (:func:`kent_ops.evidence.replay.engine_failure`) and acknowledged:
one message must not stop the service at every restart.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime

from kent_ops.core import wire
from kent_ops.core.engine import Engine, FeedResult
from kent_ops.evidence.log import EvidenceLog
from kent_ops.evidence.records import excerpt
from kent_ops.evidence.replay import engine_failure
from kent_ops.service.flood import RECORD_OVERHEAD, FloodGuard, source_of

__all__ = ["Intake"]

log = logging.getLogger("aggregator")


class Intake:
    """Feeds each message and appends what the log keeps of it (see the module docstring).

    Args:
        evidence: the open log.
        prefix: the event's topic prefix.
        guard: each source's budget for rejected records.
    """

    def __init__(self, evidence: EvidenceLog, prefix: str, guard: FloodGuard) -> None:
        self.evidence = evidence
        self.prefix = prefix
        self.guard = guard
        self._sensors: Mapping[str, str] | None = None

    def take(self, engine: Engine, topic: str, payload: bytes, received_at: datetime) -> None:
        """Feed one message (or count it) and append its record."""
        guard = self.guard
        if guard.exhausted:
            source = source_of(self.prefix, topic)
            if guard.key(source) in guard.exhausted:
                refused = self._refused_unread(engine, topic, payload)
                if refused is not None:
                    guard.count(source, topic, payload, refused, received_at)
                    engine.rejected += 1  # as a replay adds it from the summary record
                    return
        evidence = self.evidence
        record_id = evidence.head[0] + 1
        try:
            r = engine.feed(topic, payload, received_at, record_id)
        except Exception as exc:  # noqa: BLE001 - one message must not stop the service
            log.exception(
                "the engine raised on record %d (%s); recorded as rejected", record_id, topic
            )
            r = engine_failure(exc, received_at)
        if r.accepted:
            evidence.append(
                "message", received_at, topic=topic, payload=payload, accepted=True, reason=r.reason
            )
            return
        self._rejected(topic, payload, received_at, r)

    def _rejected(self, topic: str, payload: bytes, received_at: datetime, r: FeedResult) -> None:
        stored, reason = payload, r.reason
        if len(payload) > wire.MAX_PAYLOAD_BYTES:
            stored, reason = excerpt(payload, reason or "")
        self.evidence.append(
            "message", received_at, topic=topic, payload=stored, accepted=False, reason=reason
        )
        cost = len(stored) + len(topic) + len(reason or "") + RECORD_OVERHEAD
        self.guard.charge(source_of(self.prefix, topic), cost, received_at)

    def _refused_unread(self, engine: Engine, topic: str, payload: bytes) -> str | None:
        """Why the decoder alone rejects the message (so the engine surely would), or None.

        The same decoding the engine does first, with the same permit and keys; whatever
        it rejects, the engine rejects without looking at its state.
        """
        if self._sensors is None:
            self._sensors = engine.permit.sensors  # the permit's: the same for every engine
        try:
            decoded = wire.decode(self.prefix, self._sensors, topic, payload, engine.keys)
        except Exception:  # noqa: BLE001 - then the engine takes it, and its fault is recorded
            return None
        return decoded.reason if isinstance(decoded, wire.Rejection) else None
