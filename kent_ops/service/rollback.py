"""A log found behind what it had committed: refused at the start, unless an operator says so.

The hash chain proves no record was changed; it cannot prove none was cut off the end,
nor that a whole older copy was not put back. Two records outside the SQLite file can:

- the broker's retained checkpoint ``kent/{e}/evidence/checkpoint`` (``{"record": N,
  "hash": H, "ts": …}``), which the service publishes at least every minute and reads
  back at each start (:func:`read_retained_checkpoint`, a short bounded wait);
- the **head file** beside the log (``evidence.sqlite.head``, :class:`HeadFile`): the
  last committed record's number and hash, rewritten (atomically, fsynced) at most
  every second after a commit, so a lost ``-wal`` file after a crash is found even
  where no broker checkpoint covers it.

:func:`behind` says whether the log is behind either: fewer records than the one named,
or another hash at that number. The aggregator then refuses to run (exit 2, one
sentence, :class:`LogRolledBack`) unless started with ``--accept-rollback``, which
records the finding in the log and raises an ``evidence-rollback`` alert; and it never
publishes a checkpoint lower than the one the broker retains.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.retained import read_retained
from kent_ops.core import wire
from kent_ops.core.errors import UsageError
from kent_ops.evidence.claims import head_path
from kent_ops.evidence.system import CheckpointRead, Claim, SystemRecord

__all__ = [
    "Claim",
    "HeadFile",
    "LogRolledBack",
    "Retained",
    "behind",
    "read_retained_checkpoint",
]

log = logging.getLogger("aggregator")

BROKER_SOURCE = "the broker's retained checkpoint"
HEAD_SOURCE = "the head file beside it"


class LogRolledBack(UsageError):
    """The log is behind a checkpoint it published or its head file (exit 2)."""


def behind(count: int, hash_of: Callable[[int], str | None], claim: Claim) -> bool:
    """Whether a log of ``count`` records lacks, or differs at, the claimed record."""
    if claim.record <= 0:
        return False
    return count < claim.record or hash_of(claim.record) != claim.hash


def refusal(path: Path, count: int, claim: Claim, head_file: Path) -> str:
    """The one sentence a refused start prints."""
    when = f" (at {claim.ts})" if claim.ts else ""
    where = BROKER_SOURCE if claim.source == BROKER_SOURCE else f"its head file {head_file}"
    if count == 0:
        return (
            f"refusing to run: {path} is a new evidence log but {where}{when} names record "
            f"{claim.record:,} of an earlier one of this event; keep the earlier log, and start "
            "with --accept-rollback to begin a new one (this is recorded in the log and raised "
            "as an alert)"
        )
    if count < claim.record:
        found = f"{path} holds {count:,} records but {where}{when} names record {claim.record:,}"
    else:
        found = f"record {claim.record:,} of {path} is not the one {where}{when} names"
    return (
        f"refusing to run: {found}, so committed records are missing; keep the file as it is "
        "and find the complete one, or start with --accept-rollback to go on with this one "
        "(the rollback is recorded in the log and raised as an alert)"
    )


@dataclass(frozen=True, slots=True)
class Guarded:
    """The start's check of the log's head: what was read, and what it is behind."""

    retained: Retained
    head_file: HeadFile
    had_head_file: bool
    count: int
    found: list[Claim]


def guard_head(
    path: Path,
    count: int,
    hash_of: Callable[[int], str | None],
    *,
    retained: Retained,
    head_file: HeadFile,
    accept: bool,
) -> Guarded:
    """Check a log of ``count`` records against the broker's checkpoint and the head file.

    Raises:
        LogRolledBack: it is behind either, and ``accept`` is False.
        UsageError: the head file is damaged.
    """
    local = head_file.claim()
    claims = (retained.claim, local)
    found = [c for c in claims if c is not None and behind(count, hash_of, c)]
    if found and not accept:
        raise LogRolledBack(refusal(path, count, found[0], head_file.path))
    return Guarded(retained, head_file, local is not None, count, found)


class HeadFile:
    """The last committed head, beside the log: ``{"record", "hash", "ts", "session"}``."""

    def __init__(self, evidence_path: Path, every_s: float = 1.0) -> None:
        self.path = head_path(evidence_path)
        self.every_s = every_s
        self.session: str | None = None
        """The fingerprint of the last session the broker held for the log."""
        self._head: tuple[int, str, str] | None = None
        self._dirty = False
        self._last_write = -1e9

    def read(self) -> dict[str, Any] | None:
        """What the file says, or None if there is none; UsageError if it is unreadable."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise UsageError(f"head file {self.path} cannot be read ({exc.strerror})") from None
        try:
            data = json.loads(text)
            int(data["record"]), str(data["hash"])
        except (ValueError, KeyError, TypeError):
            raise UsageError(
                f"head file {self.path} is damaged; if {self.path.name[:-5]} is complete, "
                "delete the head file and start again"
            ) from None
        session = data.get("session")
        self.session = session if isinstance(session, str) else None
        return dict(data)

    def claim(self) -> Claim | None:
        data = self.read()
        if data is None:
            return None
        return Claim(int(data["record"]), str(data["hash"]), data.get("ts"), HEAD_SOURCE)

    def committed(self, head: tuple[int, str], at: datetime, mono: float) -> None:
        """A commit: rewrite the file if the last write is a second old (else at a timer)."""
        if self._head is not None and self._head[:2] == head:
            return
        self._head = (head[0], head[1], at.isoformat())
        self._dirty = True
        self.sync(mono)

    def note_session(self, fingerprint: str) -> None:
        """The broker holds this session now; written with the next head."""
        if self.session != fingerprint:
            self.session = fingerprint
            self._dirty = True

    def sync(self, mono: float, force: bool = False) -> None:
        """Write what changed, at most every ``every_s`` unless forced (a clean stop)."""
        if not self._dirty or self._head is None:
            return
        if not force and mono - self._last_write < self.every_s:
            return
        record, digest, ts = self._head
        body = {"record": record, "hash": digest, "ts": ts, "session": self.session}
        try:
            _write_atomically(self.path, json.dumps(body, sort_keys=True) + "\n")
        except OSError as exc:
            log.error("could not write the head file %s: %s", self.path, exc.strerror)
            self._last_write = mono + 9 * self.every_s  # try again in ten, not every second
            return
        self._dirty, self._last_write = False, mono


