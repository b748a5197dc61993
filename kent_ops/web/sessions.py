"""Signed-in sessions: a random token in a cookie, everything else kept on the server.

A session lasts a fixed time from sign-in (``--session-minutes``) and ends earlier at
sign-out or when its account leaves the users file. It keeps the person's password
in the server's memory, and only there, because every app the person opens in that
time connects to the broker with it; it is dropped when the session ends. One account
keeps at most ``most_per_account`` sessions (signing in again and again cannot fill
the server's memory): a sign-in beyond that ends the account's oldest session.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Session", "Sessions"]


@dataclass(slots=True)
class Session:
    """One person signed in on one browser."""

    token: str = field(repr=False)
    account: str
    address: str
    expires: float
    password: str = field(repr=False)
    phone: bool = False
    """Signed in from a phone's screen: an inspector's ``/`` is then their page."""


class Sessions:
    """The live sessions, by token, on a monotonic clock."""

    def __init__(
        self,
        lifetime_s: float,
        *,
        most_per_account: int = 20,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.lifetime_s = lifetime_s
        self.most_per_account = most_per_account
        self.clock = clock
        self._by_token: dict[str, Session] = {}

    def open(self, account: str, address: str, password: str, *, phone: bool = False) -> Session:
        """A new session with an unguessable token (256 bits)."""
        token = secrets.token_urlsafe(32)
        expires = self.clock() + self.lifetime_s
        session = Session(token, account, address, expires, password, phone=phone)
        self._by_token[token] = session
        return session

    def crowded(self, account: str) -> list[Session]:
        """End and return the account's oldest sessions beyond ``most_per_account``."""
        mine = [s for s in self._by_token.values() if s.account == account]  # oldest first
        ended = mine[: max(0, len(mine) - self.most_per_account)]
        for session in ended:
            self.close(session.token)
        return ended

    def get(self, token: str | None) -> Session | None:
        """The live session for this cookie value, or None (unknown or expired)."""
        if not token:
            return None
        session = self._by_token.get(token)
        if session is None:
            return None
        if self.clock() >= session.expires:
            self.close(token)
            return None
        return session

    def remaining_s(self, session: Session) -> float:
        return max(0.0, session.expires - self.clock())

    def close(self, token: str) -> Session | None:
        """End a session (sign-out, expiry); its password goes with it."""
        session = self._by_token.pop(token, None)
        if session is not None:
            session.password = ""
        return session

    def sweep(self, accounts: set[str]) -> list[Session]:
        """End and return every session past its time or whose account no longer exists."""
        now = self.clock()
        ended = [
            s for s in self._by_token.values() if now >= s.expires or s.account not in accounts
        ]
        for session in ended:
            self.close(session.token)
        return ended

    def __len__(self) -> int:
        return len(self._by_token)
