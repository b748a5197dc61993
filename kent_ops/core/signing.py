"""Signed payloads (optional per event): an HMAC-SHA256 per device, checked on receipt.

Someone on the event Wi-Fi can publish to the broker if the ACL is wrong or a device
password leaks; a signature per device makes a forged gate count detectable and
refused. The signature covers the exact bytes the device sent: the payload is a JSON
object whose *last* member is ``"sig": "<64 lowercase hex>"``, and the signed bytes are
the payload with that member cut off (``…,"sig":"…"}`` → ``…}``). That is what
:func:`sensors.payloads.encode_payload` produces, and checking the bytes rather than a
re-serialisation means no two JSON libraries have to agree on spacing or escapes.

The keys file is TOML, one hex key per sensor id::

    [keys]
    north = "9f2c…"      # at least 16 bytes (32 hex digits)
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import tomllib
from collections.abc import Mapping
from pathlib import Path

__all__ = ["generate_keys_file", "keys_for_permit", "load_keys", "sign_bytes", "unsign"]

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
