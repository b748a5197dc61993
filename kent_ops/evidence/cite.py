"""An alert's evidence hash, filled in from the log by whoever logs or shows the alert.

The engine cites the evidence record an alert's condition started at by its id only
(``"evidence": {"record": N, "hash": None}``): hashes belong to the log, not to the
rules. The service fills the hash in when it writes and publishes an alert (from
:meth:`kent_ops.evidence.log.EvidenceLog.hash_of`, which also sees records not yet
committed), and the report from the verified file; both with :func:`with_hash`, so a
published alert, its logged record and the report's finding carry the same hash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["cited_records", "with_hash"]


def with_hash(alert: dict[str, Any], hash_of: Callable[[int], str | None]) -> dict[str, Any]:
    """The alert with the hash of the record it cites; the alert itself if it cites none."""
    evidence = alert.get("evidence") or {}
    record = evidence.get("record")
    if record is None or evidence.get("hash") is not None:
        return alert
    return {**alert, "evidence": {**evidence, "hash": hash_of(record)}}


def cited_records(alerts: Iterable[Mapping[str, Any]]) -> set[int]:
    """The ids of the records these alerts cite without a hash yet."""
    out: set[int] = set()
    for alert in alerts:
        evidence = alert.get("evidence") or {}
        if evidence.get("record") is not None and evidence.get("hash") is None:
            out.add(evidence["record"])
    return out
