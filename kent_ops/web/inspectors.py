"""The inspectors' and the Clerk's pages: one hub for the event, started with the first page.

:class:`InspectorPages` keeps the event's one :class:`~kent_ops.web.inspector_hub.InspectorHub`
while any inspector's or Clerk's page is open (:class:`~kent_ops.web.hubs.Hubs`:
lingering after the last page, so a reload finds it; an ending hub waited for before
the next one starts). The hub starts with the account of the person who opened the
first page (the server has none of its own).

:func:`run_page` reads what a page sends: pings, and the person's actions, bounded in
size and rate like every websocket of this server.
"""

from __future__ import annotations

import contextlib
import logging

from aiohttp import web

from kent_ops.web.accounts import Account
from kent_ops.web.apps import AppConfig
from kent_ops.web.hubs import Hubs
from kent_ops.web.inspector_hub import InspectorHub, InspectorSettings, Person
from kent_ops.web.page_actions import parse_actions
from kent_ops.web.phone import Phone, messages
from kent_ops.web.sessions import Session, Sessions

__all__ = ["InspectorPages", "landing", "run_page"]

log = logging.getLogger("kent-ops.serve")
_EVENT = "event"
"""The one key of the inspectors' hubs: the event has one hub."""


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
        self._hubs: Hubs[str, InspectorHub] = Hubs(
            settings.linger_s,
            in_use=lambda hub: bool(hub.pages),
            label=lambda _: "inspectors' hub",
            pages="page",
        )

    async def join(self, page: Phone, person: Person) -> InspectorHub:
        """The hub (started if need be), with ``page`` among its pages."""
        hub = await self._hubs.open(
            _EVENT,
            lambda: InspectorHub(self.apps, self.settings, person),
            f"for {person.name}'s page",
        )
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
        self._hubs.left(_EVENT, hub)

    async def close_all(self) -> None:
        """At the server's stop: the hub and every person's connection end."""
        await self._hubs.close_all()


async def run_page(
    websocket: web.WebSocketResponse, hub: InspectorHub, page: Phone, person: Person
) -> None:
    """Read one page's messages until its websocket closes; anything malformed is ignored."""
    async for data in messages(websocket, page):
        actions = parse_actions(data.get("actions"))
        if actions is not None:
            with contextlib.suppress(ConnectionError):
                hub.take(page, person, actions)
