"""One app process per seat, handed over one at a time.

A seat is what may run only once (:attr:`Account.seat`): a person's dashboard, or a
gate's view, whose manual tally is one counter with one ``seq``. Two processes for one
gate would each count from the ``seq`` they read at start, so the aggregator would
take one's messages for repeats of the other's, or, when one of them began before
the first tap (``seq`` 0), for a counter that restarted (docs/protocol.md, "Counting").

So every opening of a seat takes a ticket, then the seat's lock; holding it, only the
newest ticket may go on: it stops the seat's running app and waits until its process
has exited (it has saved its tally by then), and only then starts its own, which
reads the tally where the old one left it. Older tickets still waiting give up, so
twenty tabs opened at once start one app, not twenty in turn. A seat starts at most
one app per :data:`START_GAP_S`, so reopening a tab in a loop cannot keep the host
busy starting Python processes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

__all__ = ["START_GAP_S", "Seats"]

START_GAP_S = 2.0
"""Seconds between two app starts for one seat (the first start does not wait)."""


@dataclass(slots=True)
class _Seat:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    latest: int = 0
    started_at: float | None = None


class Seats:
    """Tickets and locks per seat (as many seats as accounts in the users file, at most)."""

    def __init__(
        self,
        *,
        gap_s: float = START_GAP_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.gap_s, self.clock, self.sleep = gap_s, clock, sleep
        self._seats: dict[str, _Seat] = {}

    def ticket(self, seat: str) -> int:
        """A place in line for ``seat``: the newest ticket is the one that gets it."""
        state = self._seats.setdefault(seat, _Seat())
        state.latest += 1
        return state.latest

    def superseded(self, seat: str, ticket: int) -> bool:
        """True when a newer opening of this seat came after ``ticket``."""
        state = self._seats.get(seat)
        return state is not None and state.latest != ticket

    @asynccontextmanager
    async def turn(self, seat: str, ticket: int) -> AsyncIterator[bool]:
        """Hold the seat; yields False if a newer ticket came meanwhile (give up then).

        While it holds the seat the caller stops the old app and starts its own; the
        next one waits, and at most one start per :attr:`gap_s` happens for a seat.
        """
        state = self._seats.setdefault(seat, _Seat())
        async with state.lock:
            if state.started_at is not None and state.latest == ticket:
                pause = state.started_at + self.gap_s - self.clock()
                if pause > 0:
                    await self.sleep(pause)
            go = state.latest == ticket
            if go:
                state.started_at = self.clock()
            yield go
