"""The deputies' phones: a hub per gate, started with its first phone, ended after its last.

:class:`GateHubs` keeps one :class:`~kent_ops.web.gate_hub.GateHub` per gate that has a
phone open. A hub starts with the password of the session that opened it (every
deputy of a gate has that gate's broker password, docs/security.md); it lingers a few
seconds after its last phone leaves, so a reload finds it, then ends. A hub that is
ending is waited for before the gate's next one starts: its tally says ``offline``
before the new one says ``online``.

:func:`run_phone` reads what a phone sends: pings, and taps of the manual tally,
bounded in size and rate like every websocket of this server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from aiohttp import WSMsgType, web

from kent_ops.web.apps import AppConfig
from kent_ops.web.gate_hub import GateHub, GateSettings
from kent_ops.web.phone import Phone
from kent_ops.web.relay import Pacer
from kent_ops.web.taps import parse_taps

__all__ = ["GateHubs", "run_phone"]

log = logging.getLogger("kent-ops.serve")
PHONE_RATE, PHONE_BURST = 20.0, 200.0
"""Messages a second taken from one phone, after a burst (its kept taps, sent at once)."""
_MOST_PING = 64


class GateHubs:
    """The gates with phones open, and their hubs."""

    def __init__(self, apps: AppConfig, settings: GateSettings) -> None:
        self.apps, self.settings = apps, settings
        self.hubs: dict[str, GateHub] = {}
        self._starting: dict[str, asyncio.Task[None]] = {}
        self._ending: dict[str, asyncio.Task[None]] = {}
        self._lingering: dict[str, asyncio.TimerHandle] = {}

    async def join(self, gate: str, phone: Phone, password: str) -> GateHub:
        """The gate's hub (started if need be), with ``phone`` among its phones."""
        linger = self._lingering.pop(gate, None)
        if linger is not None:
            linger.cancel()
        hub = self.hubs.get(gate)
        if hub is None:
            ending = self._ending.get(gate)
            if ending is not None:
                await asyncio.shield(ending)
            hub = self.hubs.get(gate)  # another phone may have started it meanwhile
        if hub is None:
            hub = GateHub(gate, self.apps, self.settings, password)
            self.hubs[gate] = hub
            self._starting[gate] = asyncio.create_task(hub.start(), name=f"gate-{gate}-start")
            log.info("gate %s: hub started for its first phone", gate)
        try:
            await asyncio.shield(self._starting[gate])
        except Exception:
            if self.hubs.get(gate) is hub:  # the next phone tries a fresh hub
                del self.hubs[gate]
                del self._starting[gate]
            raise
        hub.join(phone, password)
        return hub

    def leave(self, hub: GateHub, phone: Phone) -> None:
        """``phone`` closed; the hub ends :attr:`GateSettings.linger_s` after its last."""
        hub.leave(phone)
        if hub.phones or hub.closed or self.hubs.get(hub.gate) is not hub:
            return
        loop = asyncio.get_running_loop()
        self._lingering[hub.gate] = loop.call_later(self.settings.linger_s, self._end, hub)

    def _end(self, hub: GateHub) -> None:
        self._lingering.pop(hub.gate, None)
        if hub.phones or self.hubs.get(hub.gate) is not hub:
            return
        del self.hubs[hub.gate]
        self._starting.pop(hub.gate, None)
        task = asyncio.create_task(self._close(hub), name=f"gate-{hub.gate}-end")
        self._ending[hub.gate] = task

    async def _close(self, hub: GateHub) -> None:
        try:
            await hub.close()
            log.info("gate %s: hub ended (no phone for %g s)", hub.gate, self.settings.linger_s)
        finally:
            if self._ending.get(hub.gate) is asyncio.current_task():
                del self._ending[hub.gate]

    async def close_all(self) -> None:
        """At the server's stop: every hub says goodbye and disconnects."""
        for handle in self._lingering.values():
            handle.cancel()
        self._lingering.clear()
        hubs, self.hubs = list(self.hubs.values()), {}
        await asyncio.gather(*(h.close() for h in hubs), *self._ending.values(),
                             return_exceptions=True)  # fmt: skip


async def run_phone(websocket: web.WebSocketResponse, hub: GateHub, phone: Phone) -> None:
    """Read one phone's messages until its websocket closes; anything malformed is ignored."""
    pacer = Pacer(PHONE_RATE, PHONE_BURST)
    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        await pacer.take()
        try:
            data = message.json()
        except (ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        ping = data.get("ping")
        if (
            isinstance(ping, int)
            and not isinstance(ping, bool)
            or (isinstance(ping, str) and len(ping) <= _MOST_PING)
        ):
            phone.say({"pong": ping})
        taps = parse_taps(data.get("taps"))
        if taps is not None:
            with contextlib.suppress(ConnectionError):
                await hub.take(phone, taps)
