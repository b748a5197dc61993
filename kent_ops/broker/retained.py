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

from kent_ops.broker.client import BrokerAddress, make_client

__all__ = ["RetainedRead", "read_retained"]


@dataclass(frozen=True, slots=True)
class RetainedRead:
    """The broker answered (``payload`` None: nothing retained there), or did not."""

    answered: bool
    payload: bytes | None = None


def read_retained(
    address: BrokerAddress, topic: str, *, ca_file: str | None, wait_s: float
) -> RetainedRead:
    """The message retained on ``topic``, waiting at most ``wait_s`` for the broker."""
    got: dict[str, Any] = {}
    done = threading.Event()
    client = make_client(address, f"kent-ops-read-{secrets.token_hex(8)}", ca_file=ca_file)

    def on_connect(c: mqtt.Client, u: object, flags: object, rc: Any, p: object) -> None:
        if rc.is_failure:
            done.set()
        else:
            c.subscribe(topic, qos=1)

    def on_subscribe(c: mqtt.Client, u: object, mid: int, codes: list[Any], p: object) -> None:
        c.unsubscribe(topic)

    def on_unsubscribe(*args: object) -> None:
        got["answered"] = True
        done.set()

    client.on_connect = on_connect
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
        return RetainedRead(False)
    return RetainedRead(True, got.get("payload") or None)
