"""The whole chain of a log continued on trust, verified beside the running service.

A restart starts from the last engine snapshot and serves within seconds; meanwhile a
second process (:class:`kent_ops.evidence.background.BackgroundVerify`) recomputes the
whole chain. :class:`ChainCheck` is what the worker asks, once per loop: nothing yet,
or (once) that the log does not verify, with the ``evidence-storage`` alert naming the
first bad record, the system record saying so, and the status to publish. The worker
then logs and publishes them and stops: the service exits 1 rather than go on over a
broken log, and the next start refuses the log at once (it finds that record).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import NamedTuple

import msgspec

from kent_ops.core import wire
from kent_ops.evidence.background import BackgroundVerify
from kent_ops.evidence.log import ChainBroken
from kent_ops.evidence.system import VerificationFailed
from kent_ops.service.storage_outage import StorageOutage

__all__ = ["Broken", "ChainCheck"]

log = logging.getLogger("aggregator")


class Broken(NamedTuple):
    """The log does not verify: what to log, publish and stop with."""

    alert: wire.Alert
    event: VerificationFailed
    error: ChainBroken
    health: wire.EvidenceHealth

    def status(self, status: wire.Status) -> wire.Status:
        """The status saying the log is broken, with the alert among the active ones."""
        active = [*status.active_alerts, self.alert.id]
        return msgspec.structs.replace(status, evidence=self.health, active_alerts=active)


class ChainCheck:
    """The background verification of one log, as the worker watches it."""

    def __init__(
        self, verifier: BackgroundVerify | None, outage: StorageOutage, path: Path
    ) -> None:
        self.verifier = verifier
        """None: nothing to verify (a new log, or verified already)."""
        self.outage = outage
        self.path = path

    def poll(self) -> Broken | None:
        """None while it runs, and once it says OK; the findings if the chain is broken."""
        verifier = self.verifier
        if verifier is None:
            return None
        result = verifier.poll()
        if result is None:
            return None
        self.verifier = None
        if result.ok:
            log.info(
                "evidence verified in the background: OK %d records, head %s (the walk took "
                "%.1f s)",
                result.count,
                result.head_hash[:16],
                verifier.seconds or 0.0,
            )
            return None
        record, problem = result.first_bad, result.problem or "it does not verify"
        error = f"record {record}: {problem}" if record is not None else problem
        log.error("EVIDENCE LOG BROKEN: %s does not verify: %s; stopping", self.path, error)
        alert = self.outage.broken(record, problem)
        return Broken(
            alert,
            VerificationFailed(record=record, problem=problem),
            ChainBroken(f"{self.path} does not verify: {error}", record, problem),
            wire.EvidenceHealth(ok=False, error=error, since=alert.since, held=0),
        )

    def stop(self) -> None:
        """End the verification if it still runs (a stop does not wait for it)."""
        if self.verifier is not None:
            self.verifier.stop()
            self.verifier = None
