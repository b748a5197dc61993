"""No address or secret in a log line or a ``sent`` record.

A channel is an apprise URL that holds a mail address, a phone number, an SMTP
password or an API token. apprise's own messages about a failure often repeat parts
of it ("Sending email to "jones@…" failed."). Everything the notifier says about a
channel goes through :func:`scrub` first: every part of the URL is blotted out, and
so is anything that looks like a mail address, a URL, a phone number or an IP address.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["BLOT", "channel_scheme", "scrub", "secrets_of"]

BLOT = "[hidden]"
MAX_ERROR = 300
"""An error is cut to this many characters: a record says why, not everything."""

_PATTERNS = (
    re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE),  # a URL
    re.compile(r"[\w.+%-]+@[\w-]+(?:\.[\w-]+)+"),  # a mail address
    re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b"),  # an IPv4 address
    re.compile(r"\+?\d(?:[\s().-]?\d){6,}"),  # a phone number (7 digits or more)
)
_MIN_PART = 3
"""URL parts shorter than this are only blotted where they are the password."""


def channel_scheme(url: str) -> str:
    """The kind of channel (``mailto``, ``ntfys``…): the URL's scheme, which is no secret."""
    return urlsplit(url.strip()).scheme.lower()


def _split(part: str) -> list[str]:
    """A part and its unquoted form, and each ``/``, ``,`` or ``@``-separated piece of it."""
    out = [part, unquote(part)]
    for piece in re.split(r"[/,@;\s]+", unquote(part)):
        out.append(piece)
    return out


def secrets_of(url: str) -> list[str]:
    """Every part of a channel URL that could name a person or open an account."""
    raw = url.strip()
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    found: list[str] = [raw, raw.split("://", 1)[-1]]
    if parts.password:
        found += _split(parts.password)
    for part in (parts.username, parts.hostname, parts.netloc, parts.path, parts.fragment):
        if part:
            found += _split(part)
    for key, value in parse_qsl(parts.query, keep_blank_values=False):
        found += _split(value)
        if key.lower() in ("user", "pass", "password", "token", "key", "apikey"):
            found.append(value)
    # The longest first, so a whole is blotted before its pieces; the scheme stays readable.
    unique = {s for s in found if s and s.lower() != scheme}
    return sorted(unique, key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str] = (), password: str | None = None) -> str:
    """``text`` with every secret and anything that looks like an address blotted out."""
    out = text
    for secret in secrets:
        if len(secret) >= _MIN_PART or secret == password:
            out = out.replace(secret, BLOT)
    for pattern in _PATTERNS:
        out = pattern.sub(BLOT, out)
    out = " ".join(out.split())
    if len(out) > MAX_ERROR:
        out = out[: MAX_ERROR - 1] + "…"
    return out
