"""A browser tab without a browser: aiohttp speaking textual-serve's protocol to ``serve``.

For attacks a page would never make (a terminal 100,000 cells square, twenty tabs in
the same instant, a megabyte in one message), a real aiohttp client signs in over
HTTPS like a browser (cookie, ``Origin``) and opens the app's websocket itself. What
the app draws is kept; its text is read with the terminal's escape sequences removed.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import Callable
from typing import Any

from aiohttp import ClientSession, ClientWebSocketResponse, CookieJar, WSMsgType
from live_support import wait_until_async

_ESCAPE = re.compile(rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
_CURSOR_ROW = re.compile(rb"\x1b\[(\d+);\d+H")
KEEP_BYTES = 4_000_000


def insecure() -> ssl.SSLContext:
    """The test certificate is the event's own CA's: not in the system's store."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def browser_like(base: str) -> ClientSession:
    """Keeps cookies from an IP address and says where its posts come from, as a browser."""
    return ClientSession(cookie_jar=CookieJar(unsafe=True), headers={"Origin": base})


async def sign_in(client: ClientSession, base: str, name: str, password: str) -> None:
    async with client.post(
        f"{base}/signin",
        data={"name": name, "password": password},
        ssl=insecure(),
        allow_redirects=False,
    ) as response:
        assert response.status == 303, f"sign-in as {name}: {response.status}"


async def until(predicate: Callable[[], Any], within: float, what: str) -> Any:
    """Poll ``predicate`` without blocking the event loop (the tabs read meanwhile)."""
    return await wait_until_async(predicate, within, what, every=0.1)


class Tab:
    """One open app page: its websocket, what the app drew, and how it was closed."""

    def __init__(self, websocket: ClientWebSocketResponse) -> None:
        self.websocket = websocket
        self.drawn = bytearray()
        self.texts: list[str] = []
        self.closed = False
        self.close_code: int | None = None
        """The code of the server's close frame (1001: opened elsewhere, 1009: too big)."""
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, client: ClientSession, base: str, app: str, size: str = "") -> Tab:
        url = f"{base.replace('https', 'wss')}/ws/{app}{size or '?width=43&height=40'}"
        return cls(await client.ws_connect(url, origin=base, ssl=insecure()))

    async def _read(self) -> None:
        while True:
            message = await self.websocket.receive()
            if message.type == WSMsgType.BINARY:
                self.drawn.extend(message.data)
                del self.drawn[:-KEEP_BYTES]
            elif message.type == WSMsgType.TEXT:
                self.texts.append(message.data)
            elif message.type == WSMsgType.CLOSE:
                self.close_code = message.data  # as the server said it, before any reply
            elif message.type in (WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                break
        self.closed = True

    def text(self, since: int = 0) -> str:
        """What the app drew (from byte ``since``), without escape sequences."""
        return _ESCAPE.sub(b"", bytes(self.drawn[since:])).decode("utf-8", "replace")

    def rows_drawn(self, since: int = 0) -> list[int]:
        """The rows the app moved its cursor to (1 is the top), from byte ``since``."""
        return [int(row) for row in _CURSOR_ROW.findall(bytes(self.drawn[since:]))]

    async def send(self, *message: object) -> None:
        await self.websocket.send_json(list(message))

    async def send_json(self, message: dict[str, object]) -> None:
        """One message of the deputy's page (an object, not textual-serve's list)."""
        await self.websocket.send_json(message)

    async def close(self) -> None:
        await self.websocket.close()
        await self._reader
