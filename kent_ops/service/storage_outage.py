"""The evidence-storage outage: what the service does while its log cannot be written.

A field laptop's disk fills up, or its USB stick turns read-only. The service must
then hold every message unacknowledged (the broker keeps them), say so loudly, and
retry until the disk takes writes again; nothing unrecorded may move a figure. This
module is the state machine of that outage, with no I/O of its own beyond a log line
and the injected folder probe, so it is tested with a fake clock:

- :meth:`StorageOutage.failed` on every refused commit: the first one starts the
  outage (``since``), numbers a new ``evidence-storage`` alert ``S-000n`` and returns
  it for publishing; each one sets the next retry, backing off from ``retry_first_s``
  by doubling up to ``retry_max_s``;
- :meth:`StorageOutage.probe_records`: the records of the retry's probe commit (the
  outage as a ``storage-error`` system record, and the alert active then cleared), so
  the log holds the alert exactly when it holds the proof the disk works again;
- :meth:`StorageOutage.recovered` once that probe is committed: returns the cleared
  alert to publish;
- :meth:`StorageOutage.decorate` adds the outage to the published status;
- :meth:`StorageOutage.broken`: the log failed its background verification: a new
  ``evidence-storage`` alert naming the record (the service then stops).

The ``S-`` numbering continues across restarts from the alerts the log holds
(:meth:`StorageOutage.note_logged`) and the number each engine snapshot carries
(:meth:`StorageOutage.note_issued`); the engine numbers its alerts ``A-``, so the two
never collide.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from kent_ops.core import wire
from kent_ops.core.alerts import raised_outside
from kent_ops.evidence.system import StorageError
from kent_ops.service.flush import Lead
from kent_ops.service.rhythm import Timing

__all__ = ["STORAGE_ALERT_PREFIX", "STORAGE_RULE", "StorageOutage", "probe_folder"]

log = logging.getLogger("aggregator")

STORAGE_ALERT_PREFIX = "S-"
"""Ids of the service's own ``evidence-storage`` alerts: ``S-0001``, ``S-0002``…"""
STORAGE_RULE = "evidence-storage"


def probe_folder(folder: Path) -> str | None:
    """Write a little beside the log and say what the system refuses, if it does.

    SQLite reports a read-only file system as a bare "disk I/O error"; the operator
    needs the cause ("read-only file system", "no space left on device") to act.
    """
    probe = folder / f".kent-ops-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, bytes(4096))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        return f"{folder}: {(exc.strerror or str(exc)).lower()}"
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return None


def _utcnow() -> datetime:
    return datetime.now(UTC)


