"""The browser's side of textual-serve's websocket protocol, with every size bounded.

Whatever a browser sends reaches one person's app process, and a signed-in person's
browser is not to be trusted with the command post's memory: a terminal 100,000 cells
square makes a Textual app allocate gigabytes within a minute. So, before anything
reaches the app:

- a terminal size is clamped to :data:`MOST_COLS` × :data:`MOST_ROWS` (more than a
  4K screen at the page's smallest font) and at least :data:`LEAST_COLS` ×
  :data:`LEAST_ROWS`; a size that is not a whole number is ignored;
- a message longer than :data:`MOST_MESSAGE` bytes closes the websocket (aiohttp's
  ``max_msg_size``: code 1009); keys and pastes are far shorter;
- messages are taken at :data:`RATE` a second at most, after a burst of :data:`BURST`
  (a mouse moved quickly sends a few hundred a second for a moment): beyond that the
  server simply reads more slowly, so TCP holds the flood in the sender's own buffers,
  and nothing a person types is dropped;
- anything malformed is ignored, never fatal.

The app process's own memory is capped as well (:mod:`kent_ops.web.apps`), in case a
way round these bounds is ever found.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol

from aiohttp import WSMsgType, web

__all__ = [
    "BURST",
    "LEAST_COLS",
    "LEAST_ROWS",
    "MOST_COLS",
    "MOST_MESSAGE",
    "MOST_ROWS",
    "RATE",
    "Pacer",
    "Terminal",
    "paced_json",
    "relay",
    "size_from_query",
    "terminal_size",
]

MOST_COLS, MOST_ROWS = 500, 200
"""A 3840×2160 screen at the page's smallest font (8 px) is about 480×180 cells."""
LEAST_COLS, LEAST_ROWS = 10, 5
MOST_MESSAGE = 64 * 1024
"""Bytes in one websocket message: a key is a few, a large paste a few thousand."""
RATE, BURST = 200.0, 400.0
"""Messages a second taken from one websocket, and how many may come at once."""
_MOST_PING = 64


class Terminal(Protocol):
    """What the relay drives: textual-serve's app service (:class:`PersonApp`)."""

    async def send_bytes(self, data: bytes) -> bool: ...
    async def set_terminal_size(self, width: int, height: int) -> None: ...
    async def blur(self) -> None: ...
    async def focus(self) -> None: ...


def _whole(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def terminal_size(width: object, height: object) -> tuple[int, int] | None:
    """A size the app may be given: clamped to the bounds; None unless both are whole numbers."""
    cols, rows = _whole(width), _whole(height)
    if cols is None or rows is None:
        return None
    return min(MOST_COLS, max(LEAST_COLS, cols)), min(MOST_ROWS, max(LEAST_ROWS, rows))


def size_from_query(query: Mapping[str, str]) -> tuple[int, int]:
    """The first size, from the websocket's URL (``?width=&height=``); 80×24 if unusable."""

    def number(name: str, default: int) -> int:
        text = query.get(name, "")
        return int(text) if text.isascii() and text.isdigit() and len(text) <= 6 else default

    size = terminal_size(number("width", 80), number("height", 24))
    assert size is not None
    return size


class Pacer:
    """A token bucket: :meth:`take` waits as long as needed to keep to ``rate`` a second."""

    def __init__(
        self,
        rate: float = RATE,
        burst: float = BURST,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self._tokens = burst
        self._at = clock()

    def delay(self) -> float:
        """Take one message; how long to wait before handling it (0: at once)."""
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        self._tokens -= 1
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    async def take(self) -> None:
        if (wait := self.delay()) > 0:
            await asyncio.sleep(wait)


async def _handle(envelope: object, app: Terminal, websocket: web.WebSocketResponse) -> None:
    """One message of textual-serve's protocol, if well formed; anything else is ignored."""
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        return
    kind, body = envelope[0], envelope[1] if len(envelope) > 1 else None
    if kind == "stdin" and isinstance(body, str):
        await app.send_bytes(body.encode("utf-8", "replace"))
    elif kind == "resize" and isinstance(body, dict):
        size = terminal_size(body.get("width"), body.get("height"))
        if size is not None:
            await app.set_terminal_size(*size)
    elif kind == "ping" and isinstance(body, str) and len(body) <= _MOST_PING:
        await websocket.send_json(["pong", body])
    elif kind == "blur":
        await app.blur()
    elif kind == "focus":
        await app.focus()


async def paced_json(websocket: web.WebSocketResponse, pacer: Pacer) -> AsyncIterator[Any]:
    """Each text message the browser sends, as JSON, taken at the pacer's rate, until the
    websocket closes; what is not JSON is ignored."""
    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        await pacer.take()
        try:
            data = message.json()
        except (ValueError, RecursionError):  # not JSON, or nested past Python's depth
            continue
        yield data


async def relay(
    websocket: web.WebSocketResponse, app: Terminal, pacer: Pacer | None = None
) -> None:
    """The browser's keys, taps and resizes to the app, until the websocket closes."""
    async for envelope in paced_json(websocket, pacer or Pacer()):
        with contextlib.suppress(ConnectionResetError):  # closing: the loop ends next
            await _handle(envelope, app, websocket)
