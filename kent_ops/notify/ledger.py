"""What the notifier has sent, kept in a small state file so a restart resends nothing.

The ``sent`` records are not retained on the broker and the evidence log may be on
another machine, so the notifier keeps its own account: one entry per notice (alert,
state, person, channel) saying ``pending`` (with its text, so a restart still sends
it), ``sent`` or ``gave-up``. A notice is in the ledger, on disk, before its first
attempt, and marked done after its last; the file is replaced atomically on every
change. An unreadable file is moved aside, not trusted: the breaches still active are
then sent again, which is better than telling no one.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kent_ops.core.errors import UsageError

__all__ = ["Ledger", "NoticeKey", "Status"]

Status = Literal["pending", "sent", "gave-up"]
_VERSION = 1


@dataclass(frozen=True, slots=True, order=True)
class NoticeKey:
    """One notice: an alert's state, told to one person through one of their channels."""

    alert: str
    state: str
    person: str
    channel: int

    def text(self) -> str:
        return f"{self.alert}|{self.state}|{self.person}|{self.channel}"

    @classmethod
    def parse(cls, text: str) -> NoticeKey:
        alert, state, person, channel = text.split("|")
        return cls(alert, state, person, int(channel))


class Ledger:
    """The notices decided so far, by key; thread-safe; saved on every change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: dict[NoticeKey, dict[str, str]] = {}
        self.set_aside: Path | None = None
        """Where an unreadable state file was moved at load, if one was."""

    @classmethod
    def load(cls, path: Path) -> Ledger:
        """The ledger in ``path`` (empty if there is none yet); checks it can be written."""
        ledger = cls(path)
        try:  # a new service's folder is made for it, private (what it sent is its own)
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"state_file {path}: folder {path.parent} cannot be made ({exc.strerror})"
            ) from None
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                ledger._entries = {
                    NoticeKey.parse(k): {str(a): str(b) for a, b in v.items()}
                    for k, v in data["notices"].items()
                }
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                aside = path.with_name(path.name + ".unreadable")
                os.replace(path, aside)
                ledger.set_aside = aside
        try:
            ledger.save()
        except OSError as exc:
            raise UsageError(f"state_file {path} cannot be written ({exc})") from None
        return ledger

    def status(self, key: NoticeKey) -> str | None:
        with self._lock:
            entry = self._entries.get(key)
            return None if entry is None else entry["status"]

    def has(self, key: NoticeKey) -> bool:
        return self.status(key) is not None

    def add_pending(self, keys: list[NoticeKey], title: str, body: str) -> None:
        """Enter new notices, not yet sent, with their text; saved before returning."""
        with self._lock:
            for key in keys:
                self._entries[key] = {"status": "pending", "title": title, "body": body}
            self._save_locked()

    def finish(self, key: NoticeKey, status: Status) -> None:
        """Mark a notice ``sent`` or ``gave-up`` (its text is then dropped); saved."""
        with self._lock:
            self._entries[key] = {"status": status}
            self._save_locked()

    def pending(self) -> Iterator[tuple[NoticeKey, str, str]]:
        """The notices still to send, in order: (key, title, body)."""
        with self._lock:
            items = sorted(
                (k, v["title"], v["body"])
                for k, v in self._entries.items()
                if v["status"] == "pending"
            )
        yield from items

    def save(self) -> None:
        with self._lock:
            self._save_locked()

    def _save_locked(self) -> None:
        data = {
            "version": _VERSION,
            "notices": {k.text(): v for k, v in sorted(self._entries.items())},
        }
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1)
                f.flush()
                os.fsync(f.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        os.replace(tmp, self.path)
