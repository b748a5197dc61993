"""One retained message, read once with a bounded wait: a command's check before it starts.

A throwaway clean session subscribes, then unsubscribes: the broker sends the retained
message, if any, between the SUBACK and the UNSUBACK, so the UNSUBACK says the answer
is complete without guessing a delay. A broker that cannot be reached, or refuses the
account, gives no answer within the wait: the caller goes on without the check.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client, on_connack

__all__ = ["RetainedRead", "read_retained"]


@dataclass(frozen=True, slots=True)
class RetainedRead:
    """The broker answered (``payload`` None: nothing retained there), or did not."""

    answered: bool
    payload: bytes | None = None
    problem: str | None = None
    """Why the broker gave no answer (it refused the connection), or why its answer
    cannot hold the message (it refused the subscription)."""


def read_retained(
    address: BrokerAddress, topic: str, *, ca_file: str | None, wait_s: float, purpose: str = "read"
) -> RetainedRead:
    """The message retained on ``topic``, waiting at most ``wait_s`` for the broker.

    ``purpose`` names the throwaway session (``kent-ops-{purpose}-…``) in the broker's log.
    """
    got: dict[str, Any] = {}
    done = threading.Event()
    client = make_client(address, f"kent-ops-{purpose}-{secrets.token_hex(8)}", ca_file=ca_file)

    def refused(reason: mqtt.ReasonCode) -> None:
        got["problem"] = f"the broker refused the connection: {reason}"
        done.set()

    def on_subscribe(c: mqtt.Client, u: object, mid: int, codes: list[Any], p: object) -> None:
        if any(code.is_failure for code in codes):
            got["problem"] = (
                "this account may not read it (regenerate the ACL: kent-ops deploy acl)"
            )
        c.unsubscribe(topic)

    def on_unsubscribe(*args: object) -> None:
        got["answered"] = True
        done.set()

    on_connack(client, lambda c, flags: c.subscribe(topic, qos=1), refused)
    client.on_subscribe = on_subscribe
    client.on_message = lambda c, u, m: got.setdefault("payload", bytes(m.payload))
    client.on_unsubscribe = on_unsubscribe
    try:
        client.connect_async(address.host, address.port, keepalive=10)
        client.loop_start()
        done.wait(wait_s)
    finally:
        with contextlib.suppress(Exception):
            client.disconnect()
        client.loop_stop()
    if not got.get("answered"):
        return RetainedRead(False, problem=got.get("problem"))
    return RetainedRead(True, got.get("payload") or None, got.get("problem"))
