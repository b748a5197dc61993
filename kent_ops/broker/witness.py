"""Keeping the log's checkpoints as a witness: whoever receives one appends it to a file.

A dashboard, a gate view, the notifier and the phones' hub inside ``kent-ops serve``
each receive the aggregator's retained checkpoint (``kent/{e}/evidence/checkpoint``)
and, through a :class:`WitnessKeeper`, append it as received to a witness file on
their own machine (the format: :mod:`kent_ops.core.witness`). ``kent-ops verify
--witness`` later fails if the log contradicts any of them, so a log cut back or
rewritten at the command post is caught by any inspector's laptop.

Several processes may share one file (every dashboard of one person, or the apps a
server runs): each line is written whole with one ``write`` under an exclusive
``flock`` and fsynced before the callback returns, so lines never interleave and a
checkpoint a witness has acknowledged to the broker is on its disk. A file that cannot
be written never stops the view: the keeper logs it once, says so in ``problem``, and
tries again at the next checkpoint.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import threading
from datetime import UTC, datetime
from pathlib import Path

import paho.mqtt.client as mqtt

from kent_ops.core.errors import UsageError
from kent_ops.core.wire import Topics
from kent_ops.core.witness import entry_line

__all__ = [
    "DEFAULT_WITNESS_DIR",
    "WitnessError",
    "WitnessKeeper",
    "default_witness_path",
    "watch_checkpoints",
]

log = logging.getLogger("witness")

DEFAULT_WITNESS_DIR = Path("~/.local/state/kent-ops/witness")
"""Where a witness file is kept by default: the user's state folder, one file an event."""


class WitnessError(UsageError):
    """The witness file cannot be opened for appending (exit 2, one sentence)."""


def default_witness_path(event_id: str, folder: Path | None = None) -> Path:
    """``{folder}/{event}.jsonl``, in :data:`DEFAULT_WITNESS_DIR` unless told otherwise."""
    return (folder if folder is not None else DEFAULT_WITNESS_DIR).expanduser() / (
        f"{event_id}.jsonl"
    )


class WitnessKeeper:
    """Appends each checkpoint it is handed to one witness file; thread-safe.

    Args:
        path: the witness file (created with its folder; appended to if it exists).
        event_id: the event whose checkpoints these are (written on every line).
        by: who keeps them, e.g. ``inspector-alice``, ``deputy-north``, ``notifier-n1``.
        host: the machine (default: its host name).
    """

    def __init__(self, path: Path, event_id: str, by: str, *, host: str | None = None) -> None:
        self.path = Path(path).expanduser()
        self.event_id = event_id
        self.by = by
        self.host = host if host is not None else socket.gethostname()
        self.kept = 0
        """Checkpoints written by this keeper."""
        self.problem: str | None = None
        """Why the last checkpoint could not be written; None while all is well."""
        self._lock = threading.Lock()
        self._last: bytes | None = None
        self._fd: int | None = None

    def open(self) -> WitnessKeeper:
        """Create the folder and open the file for appending, or say why not.

        Raises:
            WitnessError: the folder cannot be made or the file cannot be written.
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise WitnessError(
                f"witness file {self.path} cannot be written ({exc.strerror or exc})"
            ) from None
        return self

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> WitnessKeeper:
        return self.open() if self._fd is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keep(
        self, payload: bytes, *, retained: bool = False, received_at: datetime | None = None
    ) -> bool:
        """Append one checkpoint as received; True when it was written.

        An empty payload (a retained message taken down) and a repeat of the last one
        kept (the broker sends the retained checkpoint again at each reconnection) are
        not written; neither is a payload that is not a checkpoint (logged).
        """
        if not payload:
            return False
        at = received_at if received_at is not None else datetime.now(UTC)
        with self._lock:
            if payload == self._last:
                return False
            try:
                line = entry_line(
                    event=self.event_id,
                    received_at=at,
                    by=self.by,
                    host=self.host,
                    retained=retained,
                    payload=payload,
                )
            except ValueError as exc:
                log.warning("a checkpoint of %s was not kept: %s", self.event_id, exc)
                return False
            if not self._append(line):
                return False
            self._last = payload
            self.kept += 1
            return True

    def _append(self, line: bytes) -> bool:
        """One whole line under the file's lock, fsynced; False (and said once) if it failed."""
        try:
            if self._fd is None:
                self.open()
            assert self._fd is not None
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                os.write(self._fd, line)
                os.fsync(self._fd)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        except (OSError, WitnessError) as exc:
            problem = (
                str(exc)
                if isinstance(exc, WitnessError)
                else f"witness file {self.path} cannot be written ({exc.strerror or exc})"
            )
            if problem != self.problem:
                log.error("%s", problem)
            self.problem = problem
            return False
        self.problem = None
        return True


def watch_checkpoints(client: mqtt.Client, topics: Topics, keeper: WitnessKeeper) -> None:
    """Hand every checkpoint ``client`` receives to ``keeper``, in paho's thread.

    The caller subscribes to :attr:`Topics.checkpoint` on that client itself (with its
    other subscriptions); this routes the topic to the keeper, whatever ``on_message``
    does with the rest, so the keeper's fsync is done before paho acknowledges it.
    """

    def on_checkpoint(c: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        keeper.keep(bytes(msg.payload), retained=bool(msg.retain))

    client.message_callback_add(topics.checkpoint, on_checkpoint)
