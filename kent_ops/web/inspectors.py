"""The inspectors' and the Clerk's pages: one hub for the event, started with the first page.

:class:`InspectorPages` keeps the event's one :class:`~kent_ops.web.inspector_hub.InspectorHub`
while any inspector's or Clerk's page is open. The hub starts with the account of the
person who opened the first page (the server has none of its own); it lingers a few
seconds after the last page closes, so a reload finds it, then ends. A hub that is
ending is waited for before the next one starts.

:func:`run_page` reads what a page sends: pings, and the person's actions, bounded in
size and rate like every websocket of this server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable

from aiohttp import WSMsgType, web

from kent_ops.web.accounts import Account
from kent_ops.web.apps import AppConfig
from kent_ops.web.deputies import PHONE_BURST, PHONE_RATE
from kent_ops.web.inspector_hub import InspectorHub, InspectorSettings, Person
from kent_ops.web.page_actions import parse_actions
from kent_ops.web.phone import Phone
from kent_ops.web.relay import Pacer
from kent_ops.web.sessions import Session, Sessions

__all__ = ["InspectorPages", "landing", "run_page"]

log = logging.getLogger("kent-ops.serve")
_MOST_PING = 64


def landing(app: str, *, phone: bool) -> str:
    """Where a signed-in person goes: a deputy to their gate; an inspector or the Clerk
    to their page on a phone's screen, to the full dashboard elsewhere."""
    if app == "dashboard" and phone:
        return "/inspector"
    return f"/{app}"


class InspectorPages:
    """The event's inspectors' hub, while any of their pages is open."""

    def __init__(self, apps: AppConfig, settings: InspectorSettings) -> None:
        self.apps, self.settings = apps, settings
        self.hub: InspectorHub | None = None
        self._starting: asyncio.Task[None] | None = None
        self._ending: asyncio.Task[None] | None = None
        self._lingering: asyncio.TimerHandle | None = None

    async def join(self, page: Phone, person: Person) -> InspectorHub:
        """The hub (started if need be), with ``page`` among its pages."""
        if self._lingering is not None:
            self._lingering.cancel()
            self._lingering = None
        if self.hub is None and self._ending is not None:
            await asyncio.shield(self._ending)
        hub = self.hub
        if hub is None:
            hub = self.hub = InspectorHub(self.apps, self.settings, person)
            self._starting = asyncio.create_task(hub.start(), name="inspectors-start")
            log.info("inspectors' hub started for %s's page", person.name)
        assert self._starting is not None
        try:
            await asyncio.shield(self._starting)
        except Exception:
            if self.hub is hub:  # the next page tries a fresh hub
                self.hub, self._starting = None, None
            raise
        hub.join(page, person)
        return hub

    async def serve(
        self,
        websocket: web.WebSocketResponse,
        page: Phone,
        account: Account,
        session: Session,
        sessions: Sessions,
    ) -> None:
        """One page, as long as it is open and its person signed in."""
        person = Person(
            account.name, account.role, account.broker_user, session.password, session.token
        )
        hub = None
        try:
            hub = await self.join(page, person)
            if sessions.get(session.token) is not None:  # not signed out meanwhile
                await run_page(websocket, hub, page, person)
        finally:
            if hub is not None:
                self.leave(hub, page, person)
            await page.stop()
            log.info("%s's page closed: %s", account.name, page.ended or "page closed")

    def leave(self, hub: InspectorHub, page: Phone, person: Person) -> None:
        """``page`` closed; the hub ends :attr:`InspectorSettings.linger_s` after the last."""
        hub.leave(page, person)
        if hub.pages or hub.closed or self.hub is not hub:
            return
        loop = asyncio.get_running_loop()
        self._lingering = loop.call_later(self.settings.linger_s, self._end, hub)

    def _end(self, hub: InspectorHub) -> None:
        self._lingering = None
        if hub.pages or self.hub is not hub:
            return
        self.hub, self._starting = None, None
        self._ending = asyncio.create_task(self._close(hub), name="inspectors-end")

    async def _close(self, hub: InspectorHub) -> None:
        try:
            await hub.close()
            log.info("inspectors' hub ended (no page for %g s)", self.settings.linger_s)
        finally:
            if self._ending is asyncio.current_task():
                self._ending = None

    async def close_all(self) -> None:
        """At the server's stop: the hub and every person's connection end."""
        if self._lingering is not None:
            self._lingering.cancel()
            self._lingering = None
        hub, self.hub = self.hub, None
        ending: list[Awaitable[None]] = [hub.close()] if hub is not None else []
        if self._ending is not None:
            ending.append(self._ending)
        await asyncio.gather(*ending, return_exceptions=True)


async def run_page(
    websocket: web.WebSocketResponse, hub: InspectorHub, page: Phone, person: Person
) -> None:
    """Read one page's messages until its websocket closes; anything malformed is ignored."""
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
            page.say({"pong": ping})
        actions = parse_actions(data.get("actions"))
        if actions is not None:
            with contextlib.suppress(ConnectionError):
                hub.take(page, person, actions)
