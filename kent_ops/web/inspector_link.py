"""The inspectors' page hub's one connection to the broker: it reads the event for all.

Every inspector's and the Clerk's page is fed by one subscription, whoever is signed
in: the status, every alert, the aggregator's availability and its evidence
checkpoints. The server holds no broker account of its own, so the connection uses the
account of a signed-in inspector or Clerk (``inspector-{id}`` or ``clerk-{id}``, each
of which may read the whole event, ``kent-ops deploy acl``) with the password they
signed in with. Refused (a web password that is not that broker password), it tries
the next signed-in person's account; when the person whose account it uses signs out,
the connection already made stays (the broker checked it), and the next one uses an
account still signed in. What each person *publishes* goes out under their own
account (:mod:`kent_ops.web.person_link`).

paho runs the connection in its own thread; everything it hears is handed to the
server's event loop (``call_soon_threadsafe``), so the hub's state is only touched there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.refusal import refusal
from kent_ops.core import wire
from kent_ops.web.gate_link import Heard, LinkChange

__all__ = ["InspectorLink"]

log = logging.getLogger("kent-ops.serve")

Account = tuple[str, str]
"""A broker user and its password."""


class InspectorLink:
    """paho's connection for the inspectors' hub; events go to ``on_heard`` / ``on_change``."""

    def __init__(
        self,
        topics: wire.Topics,
        broker: BrokerAddress,
        account: Account,
        *,
        loop: asyncio.AbstractEventLoop,
        on_heard: Callable[[Heard], None],
        on_change: Callable[[LinkChange], None],
        ca_file: str | None = None,
    ) -> None:
        self.topics = topics
        self.broker = broker
        self.loop = loop
        self._on_heard, self._on_change = on_heard, on_change
        self._lock = threading.Lock()
        self._accounts: dict[str, Account] = {}
        """The signed-in sessions' accounts, by session (kept while they last)."""
        self.current = account
        self._tried: set[Account] = {account}
        self._refused: str | None = None
        user, password = account
        self.client = make_client(
            replace(broker, username=user, password=password),
            f"kent-serve-inspectors-{secrets.token_hex(4)}",
            ca_file=ca_file,
        )
        self.client.on_connect = self._connected
        self.client.on_disconnect = self._disconnected
        self.client.on_connect_fail = self._failed
        self.client.on_message = self._message

    @property
    def subscriptions(self) -> list[str]:
        return [
            self.topics.status,
            self.topics.alerts_wildcard,
            self.topics.aggregator_availability,
            self.topics.checkpoint,
        ]

    def start(self) -> None:
        self.client.connect_async(self.broker.host, self.broker.port, keepalive=15)
        self.client.loop_start()

    def stop(self) -> None:
        """Disconnect and end paho's thread; blocks briefly (call it in an executor)."""
        with contextlib.suppress(Exception):
            self.client.disconnect()
        self.client.loop_stop()

    def add_account(self, session: str, account: Account) -> None:
        """A signed-in person's session: their account, should the one in use be refused."""
        with self._lock:
            self._accounts[session] = account

    def drop_account(self, session: str) -> None:
        """That session ended: its password is no longer kept here, and the next
        connection uses an account still signed in (the one made stays)."""
        with self._lock:
            self._accounts.pop(session, None)
            held = set(self._accounts.values())
            if self.current not in held and held:
                self._use(next(iter(held)))

    def _use(self, account: Account) -> None:
        self.current = account
        self.client.username_pw_set(*account)

    # paho's thread ---------------------------------------------------------------------

    def _post(self, callback: Callable[..., None], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closing: nobody listens
            self.loop.call_soon_threadsafe(callback, *args)

    def _connected(self, client: mqtt.Client, u: object, f: object, rc: Any, p: object) -> None:
        user = self.current[0]
        if rc.is_failure:
            self._refused = refusal(rc, user)
            log.warning("inspectors' hub: the broker refused %s: %s", user, rc)
            self._next_account()
            self._post(self._on_change, LinkChange(False, self._refused, refused=True))
            return
        self._refused = None
        with self._lock:
            self._tried = {self.current}
        for topic in self.subscriptions:
            client.subscribe(topic, qos=1)
        self._post(self._on_change, LinkChange(True))

    def _next_account(self) -> None:
        """Refused: the next attempt uses another signed-in person's account, if any."""
        with self._lock:
            untried = [a for a in self._accounts.values() if a not in self._tried]
            if untried:
                self._tried.add(untried[0])
                self._use(untried[0])

    def _disconnected(self, client: mqtt.Client, u: object, f: object, rc: Any, p: object) -> None:
        refused = self._refused is not None
        self._post(self._on_change, LinkChange(False, self._refused, refused=refused))

    def _failed(self, client: mqtt.Client, userdata: object) -> None:
        self._refused = None
        self._post(self._on_change, LinkChange(False))

    def _message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        self._post(self._on_heard, Heard(msg.topic, bytes(msg.payload)))