def _write_atomically(path: Path, text: str) -> None:
    """Write beside, fsync, rename over, fsync the folder: the old or the new, never half."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)
    with contextlib.suppress(OSError):
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


@dataclass(frozen=True, slots=True)
class Retained:
    """What the broker answered: its retained checkpoint, none, or no answer at all."""

    answered: bool
    claim: Claim | None = None
    problem: str | None = None

    def in_record(self) -> Claim | str | None:
        """What the ``started`` and ``checkpoint-read`` records say of it."""
        if not self.answered:
            return f"unread: {self.problem}"
        return self.claim


def _claim(payload: bytes) -> Claim | None:
    try:
        point = wire.decode_json(wire.Checkpoint, payload)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        log.warning("the broker's retained checkpoint is not one: %r", payload[:100])
        return None
    ts = point.ts.isoformat() if point.ts is not None else None
    return Claim(point.record, point.hash, ts, BROKER_SOURCE)


def read_retained_checkpoint(
    address: BrokerAddress, topic: str, ca_file: str | None, wait_s: float
) -> Retained:
    """The broker's retained checkpoint, waiting at most ``wait_s`` for the broker
    (:func:`kent_ops.broker.retained.read_retained`)."""
    answer = read_retained(address, topic, ca_file=ca_file, wait_s=wait_s, purpose="check")
    if not answer.answered:
        return Retained(False, problem=answer.problem or f"no answer within {wait_s:g} s")
    payload = answer.payload
    return Retained(True, _claim(payload) if payload else None, answer.problem)


class LateCheck:
    """Reads the retained checkpoint again and again until the broker answers (a start
    that could not reach it): ``post`` hands the answer to the worker."""

    def __init__(
        self,
        read: Callable[[], Retained],
        post: Callable[[SystemRecord], None],
        stopping: threading.Event,
        every_s: float = 5.0,
    ) -> None:
        self._read, self._post, self._stopping, self._every = read, post, stopping, every_s

    def start(self) -> None:
        threading.Thread(target=self._run, name="checkpoint-check", daemon=True).start()

    def _run(self) -> None:
        while not self._stopping.is_set():
            started = time.monotonic()
            retained = self._read()
            if retained.answered:
                self._post(CheckpointRead(retained=retained.in_record()))
                return
            self._stopping.wait(max(0.0, self._every - (time.monotonic() - started)))
