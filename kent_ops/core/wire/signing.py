"""Signed payloads (optional per event): an HMAC-SHA256 per device, checked on receipt.

Someone on the event Wi-Fi can publish to the broker if the ACL is wrong or a device
password leaks; a signature per device makes a forged gate count detectable and
refused. The signature covers the exact bytes the device sent: the payload is a JSON
object whose *last* member is ``"sig": "<64 lowercase hex>"``, and the signed bytes are
the payload with that member cut off (``…,"sig":"…"}`` → ``…}``). That is what
:func:`encode_payload` produces, and checking the bytes rather than a re-serialisation
means no two JSON libraries have to agree on spacing or escapes.

A device builds the signed form in three steps (docs/protocol.md, "Signed payloads"):

1. the payload's fields as a JSON object, keys in the order the device writes them
   (``seq``, ``ts``, then the kind's fields);
2. serialised compactly (``json.dumps(fields, separators=(",", ":"))``: no spaces,
   non-ASCII escaped as ``\\uXXXX``), UTF-8 bytes: :func:`canonical_bytes`;
3. ``sig`` = lowercase hex of HMAC-SHA256(key, those bytes), appended as the last key.

The keys file is TOML, one hex key per sensor id::

    [keys]
    north = "9f2c…"      # at least 16 bytes (32 hex digits)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import tomllib
from collections.abc import Mapping
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

import msgspec

from kent_ops.core.sensor_kinds import Reading

__all__ = [
    "canonical_bytes",
    "encode_payload",
    "encode_reading",
    "format_ts",
    "generate_keys_file",
    "keys_for_permit",
    "load_keys",
    "reading_fields",
    "sign",
    "sign_bytes",
    "unsign",
    "verify",
]

_SIG_TAIL = re.compile(rb',\s*"sig"\s*:\s*"([0-9a-fA-F]{64})"\s*}\s*$')
MIN_KEY_BYTES = 16


def sign_bytes(unsigned: bytes, key: bytes) -> str:
    """Lowercase hex HMAC-SHA256 of ``unsigned`` under ``key``."""
    return hmac.new(key, unsigned, hashlib.sha256).hexdigest()


def unsign(payload: bytes, key: bytes) -> bytes | str:
    """The payload without its signature if the signature is good, else the reason."""
    match = _SIG_TAIL.search(payload)
    if match is None:
        return 'unsigned: the event requires a "sig" as the payload\'s last field'
    unsigned = payload[: match.start()] + b"}"
    expected = sign_bytes(unsigned, key)
    if not hmac.compare_digest(expected, match.group(1).decode("ascii").lower()):
        return "bad signature: sig does not match the payload under this sensor's key"
    return unsigned


def format_ts(t: datetime, tz: tzinfo | None = None) -> str:
    """ISO 8601 with milliseconds and an offset, e.g. ``2027-07-04T14:03:05.120-04:00``.

    Args:
        t: a timezone-aware time (naive times are refused: they have no offset to show).
        tz: show the time in this zone (the event's), else in ``t``'s own zone.
    """
    if t.tzinfo is None or t.utcoffset() is None:
        raise ValueError("payload times must be timezone-aware")
    if tz is not None:
        t = t.astimezone(tz)
    return t.isoformat(timespec="milliseconds")


def canonical_bytes(fields: Mapping[str, Any]) -> bytes:
    """The bytes a signature covers: compact JSON of ``fields`` in order, without ``sig``."""
    unsigned = {k: v for k, v in fields.items() if k != "sig"}
    return json.dumps(unsigned, separators=(",", ":")).encode("utf-8")


def sign(fields: Mapping[str, Any], key: bytes) -> str:
    """Hex HMAC-SHA256 of the canonical form of ``fields`` under ``key``."""
    return sign_bytes(canonical_bytes(fields), key)


def verify(payload: bytes, key: bytes) -> bool:
    """True if ``payload`` ends with a ``sig`` that matches the bytes before it under ``key``."""
    return not isinstance(unsign(payload, key), str)


def encode_payload(fields: Mapping[str, Any], key: bytes | None = None) -> bytes:
    """The payload bytes for ``fields``; with a key, ``sig`` is appended as the last field."""
    unsigned = canonical_bytes(fields)
    if key is None:
        return unsigned
    return unsigned[:-1] + b',"sig":"' + sign_bytes(unsigned, key).encode("ascii") + b'"}'


def encode_reading(record: Reading, key: bytes | None = None, tz: tzinfo | None = None) -> bytes:
    """A sensor's reading as it goes out: ``seq``, ``ts`` (:func:`format_ts`, in ``tz``),
    the kind's fields in its Struct's order, then ``sig`` when there is a key.

    The fields are the Struct's, so a device can only send what the decoder reads; the
    bytes are the canonical form a device maker reproduces (docs/protocol.md, "Signed
    payloads").
    """
    return encode_payload(reading_fields(record, tz), key)


def reading_fields(record: Reading, tz: tzinfo | None = None) -> dict[str, Any]:
    """A reading's fields as they go out, unsigned: its Struct's order, ``ts`` as
    :func:`format_ts` writes it (the form the adapter's raw record also keeps)."""
    fields = msgspec.structs.asdict(record)
    fields["ts"] = format_ts(record.ts, tz)
    for name, value in fields.items():
        if isinstance(value, tuple):  # a roster's entries: objects, each in its field order
            fields[name] = msgspec.to_builtins(value)
    return fields


def load_keys(path: str | Path) -> dict[str, bytes]:
    """Read a keys file; raise ValueError with one sentence on any problem."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise ValueError(f"signing keys file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"signing keys file {path} cannot be read: {exc}") from None
    table = data.get("keys")
    if not isinstance(table, dict) or not table:
        raise ValueError(f"signing keys file {path} has no [keys] table")
    keys: dict[str, bytes] = {}
    for sensor, value in table.items():
        try:
            key = bytes.fromhex(value) if isinstance(value, str) else b""
        except ValueError:
            key = b""
        if len(key) < MIN_KEY_BYTES:
            raise ValueError(
                f"signing key for {sensor!r} in {path} must be at least "
                f"{MIN_KEY_BYTES * 2} hex digits"
            )
        keys[sensor] = key
    return keys


def generate_keys_file(sensors: Mapping[str, str] | list[str]) -> str:
    """A new keys file's text with a random 32-byte key for each sensor."""
    lines = ["# kent-ops signing keys: one HMAC-SHA256 key per device. Keep secret.", "[keys]"]
    lines += [f'"{sensor}" = "{secrets.token_hex(32)}"' for sensor in sensors]
    return "\n".join(lines) + "\n"


def keys_for_permit(keys_file: Path | None) -> dict[str, bytes] | None:
    """The keys named by a permit's ``[signing]`` table, or None when the event does not sign."""
    if keys_file is None:
        return None
    return load_keys(keys_file)
