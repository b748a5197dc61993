"""The MQTT edge: broker URLs and a paho client set up the way kent-ops needs.

Everything that talks to the broker (aggregator, dashboards, sensors, simulator) builds
its client here, so TLS, credentials, last wills and protocol choices are made once.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from kent_ops.core.errors import UsageError
from kent_ops.core.wire.availability import AVAILABILITY_OFFLINE

__all__ = [
    "BrokerAddress",
    "BrokerUrlError",
    "make_client",
    "on_connack",
    "parse_broker_url",
]

DEFAULT_BROKER_URL = "mqtt://localhost:1883"


class BrokerUrlError(UsageError, ValueError):
    """A ``--broker`` value that is not ``mqtt://[user:pass@]host:port`` or ``mqtts://…``.

    A usage error: the command line prints it as one line and exits 2.
    """


@dataclass(frozen=True, slots=True)
class BrokerAddress:
    """Where the broker is and how to log in to it."""

    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = None

    @property
    def url(self) -> str:
        scheme = "mqtts" if self.tls else "mqtt"
        auth = f"{self.username}@" if self.username else ""
        return f"{scheme}://{auth}{self.host}:{self.port}"


def parse_broker_url(url: str) -> BrokerAddress:
    """Parse ``mqtt://[user:pass@]host:port`` or ``mqtts://…``; raise BrokerUrlError."""
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts"):
        raise BrokerUrlError(
            f"broker URL {url!r} must start with mqtt:// or mqtts://, e.g. mqtt://localhost:1883"
        )
    tls = parts.scheme == "mqtts"
    try:
        port = parts.port
    except ValueError:
        raise BrokerUrlError(f"broker URL {url!r} has a port that is not a number") from None
    if not parts.hostname:
        raise BrokerUrlError(f"broker URL {url!r} names no host")
    return BrokerAddress(
        host=parts.hostname,
        port=port or (8883 if tls else 1883),
        tls=tls,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
    )


def make_client(
    address: BrokerAddress,
    client_id: str = "",
    *,
    clean_start: bool = True,
    ca_file: str | None = None,
    will_topic: str | None = None,
    will_payload: bytes | str = AVAILABILITY_OFFLINE,
    will_retain: bool = True,
    manual_ack: bool = False,
    protocol: mqtt.MQTTProtocolVersion = mqtt.MQTTv311,
) -> mqtt.Client:
    """A paho 2.x client (callback API v2), configured but not yet connected.

    ``clean_start=False`` with a fixed ``client_id`` gives a persistent session: the broker
    keeps QoS 1 messages for us while we are away. ``manual_ack`` defers the PUBACK until
    the caller says the message is safe (the aggregator acks after the evidence commit).
    """
    client = mqtt.Client(
        callback_api_version=CallbackAPIVersion.VERSION2,
        client_id=client_id,
        # paho takes no clean_session under MQTT 5 (its clean start is a connect option).
        clean_session=None if protocol == mqtt.MQTTv5 else clean_start,
        protocol=protocol,
        manual_ack=manual_ack,
    )
    if address.username is not None:
        client.username_pw_set(address.username, address.password)
    if address.tls:
        context = ssl.create_default_context(cafile=ca_file)
        client.tls_set_context(context)
    if will_topic is not None:
        client.will_set(will_topic, will_payload, qos=1, retain=will_retain)
    # A field network drops and returns; come back within seconds, not half a minute.
    client.reconnect_delay_set(min_delay=1, max_delay=5)
    client.max_inflight_messages_set(100)
    client.max_queued_messages_set(0)
    return client


def on_connack(
    client: mqtt.Client,
    accepted: Callable[[mqtt.Client, mqtt.ConnectFlags], object],
    refused: Callable[[mqtt.ReasonCode], None],
) -> None:
    """Answer each CONNACK: ``accepted(client, flags)`` when the broker let us in,
    ``refused(reason)`` when it did not (both on paho's network thread).

    Every connection kent-ops makes branches on the same answer; this is paho's
    five-argument callback written once.
    """

    def callback(
        c: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason_code: mqtt.ReasonCode,
        properties: mqtt.Properties | None,
    ) -> None:
        if reason_code.is_failure:
            refused(reason_code)
        else:
            accepted(c, flags)

    client.on_connect = callback
