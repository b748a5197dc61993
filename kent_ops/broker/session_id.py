"""A persistent session's client id that only its own account can name.

Mosquitto 2.0 finds a persistent session by client id alone and lets any account connect
with any id: a connection with another program's id kicks it off and takes its queued
messages, or wipes them with a clean session. So every kent-ops program that keeps a
persistent session (the aggregator, the notifier) derives its id from a secret: an HMAC
of its role, the event and its user name, keyed with its broker password, or, on a broker
without passwords, with a random key kept in a private file beside its state. Only a
fingerprint of the id is ever shown (docs/security.md, "Session takeover").
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from kent_ops.broker.client import BrokerAddress
from kent_ops.core.errors import UsageError

__all__ = ["Session", "key_file", "secret_client_id"]


@dataclass(frozen=True, slots=True)
class Session:
    """The session's client id (a secret) and the fingerprint that may be shown."""

    client_id: str
    fingerprint: str
    keyed_by: str
    """``password`` or the key file's path."""


def key_file(folder: Path, event_id: str, role: str = "aggregator") -> Path:
    """Where the random key of a broker without passwords is kept (mode 600)."""
    if role == "aggregator":
        return folder / f"kent-ops-{event_id}.session-key"
    return folder / f"kent-ops-{event_id}.{role}.session-key"


def _read_key(path: Path) -> bytes:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"session key {path} cannot be read ({exc})") from None
    if len(text) < 32:
        raise UsageError(f"session key {path} is too short; delete it to make a new one")
    return text.encode()


def _read_or_make_key(path: Path) -> bytes:
    """The random key beside the log, made (mode 600) the first time."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_key(path)
    except OSError as exc:
        raise UsageError(f"cannot create the session key {path} ({exc.strerror})") from None
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(key + "\n")
        out.flush()
        os.fsync(out.fileno())
    return key.encode()


def secret_client_id(role: str, event_id: str, address: BrokerAddress, folder: Path) -> Session:
    """A persistent session's client id for ``role`` (``aggregator``, ``notify-{id}``) at
    this event, keyed with the account's password, or a key file in ``folder``.

    Raises:
        UsageError: the key file cannot be read or made (one sentence).
    """
    if address.password:
        key, keyed_by = address.password.encode(), "password"
    else:
        path = key_file(folder, event_id, role)
        key, keyed_by = _read_or_make_key(path), str(path)
    label = "aggregator" if role == "aggregator" else role
    message = f"kent-ops {label} session\n{event_id}\n{address.username or ''}".encode()
    tag = hmac.new(key, message, hashlib.sha256).hexdigest()[:32]
    client_id = f"kent-ops-{role}-{event_id}-{tag}"
    fingerprint = hashlib.sha256(client_id.encode()).hexdigest()[:12]
    return Session(client_id, fingerprint, keyed_by)
