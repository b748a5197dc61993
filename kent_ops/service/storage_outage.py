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
- :meth:`StorageOutage.decorate` adds the outage to the published status.

The ``S-`` numbering continues across restarts from the alerts the log holds
(:meth:`StorageOutage.note_logged`); the engine numbers its alerts ``A-``, so the two
never collide.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kent_ops.core.ordinance import RULES
from kent_ops.core.rules import message_for
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


def _iso(t: datetime) -> str:
    """An instant as the engine writes it in alerts and the status: ISO 8601, UTC."""
    return t.astimezone(UTC).isoformat()


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
        self.alert: dict[str, Any] | None = None
        """The outage's alert, active, while failing."""
        self._cleared: dict[str, Any] | None = None

    @property
    def failing(self) -> bool:
        return self.since is not None

    def failed(self, exc: BaseException, held: int) -> dict[str, Any] | None:
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

    def probe_records(self, held: int) -> list[tuple[str, dict[str, Any]]]:
        """What the retry commits: the outage, and its alert active then cleared."""
        assert self.since is not None
        records: list[tuple[str, dict[str, Any]]] = [
            (
                "system",
                {
                    "event": "storage-error",
                    "error": self.error,
                    "since": self.since.isoformat(),
                    "held": held,
                },
            )
        ]
        self._cleared = None
        if self.alert is not None:
            at = _iso(self._now())
            self._cleared = {**self.alert, "state": "cleared", "ended_at": at, "cleared_at": at}
            records += [("alert", self.alert), ("alert", self._cleared)]
        return records

    def recovered(self, held: int) -> dict[str, Any] | None:
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

    def note_logged(self, payload: bytes) -> None:
        """An alert record of the log: continue the ``S-`` numbering past it."""
        try:
            alert_id = json.loads(payload).get("id", "")
            number = int(alert_id.removeprefix(STORAGE_ALERT_PREFIX))
        except (ValueError, AttributeError, TypeError):
            return
        if alert_id.startswith(STORAGE_ALERT_PREFIX):
            self.issued = max(self.issued, number)

    def decorate(self, status: dict[str, Any], held: int) -> dict[str, Any]:
        """The status plus what only the service knows: a failing evidence store.

        While the log cannot be written, ``evidence`` says so (``ok`` false, the error,
        since when, how many messages are held) and the storage alert is listed active.
        """
        if self.since is None:
            return status
        status["evidence"] = {
            "ok": False,
            "error": self.error,
            "since": _iso(self.since),
            "held": held,
        }
        if self.alert is not None:
            status["active_alerts"] = [*status.get("active_alerts", []), self.alert["id"]]
        return status

    def _alert(self, alert_id: str, since: datetime, error: str) -> dict[str, Any]:
        """The published alert shape, for the service's own finding that its log fails."""
        rule = RULES[STORAGE_RULE]
        observed = {"error": error, "evidence": str(self.evidence_path)}
        required = {"writable": True}
        at = _iso(since)
        return {
            "id": alert_id,
            "rule": STORAGE_RULE,
            "subject": None,
            "cite": rule.cite,
            "severity": rule.severity,
            "state": "active",
            "since": at,
            "raised_at": at,
            "ended_at": None,
            "cleared_at": None,
            "observed": observed,
            "required": required,
            "worst": {"observed": observed, "required": required},
            "message": message_for(STORAGE_RULE, None, observed, required),
            "acknowledged": [],
            "notes": [],
            "evidence": {"record": None, "hash": None},
            "uncertain": False,
        }


def _log_alert(emit: Callable[..., None], alert: dict[str, Any]) -> None:
    emit("alert %s %s %s: %s", alert["id"], alert["rule"], alert["state"], alert["message"])
