"""The deputies' phones: a hub per gate, started with its first phone, ended after its last.

:class:`GateHubs` keeps one :class:`~kent_ops.web.gate_hub.GateHub` per gate that has a
phone open (:class:`~kent_ops.web.hubs.Hubs`: lingering after the last phone, so a
reload finds it; an ending hub waited for, so its tally says ``offline`` before the
new one says ``online``). A hub starts with the password of the session that opened
it: every deputy of a gate has that gate's broker password (docs/security.md).

:func:`run_phone` reads what a phone sends: pings, and taps of the manual tally,
bounded in size and rate like every websocket of this server.
"""

from __future__ import annotations

import contextlib

from aiohttp import web

from kent_ops.web.apps import AppConfig
from kent_ops.web.gate_hub import GateHub, GateSettings
from kent_ops.web.hubs import Hubs
from kent_ops.web.phone import Phone, messages
from kent_ops.web.taps import parse_taps

__all__ = ["GateHubs", "run_phone"]


class GateHubs:
    """The gates with phones open, and their hubs."""

    def __init__(self, apps: AppConfig, settings: GateSettings) -> None:
        self.apps, self.settings = apps, settings
        self._hubs: Hubs[str, GateHub] = Hubs(
            settings.linger_s,
            in_use=lambda hub: bool(hub.phones),
            label=lambda gate: f"gate {gate}: hub",
            pages="phone",
        )

    async def join(self, gate: str, phone: Phone, password: str) -> GateHub:
        """The gate's hub (started if need be), with ``phone`` among its phones."""
        hub = await self._hubs.open(
            gate, lambda: GateHub(gate, self.apps, self.settings, password), "for its first phone"
        )
        hub.join(phone, password)
        return hub

    def leave(self, hub: GateHub, phone: Phone) -> None:
        """``phone`` closed; the hub ends :attr:`GateSettings.linger_s` after its last."""
        hub.leave(phone)
        self._hubs.left(hub.gate, hub)

    async def close_all(self) -> None:
        """At the server's stop: every hub says goodbye and disconnects."""
        await self._hubs.close_all()


async def run_phone(websocket: web.WebSocketResponse, hub: GateHub, phone: Phone) -> None:
    """Read one phone's messages until its websocket closes; anything malformed is ignored."""
    async for data in messages(websocket, phone):
        taps = parse_taps(data.get("taps"))
        if taps is not None:
            with contextlib.suppress(ConnectionError):
                await hub.take(phone, taps)
