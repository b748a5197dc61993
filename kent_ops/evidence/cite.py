"""An alert's evidence hash, filled in from the log by whoever logs or shows the alert.

The engine cites the evidence record an alert's condition started at by its id only
(``evidence.record``, ``evidence.hash`` None): hashes belong to the log, not to the
rules. The service fills the hash in when it writes and publishes an alert (from
:meth:`kent_ops.evidence.log.EvidenceLog.hash_of`, which also sees records not yet
committed), and the report from the verified file; both with :func:`with_hash`, so a
published alert, its logged record and the report's finding carry the same hash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec

from kent_ops.core import wire

__all__ = ["cited_records", "with_hash"]


def with_hash(alert: wire.Alert, hash_of: Callable[[int], str | None]) -> wire.Alert:
    """The alert with the hash of the record it cites; the alert itself if it cites none."""
    evidence = alert.evidence
    if evidence.record is None or evidence.hash is not None:
        return alert
    cited = wire.EvidenceRef(record=evidence.record, hash=hash_of(evidence.record))
    return msgspec.structs.replace(alert, evidence=cited)


def cited_records(alerts: Iterable[wire.Alert]) -> set[int]:
    """The ids of the records these alerts cite without a hash yet."""
    return {
        a.evidence.record
        for a in alerts
        if a.evidence.record is not None and a.evidence.hash is None
    }
