"""One phone's websocket to its hub: what it is sent, in order, never blocking the hub,
and what it sends, paced.

The hub hands each phone its view (only the latest counts: a phone that was slow to take
the last one gets the newest instead) and short notes (taps or actions sent, counted or
recorded, not in time, or refused; pongs), which all arrive, in order. A writer task per
phone sends them, so one phone on a poor link delays no other phone of the hub.
:func:`messages` reads what a page sends, the deputy's gate view and the inspector's
page alike: bounded in size and rate like every websocket of this server, its pings
answered here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from aiohttp import web

from kent_ops.web.relay import Pacer, paced_json

__all__ = ["PHONE_BURST", "PHONE_RATE", "Phone", "messages"]

log = logging.getLogger("kent-ops.serve")
_ENCODE = msgspec.json.Encoder().encode
MOST_NOTES = 1000
"""Notes kept for a phone that does not read: beyond, it is closed (it will reconnect)."""
PHONE_RATE, PHONE_BURST = 20.0, 200.0
"""Messages a second taken from one phone, after a burst (what it kept, sent at once)."""
_MOST_PING = 64


class Phone:
    """A deputy's page, open on one phone (or tab), signed in with one session."""

    def __init__(self, websocket: web.WebSocketResponse, token: str, account: str) -> None:
        self.websocket = websocket
        self.token = token
        self.account = account
        self.ended = ""
        self._view: str | None = None
        self._notes: deque[str] = deque()
        self._wake = asyncio.Event()
        self._writer = asyncio.create_task(self._write(), name=f"phone-{account}")

    def show(self, view: str) -> None:
        """The gate's latest view (replacing one not sent yet)."""
        self._view = view
        self._wake.set()

    def say(self, note: dict[str, object]) -> None:
        """A note for this phone only; every note is sent, in order."""
        if len(self._notes) >= MOST_NOTES:
            log.warning("%s's phone reads nothing: closed", self.account)
            self._writer.cancel()
            return
        self._notes.append(_ENCODE(note).decode())
        self._wake.set()

    async def _write(self) -> None:
        try:
            while not self.websocket.closed:
                await self._wake.wait()
                self._wake.clear()
                while self._notes:
                    await self.websocket.send_str(self._notes.popleft())
                if self._view is not None:
                    view, self._view = self._view, None
                    await self.websocket.send_str(view)
        except (ConnectionError, RuntimeError):
            pass  # the phone went away: its handler ends and the hub forgets it
        finally:
            with contextlib.suppress(Exception):
                await self.websocket.close()

    async def stop(self) -> None:
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer


async def messages(websocket: web.WebSocketResponse, phone: Phone) -> AsyncIterator[dict[str, Any]]:
    """Each JSON object the page sends, until its websocket closes; a ping in it is
    answered first, anything malformed is ignored."""
    async for data in paced_json(websocket, Pacer(PHONE_RATE, PHONE_BURST)):
        if not isinstance(data, dict):
            continue
        ping = data.get("ping")
        if (
            isinstance(ping, int)
            and not isinstance(ping, bool)
            or (isinstance(ping, str) and len(ping) <= _MOST_PING)
        ):
            phone.say({"pong": ping})
        yield data
