"""Whether this property's broker can reach the command post: the bridge's own word.

On a remote property the gate view talks to that property's broker, which forwards to
the command post over a Mosquitto bridge (docs/protocol.md, "Remote properties:
bridges"). When the radio or LTE link drops, the local broker stays up, the last order
stays retained, and only the bridge knows the command post is out of reach: Mosquitto
publishes that, retained, on ``kent/{e}/bridge/{property}/state`` (``1`` up, ``0`` down)
on the property's broker only (read by :func:`kent_ops.core.wire.decode_bridge_state`).
This module watches it so the view can say so, instead of a bare "no status for 40 s".

The feed decodes only the aggregator's topics; the bridge's topic is routed to
:func:`watch_bridge`'s callback by paho (``message_callback_add``), so the shared feed
stays unchanged and the message still arrives on the feed's own connection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo

import paho.mqtt.client as mqtt
from textual.message import Message

from dashboards.common.feed import MqttFeed
from dashboards.common.format import local_clock
from kent_ops.core.wire import TopicRef, Topics, decode_bridge_state

__all__ = ["BridgeChanged", "bridge_problem", "watch_bridge"]


@dataclass(eq=False)
class BridgeChanged(Message):
    """The property's bridge to the command post came up (``up``) or went down."""

    property_id: str
    up: bool
    retained: bool
    """A retained state found on subscribing: when it changed is not known."""


def _decode(topics: Topics, msg: mqtt.MQTTMessage) -> BridgeChanged | None:
    ref = topics.parse(msg.topic)
    if not isinstance(ref, TopicRef) or ref.kind != "bridge-state":
        return None
    up = decode_bridge_state(msg.payload)
    if up is None:
        return None
    return BridgeChanged(ref.id, up, bool(msg.retain))


def watch_bridge(feed: MqttFeed, post: Callable[[Message], object]) -> None:
    """Route the bridge states the feed receives to ``post`` (thread-safe, e.g. the app's).

    The feed must subscribe to :attr:`Topics.bridge_states` itself.
    """
    topics = feed.topics

    def on_state(client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        change = _decode(topics, msg)
        if change is not None:
            post(change)

    feed.client.message_callback_add(topics.bridge_states, on_state)


def bridge_problem(down_since: datetime | None, status_ts: datetime | None, zone: tzinfo) -> str:
    """The banner's sentence while the command post cannot be reached from this property."""
    since = f" since {local_clock(down_since, zone)}" if down_since is not None else ""
    shown = (
        f"figures from {local_clock(status_ts, zone)}" if status_ts is not None else "no figures"
    )
    return (
        f"Command post unreachable{since}: this property's link is down; "
        f"showing the last order received and {shown}"
    )
