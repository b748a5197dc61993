"""One signed-in person's own connection to the broker, for what they publish from a page.

The inspector's page hub (:mod:`kent_ops.web.inspector_hub`) reads the event once for
every phone, but an inspector's acknowledgement, note, adjustment or checklist mark,
and the Clerk's change of the permit, go out under that person's own broker account
(``inspector-{id}``, ``clerk-{id}``), with the password they signed in with: the
broker's access list decides what each may publish, as it does for the terminal's
dashboard, and the server holds no broker credentials of its own.

The connection speaks MQTT 5, so the broker answers each message with a reason: a
message the access list refuses is acknowledged as "not authorized", and the page says
so rather than wait for a record that will never come. paho runs the connection in its
own thread; what it hears goes to the server's event loop (``call_soon_threadsafe``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.refusal import refusal

__all__ = ["PersonLink", "Publication"]

log = logging.getLogger("kent-ops.serve")


@dataclass(slots=True)
class Publication:
    """One message on its way: ``done`` once the broker answered, ``refused`` with its
    reason when the answer was a refusal (the access list said no)."""

    done: bool = False
    refused: str | None = None
    _event: threading.Event = field(default_factory=threading.Event, repr=False)

    def settle(self, refused: str | None) -> None:
        self.refused, self.done = refused, True
        self._event.set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)


class PersonLink:
    """paho's MQTT 5 connection as one person; changes and answers go to ``loop``.

    Args:
        user: the broker account (``inspector-{id}`` or ``clerk-{id}``).
        broker: where the broker is (its user and password are replaced by the person's).
        password: the person's password (their web password is their broker password).
        on_change: called on the loop with (up, why): why names a refusal, else None.
        on_answered: called on the loop when the broker answers a message.
    """

    def __init__(
        self,
        user: str,
        broker: BrokerAddress,
        password: str,
        *,
        loop: asyncio.AbstractEventLoop,
        on_change: Callable[[bool, str | None], None],
        on_answered: Callable[[], None],
        ca_file: str | None = None,
    ) -> None:
        self.user = user
        self.address = replace(broker, username=user, password=password)
        self.loop = loop
        self._on_change, self._on_answered = on_change, on_answered
        self.up = False
        self.refused: str | None = None
        """Why the broker last turned this account away, until it lets it in."""
        self._lock = threading.Lock()
        self._pending: dict[int, Publication] = {}
        self._early: dict[int, str | None] = {}
        self.client = make_client(
            self.address,
            f"kent-serve-{user}-{secrets.token_hex(4)}",
            ca_file=ca_file,
            protocol=mqtt.MQTTv5,
        )
        self.client.on_connect = self._connected
        self.client.on_disconnect = self._disconnected
        self.client.on_connect_fail = self._failed
        self.client.on_publish = self._published

    def start(self) -> None:
        self.client.connect_async(self.address.host, self.address.port, keepalive=30)
        self.client.loop_start()

    def stop(self) -> None:
        """Disconnect and end paho's thread (blocks briefly: call it in an executor)."""
        with contextlib.suppress(Exception):
            self.client.disconnect()
        self.client.loop_stop()

    def set_password(self, password: str) -> None:
        """The password of the person's latest session, for the next connection."""
        self.client.username_pw_set(self.user, password)

    def publish(self, topic: str, payload: bytes) -> Publication:
        """QoS 1, not retained; paho keeps it while the link is down and sends it on return."""
        publication = Publication()
        # paho calls on_publish holding a lock that publish() takes too: ours is never
        # held across publish(), and an answer that comes first waits in _early.
        info = self.client.publish(topic, payload, qos=1)
        with self._lock:
            if info.mid in self._early:
                publication.settle(self._early.pop(info.mid))
            elif info.rc == mqtt.MQTT_ERR_QUEUE_SIZE:
                publication.settle("paho's queue is full")
            else:
                self._pending[info.mid] = publication
        return publication

    # paho's thread ---------------------------------------------------------------------

    def _post(self, callback: Callable[..., None], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closing: nobody listens
            self.loop.call_soon_threadsafe(callback, *args)

    def _connected(self, client: mqtt.Client, u: object, f: object, rc: Any, p: object) -> None:
        if rc.is_failure:
            self.refused = refusal(rc, self.user)
            log.warning("the broker refused %s: %s", self.user, rc)
            self.up = False
            self._post(self._on_change, False, self.refused)
            return
        self.refused, self.up = None, True
        self._post(self._on_change, True, None)

    def _disconnected(self, client: mqtt.Client, u: object, f: object, rc: Any, p: object) -> None:
        self.up = False
        self._post(self._on_change, False, self.refused)

    def _failed(self, client: mqtt.Client, userdata: object) -> None:
        self.up, self.refused = False, None
        self._post(self._on_change, False, None)

    def _published(
        self, client: mqtt.Client, userdata: object, mid: int, rc: Any, properties: object
    ) -> None:
        refused = None
        if rc is not None and getattr(rc, "is_failure", False):
            refused = f"the broker refused it for {self.user}: {str(rc).lower()}"
        with self._lock:
            publication = self._pending.pop(mid, None)
            if publication is None:
                self._early[mid] = refused
        if publication is not None:
            publication.settle(refused)
        self._post(self._on_answered)
