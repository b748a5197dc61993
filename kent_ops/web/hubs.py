"""Hubs that live while pages are open: one a key, started with its first page, ended
a few seconds after its last.

The deputies' phones have a hub per gate (:mod:`kent_ops.web.deputies`), the
inspectors' and the Clerk's pages one for the event (:mod:`kent_ops.web.inspectors`).
Either way a hub starts with the first page that asks for it; it lingers ``linger_s``
after its last page leaves, so a reload finds it, then ends. A hub that is ending is
waited for before the key's next one starts (a gate's tally says ``offline`` before the
new hub says ``online``). A hub that fails to start is forgotten, so the next page
tries a fresh one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

__all__ = ["Hub", "Hubs"]

log = logging.getLogger("kent-ops.serve")


class Hub(Protocol):
    """What :class:`Hubs` needs of a hub: to start it, and to close it."""

    closed: bool

    async def start(self) -> None: ...

    async def close(self) -> None: ...


K = TypeVar("K", bound=Hashable)
H = TypeVar("H", bound=Hub)


class Hubs(Generic[K, H]):
    """The keys with pages open, and their hubs.

    Args:
        linger_s: how long a hub outlives its last page.
        in_use: whether a hub has a page open.
        label: a key's hub in the log (``gate north: hub``).
        pages: what its pages are called in the log (``phone``).
    """

    def __init__(
        self,
        linger_s: float,
        *,
        in_use: Callable[[H], bool],
        label: Callable[[K], str],
        pages: str,
    ) -> None:
        self.linger_s = linger_s
        self._in_use, self._label, self._pages = in_use, label, pages
        self.hubs: dict[K, H] = {}
        self._starting: dict[K, asyncio.Task[None]] = {}
        self._ending: dict[K, asyncio.Task[None]] = {}
        self._lingering: dict[K, asyncio.TimerHandle] = {}

    async def open(self, key: K, make: Callable[[], H], why: str) -> H:
        """The key's hub, started by ``make`` if there is none (``why``: for the log).

        The caller adds its page to the hub at once, before anything else runs, so the
        hub cannot end in between.
        """
        linger = self._lingering.pop(key, None)
        if linger is not None:
            linger.cancel()
        hub = self.hubs.get(key)
        if hub is None:
            ending = self._ending.get(key)
            if ending is not None:
                await asyncio.shield(ending)
            hub = self.hubs.get(key)  # another page may have started it meanwhile
        if hub is None:
            hub = self.hubs[key] = make()
            label = self._label(key)
            self._starting[key] = asyncio.create_task(hub.start(), name=f"{label} start")
            log.info("%s started %s", label, why)
        try:
            await asyncio.shield(self._starting[key])
        except Exception:
            if self.hubs.get(key) is hub:  # the next page tries a fresh hub
                del self.hubs[key]
                del self._starting[key]
            raise
        return hub

    def left(self, key: K, hub: H) -> None:
        """A page of ``hub`` closed (the hub has forgotten it): the hub ends
        :attr:`linger_s` after its last."""
        if self._in_use(hub) or hub.closed or self.hubs.get(key) is not hub:
            return
        loop = asyncio.get_running_loop()
        self._lingering[key] = loop.call_later(self.linger_s, self._end, key, hub)

    def _end(self, key: K, hub: H) -> None:
        self._lingering.pop(key, None)
        if self._in_use(hub) or self.hubs.get(key) is not hub:
            return
        del self.hubs[key]
        self._starting.pop(key, None)
        task = asyncio.create_task(self._close(key, hub), name=f"{self._label(key)} end")
        self._ending[key] = task

    async def _close(self, key: K, hub: H) -> None:
        try:
            await hub.close()
            log.info("%s ended (no %s for %g s)", self._label(key), self._pages, self.linger_s)
        finally:
            if self._ending.get(key) is asyncio.current_task():
                del self._ending[key]

    async def close_all(self) -> None:
        """At the server's stop: every hub ends, and those ending are waited for."""
        for handle in self._lingering.values():
            handle.cancel()
        self._lingering.clear()
        hubs, self.hubs = list(self.hubs.values()), {}
        await asyncio.gather(*(h.close() for h in hubs), *self._ending.values(),
                             return_exceptions=True)  # fmt: skip
