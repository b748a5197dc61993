"""The bytes a sensor puts on the wire (SPEC 3), and the optional HMAC signature.

Devices and the simulator build their payloads here and nowhere else, so a simulated
gate counter is byte-for-byte what a real one sends.

The canonical form that a signature covers (issue 7 verifies it):

1. the payload's fields as a JSON object, keys in the order the device wrote them
   (``seq``, ``ts``, then the kind's fields: ``in_total``, ``out_total`` for a gate;
   ``occupied`` for a lot; ``badge``, ``role``, ``action`` for a badge reader);
2. serialized with Python's ``json.dumps(fields, separators=(",", ":"))``: no spaces,
   non-ASCII escaped as ``\\uXXXX`` (``ensure_ascii``), UTF-8 (so plain ASCII) bytes;
3. ``sig`` = lowercase hex of HMAC-SHA256(key, those bytes).

The signed payload is the same object with ``"sig"`` appended as its last key, serialized
the same way. A verifier can therefore either parse the JSON, remove ``sig`` and
re-serialize as in step 2 (``json.loads`` keeps key order), or, equivalently, take the
received bytes and cut the trailing ``,"sig":"<64 hex>"}`` back to ``}``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any

__all__ = [
    "ROLES",
    "canonical_bytes",
    "encode_payload",
    "format_ts",
    "sign",
    "verify",
]

ROLES = ("doctor", "nurse", "security")
"""The roles a badge reader reports (SPEC 3)."""


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
    return hmac.new(key, canonical_bytes(fields), hashlib.sha256).hexdigest()


def verify(payload: bytes, key: bytes) -> bool:
    """True if ``payload`` carries a ``sig`` that matches its other fields under ``key``."""
    try:
        fields = json.loads(payload)
    except ValueError:
        return False
    if not isinstance(fields, dict) or not isinstance(fields.get("sig"), str):
        return False
    return hmac.compare_digest(fields["sig"], sign(fields, key))


def encode_payload(fields: Mapping[str, Any], key: bytes | None = None) -> bytes:
    """The payload bytes for ``fields``; with a key, ``sig`` is appended as the last field."""
    if key is None:
        return canonical_bytes(fields)
    signed = {k: v for k, v in fields.items() if k != "sig"}
    signed["sig"] = sign(signed, key)
    return json.dumps(signed, separators=(",", ":")).encode("utf-8")