class StorageOutage:
    """Failing since when, why, the retry schedule, and the outage's ``S-`` alert.

    Args:
        timing: ``retry_first_s`` and ``retry_max_s``.
        evidence_path: the log (named in the alert; its folder is probed for the cause).
        now: the wall clock (UTC), for ``since`` and the alert's times.
        mono: the monotonic clock, for the retry schedule.
        probe: says why the folder refuses writes, or None; :func:`probe_folder` by default.
    """

    def __init__(
        self,
        timing: Timing,
        evidence_path: Path,
        *,
        now: Callable[[], datetime] = _utcnow,
        mono: Callable[[], float] = time.monotonic,
        probe: Callable[[], str | None] | None = None,
    ) -> None:
        self.timing = timing
        self.evidence_path = evidence_path
        self._now = now
        self._mono = mono
        self._probe = probe or (lambda: probe_folder(evidence_path.parent))
        self.since: datetime | None = None
        self.error: str | None = None
        self.retry_at = 0.0
        self.delay = timing.retry_first_s
        self.issued = 0
        """The highest ``S-`` number issued or found in the log."""
        self.alert: wire.Alert | None = None
        """The outage's alert, active, while failing."""
        self._cleared: wire.Alert | None = None

    @property
    def failing(self) -> bool:
        return self.since is not None

    def failed(self, exc: BaseException, held: int) -> wire.Alert | None:
        """A commit was refused; return the new active alert if this starts an outage."""
        first = self.since is None
        if first:
            self.since = self._now()
            self.delay = self.timing.retry_first_s
        else:
            self.delay = min(self.delay * 2, self.timing.retry_max_s)
        cause = self._probe()
        self.error = f"{exc} ({cause})" if cause else str(exc)
        self.retry_at = self._mono() + self.delay
        log.error(
            "EVIDENCE NOT WRITTEN: %s; %d messages held unacknowledged; retrying in %.1f s",
            self.error,
            held,
            self.delay,
        )
        if not first:
            return None
        assert self.since is not None
        self.issued += 1
        self.alert = self._alert(f"{STORAGE_ALERT_PREFIX}{self.issued:04d}", self.since, self.error)
        _log_alert(log.error, self.alert)
        return self.alert

    def retry_due(self, mono: float) -> bool:
        return self.since is not None and mono >= self.retry_at

    def probe_records(self, held: int) -> list[Lead]:
        """What the retry commits: the outage, and its alert active then cleared."""
        assert self.since is not None
        records: list[Lead] = [
            StorageError(error=self.error, since=self.since.isoformat(), held=held)
        ]
        self._cleared = None
        if self.alert is not None:
            at = self._now().astimezone(UTC)
            self._cleared = msgspec.structs.replace(
                self.alert, state="cleared", ended_at=at, cleared_at=at
            )
            records += [self.alert, self._cleared]
        return records

    def recovered(self, held: int) -> wire.Alert | None:
        """The probe was committed: the outage is over; return the cleared alert."""
        assert self.since is not None
        log.warning(
            "evidence writes work again after failing since %s; processing %d held messages",
            self.since.isoformat(),
            held,
        )
        cleared = self._cleared
        self.since = None
        self.error = None
        self.alert = None
        self._cleared = None
        if cleared is not None:
            _log_alert(log.warning, cleared)
        return cleared

    def note_logged(self, alert: wire.Alert) -> None:
        """An alert record of the log: continue the ``S-`` numbering past it."""
        if not alert.id.startswith(STORAGE_ALERT_PREFIX):
            return
        try:
            number = int(alert.id.removeprefix(STORAGE_ALERT_PREFIX))
        except ValueError:
            return
        self.issued = max(self.issued, number)

    def next_id(self) -> str:
        """The next ``S-`` id, for an alert of the service's own (a flood shares them)."""
        self.issued += 1
        return f"{STORAGE_ALERT_PREFIX}{self.issued:04d}"

    def note_issued(self, number: int) -> None:
        """A snapshot says this many ``S-`` alerts were issued before it."""
        self.issued = max(self.issued, number)

    def broken(self, record: int | None, problem: str) -> wire.Alert:
        """The log does not verify: a new active alert naming the first bad record."""
        self.issued += 1
        at = self._now()
        alert_id = f"{STORAGE_ALERT_PREFIX}{self.issued:04d}"
        alert = self._alert(alert_id, at, problem, unverified=True, record=record)
        _log_alert(log.error, alert)
        return alert

    def decorate(self, status: wire.Status, held: int) -> wire.Status:
        """The status plus what only the service knows: a failing evidence store.

        While the log cannot be written, ``evidence`` says so (``ok`` false, the error,
        since when, how many messages are held) and the storage alert is listed active.
        """
        if self.since is None:
            return status
        health = wire.EvidenceHealth(
            ok=False, error=self.error, since=self.since.astimezone(UTC), held=held
        )
        active = status.active_alerts
        if self.alert is not None:
            active = [*active, self.alert.id]
        return msgspec.structs.replace(status, evidence=health, active_alerts=active)

    def _alert(
        self,
        alert_id: str,
        since: datetime,
        error: str,
        *,
        unverified: bool = False,
        record: int | None = None,
    ) -> wire.Alert:
        """The service's own finding that its log cannot be written, or (``unverified``)
        does not verify at ``record`` (None when no record could be named)."""
        observed: dict[str, Any] = {"error": error, "evidence": str(self.evidence_path)}
        required: dict[str, Any] = {"writable": True}
        if unverified:
            observed["record"] = record
            required = {"verifies": True}
        return raised_outside(alert_id, STORAGE_RULE, since, observed, required)


def _log_alert(emit: Callable[..., None], alert: wire.Alert) -> None:
    emit("alert %s %s %s: %s", alert.id, alert.rule, alert.state, alert.message)
