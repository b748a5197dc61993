"""What every response says to the browser, and which requests come from our own pages.

**Headers.** A Content-Security-Policy that lets a page load only what this server
serves: textual-serve's script and styles, its font, and a websocket to this host;
nothing from elsewhere, no inline script but the one of :mod:`pages` (allowed by its
hash), no ``<object>``, no ``<base>``, forms that post here only, and no framing
(``frame-ancestors 'none'``, ``X-Frame-Options: DENY``, against click-jacking a
deputy's tally). Styles may be inline: xterm.js writes its own ``<style>`` elements.
``X-Content-Type-Options: nosniff``; ``Referrer-Policy: same-origin`` (no URL leaves
for another site, and our own form posts still carry the ``Origin`` header the check
below reads); ``Strict-Transport-Security`` over HTTPS, so a browser that has been
here once never tries plain HTTP again; ``Server`` says ``kent-ops``, no versions.

**Origin.** A state-changing request (``POST``: sign-in, sign-out) is taken only
when the browser says it comes from a page of this server: its ``Origin``, or, from a
browser that sends none, its ``Referer``, names this scheme, host and port. Otherwise
a page elsewhere could post the sign-in form with its author's name and password and
sign a deputy's phone into the author's account (login CSRF): the phone would then
count, and acknowledge, as someone else. Neither header: refused too.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from aiohttp import web

__all__ = ["SERVER", "from_this_site", "script_hash", "security_headers"]

SERVER = "kent-ops"
"""The ``Server`` header: what answers, without a version to look up exploits for."""
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")


def script_hash(script: str) -> str:
    """The CSP source that allows exactly this inline script (its SHA-256)."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def _csp(host: str, tls: bool, scripts: Iterable[str]) -> str:
    sockets = f" {'wss' if tls else 'ws'}://{host}" if _HOST.match(host) else ""
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src 'self' {' '.join(scripts)}".rstrip(),
            "style-src 'self' 'unsafe-inline'",
            "font-src 'self'",
            "img-src 'self'",
            f"connect-src 'self'{sockets}",
            "form-action 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "object-src 'none'",
        ]
    )


def security_headers(
    request: web.BaseRequest, *, tls: bool, scripts: Iterable[str] = ()
) -> dict[str, str]:
    """The headers every response gets (the static files are cacheable, nothing else)."""
    headers = {
        "Server": SERVER,
        "Content-Security-Policy": _csp(request.host, tls, scripts),
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "same-origin",
        "Cross-Origin-Opener-Policy": "same-origin",
    }
    if not request.path.startswith("/static/"):
        headers["Cache-Control"] = "no-store"
    if tls:
        headers["Strict-Transport-Security"] = "max-age=31536000"
    return headers


def _origin_of(url: str) -> tuple[str, str] | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if not parts.scheme or not parts.netloc:
        return None
    return parts.scheme.lower(), parts.netloc.lower()


def from_this_site(request: web.BaseRequest, *, tls: bool) -> bool:
    """Whether the browser says this request comes from one of this server's own pages."""
    here = ("https" if tls else "http", request.host.lower())
    origin = request.headers.get("Origin")
    if origin is not None:
        return _origin_of(origin) == here  # "null" (a sandboxed or privacy-hidden origin): no
    referer = request.headers.get("Referer")
    return referer is not None and _origin_of(referer) == here
