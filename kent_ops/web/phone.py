"""One phone's websocket to its gate's hub: what it is sent, in order, never blocking the hub.

The hub hands each phone the gate's view (only the latest counts: a phone that was slow
to take the last one gets the newest instead) and short notes (taps sent, counted, not
counted in time, or refused; pongs), which all arrive, in order. A writer task per
phone sends them, so one phone on a poor link delays no other phone of the gate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

import msgspec
from aiohttp import web

__all__ = ["Phone"]

log = logging.getLogger("kent-ops.serve")
_ENCODE = msgspec.json.Encoder().encode
MOST_NOTES = 1000
"""Notes kept for a phone that does not read: beyond, it is closed (it will reconnect)."""


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
