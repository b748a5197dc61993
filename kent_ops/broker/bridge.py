"""The Mosquitto configuration of a remote property's own broker, bridged to the command post.

An assembly "in the aggregate" (permit:A) can put gates, lots and staff stations on a
neighbour's field at the end of a radio or LTE link that drops. Their sensors and
deputies therefore talk to a broker on their own property, and that broker forwards
to the command post over a Mosquitto bridge that holds what it cannot send:

- QoS 1 both ways, MQTT 3.1.1, logged in as ``bridge-{property}`` (the command post's
  ACL grants that account exactly the topics below,
  :func:`kent_ops.broker.acl.bridge_topics`);
- over TLS, but not Mosquitto's own: the bridge speaks plain MQTT on the loopback to
  stunnel (:mod:`kent_ops.broker.tunnel`), which alone crosses the link over TLS,
  checking the command post's certificate. Debian 12's Mosquitto hangs for good when
  its TLS bridge connection is dropped mid-handshake (docs/security.md, "A flapping
  bridge link"); its plain bridge does not, and stunnel holds no message;
- a persistent session at both ends (``cleansession false``, fixed client ids), with
  persistence on and no-drop queue limits: during an outage the property's broker
  keeps every message for the command post, across its own clean restarts, and
  forwards them in order when the link returns (a bounded in-flight window keeps that
  order, see ``LIMITS``);
- **out**: only that property's sensor topics (a gate's counts, a lot's occupancy, a
  station's badges, their availability; a deputy's ``{gate}-manual`` tally is a gate)
  and the topics of the inspectors who may connect there; the Town Clerk and the
  notifier work at the command post and never connect to a property's broker;
- **in**: that property's gate commands, the status, the alerts and the aggregator's
  availability, so deputies there keep their ADMIT / HOLD from the local broker;
- the bridge's state, retained on the local broker only
  (``kent/{e}/bridge/{property}/state``: ``1`` up, ``0`` down), so a gate view there can
  say that the command post is unreachable.

What a ``kill -9`` (or a power cut) of the property's broker loses is set by its
autosave: at most ``autosave_changes - 1`` acknowledged messages
(:mod:`kent_ops.broker.persistence`; the README's "Several properties" states the
trade-off).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kent_ops.broker.acl import bridge_topics, bridge_user
from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.persistence import AUTOSAVE_CHANGES, autosave_lines
from kent_ops.broker.tunnel import DEFAULT_LINK_PORT, UNIT, Tunnel
from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics

__all__ = [
    "DEFAULT_DATA_DIR",
    "DEFAULT_ETC_DIR",
    "BridgeSettings",
    "bridge_config",
    "broker_dropin",
    "central_ca_path",
    "stunnel_config_path",
    "tunnel_for",
]

DEFAULT_ETC_DIR = Path("/etc/mosquitto/kent-ops")
DEFAULT_DATA_DIR = Path("/var/lib/mosquitto")
KEEPALIVE_S = 15
"""A link that dies silently (no TCP reset over radio) is noticed within 1.5 times this."""
RESTART_BASE_S, RESTART_CAP_S = 2, 10
"""Reconnection attempts: from 2 s, backing off to at most 10 s apart."""
INFLIGHT = 20
"""Messages the bridge may have unacknowledged at once (Mosquitto's own default)."""

LIMITS = f"""\
# Never drop a QoS 1 message: Mosquitto's default (max_queued_messages 1000) silently
# discards the overflow while still acknowledging it to the sensor. 0 means unlimited:
# a long outage costs memory and disk, never a reading.
max_queued_messages 0
max_queued_bytes 0
# But keep the in-flight window bounded: with no bound (0), Mosquitto 2.0 sends a reading
# that arrives while the bridge reconnects ahead of the backlog it held (measured: a few
# at every reconnection), and the aggregator takes a badge scan that comes after a later
# one as already counted. The window only paces the sending; the rest waits in the queue.
max_inflight_messages {INFLIGHT}
max_inflight_bytes 0
max_packet_size 262144
"""


@dataclass(frozen=True, slots=True)
class BridgeSettings:
    """Where the property's broker listens and keeps its files, and how it reaches the post.

    Args:
        property_id: the property, as in the permit's ``[[properties]]``.
        central: the command post's broker (``mqtts://host:port``).
        password: ``bridge-{property}``'s password at the command post.
        etc_dir: the folder on the property's machine with the ACL, the passwords, the
            command post's CA certificate and (with ``tls``) this broker's certificate.
        data_dir: where Mosquitto keeps its persistent database.
        port: the local listener's port (8883 with TLS, else 1883).
        bind: the local listener's address (all interfaces when None).
        tls: TLS on the local listener (``ca.crt``, ``server.crt``, ``server.key``).
        inspectors: the inspectors who may connect at this property.
        autosave_changes: changes between saves of the in-memory database (a kill -9
            loses at most one fewer acknowledged messages).
        link_port: stunnel's loopback port, where the bridge connects.
        restart_s: the bridge's reconnection attempts, from the first to at most the
            second number of seconds apart (a test's flapping link shortens them).
    """

    property_id: str
    central: BrokerAddress
    password: str = field(repr=False)
    etc_dir: Path = DEFAULT_ETC_DIR
    data_dir: Path = DEFAULT_DATA_DIR
    port: int | None = None
    bind: str | None = None
    tls: bool = False
    inspectors: Sequence[str] = ()
    autosave_changes: int = AUTOSAVE_CHANGES
    link_port: int = DEFAULT_LINK_PORT
    restart_s: tuple[int, int] = (RESTART_BASE_S, RESTART_CAP_S)

    @property
    def listen_port(self) -> int:
        return self.port if self.port is not None else (8883 if self.tls else 1883)

    @property
    def acl_path(self) -> Path:
        return self.etc_dir / f"acl-{self.property_id}"

    @property
    def password_path(self) -> Path:
        return self.etc_dir / f"passwords-{self.property_id}"


def central_ca_path(etc_dir: Path) -> Path:
    """Where the property's machine keeps the command post's CA certificate."""
    return etc_dir / "command-post-ca.crt"


def _head(permit: Permit, s: BridgeSettings) -> list[str]:
    return [
        f"# Mosquitto 2.0 configuration for the broker of property {s.property_id} of "
        f"{permit.event_name}",
        f"# ({permit.event_id}), permit {permit.number}, bridged to the command post at "
        f"{s.central.host}:{s.central.port}.",
        "# Generated by `kent-ops deploy bridge`. It REPLACES /etc/mosquitto/mosquitto.conf",
        "# and holds the bridge's password: keep it root:mosquitto, mode 640.",
        "",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {s.password_path}",
        f"acl_file {s.acl_path}",
        "",
    ]


def _listener(s: BridgeSettings) -> list[str]:
    where = f" {s.bind}" if s.bind else ""
    people = "deputies and inspectors" if s.inspectors else "deputies"
    lines = [
        f"# This property's gate counters, lot sensors, badge readers, {people}.",
        f"listener {s.listen_port}{where}",
    ]
    if s.tls:
        lines += [
            f"cafile {s.etc_dir / 'ca.crt'}",
            f"certfile {s.etc_dir / 'server.crt'}",
            f"keyfile {s.etc_dir / 'server.key'}",
            "tls_version tlsv1.2",
        ]
    return [*lines, ""]


def _storage(s: BridgeSettings) -> list[str]:
    return [
        "# Everything held for the command post survives a clean restart of this broker.",
        "# A kill -9 or a power cut loses what it took since its last save: it saves after",
        f"# every {s.autosave_changes} changes (a message held or delivered), so at most "
        f"{s.autosave_changes - 1}",
        "# acknowledged messages (README, 'Several properties').",
        "persistence true",
        f"persistence_location {s.data_dir}/",
        *autosave_lines(s.autosave_changes),
        "# persistent_client_expiration is not set: sessions (the bridge's too) never expire.",
        "",
        *LIMITS.splitlines(),
        "",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
        "log_type notice",
        "connection_messages true",
        "",
    ]


def _bridge(permit: Permit, s: BridgeSettings) -> list[str]:
    topics = Topics(permit.event_id)
    ident = f"{permit.event_id}-{s.property_id}"
    return [
        "# The bridge to the command post: QoS 1, a persistent session at both ends.",
        f"# It crosses the link to {s.central.host}:{s.central.port} through stunnel on this",
        "# machine's loopback, which alone speaks TLS and checks the command post's",
        f"# certificate against {central_ca_path(s.etc_dir)}. Not Mosquitto's own TLS: a",
        "# link dropped mid-handshake hangs Mosquitto 2.0.11 for good (docs/security.md).",
        f"connection kent-ops-{s.property_id}",
        f"address 127.0.0.1:{s.link_port}",
        "bridge_protocol_version mqttv311",
        "try_private true",
        f"remote_clientid kent-bridge-{ident}",
        f"local_clientid kent-bridge-local-{ident}",
        f"remote_username {bridge_user(s.property_id)}",
        f"remote_password {s.password}",
        "cleansession false",
        "local_cleansession false",
        "start_type automatic",
        f"restart_timeout {s.restart_s[0]} {s.restart_s[1]}",
        f"keepalive_interval {KEEPALIVE_S}",
        "bridge_attempt_unsubscribe false",
        "# The link's state for this property's screens: retained, 1 up, 0 down, here only.",
        "notifications true",
        "notifications_local_only true",
        f"notification_topic {topics.bridge_state(s.property_id)}",
        "",
    ]


def _topic_lines(permit: Permit, s: BridgeSettings) -> list[str]:
    routes = bridge_topics(permit, s.property_id, s.inspectors)
    lines = ["# out: this property's sensors (and inspectors) to the command post"]
    lines += [f"topic {t} out 1" for t in routes.out]
    lines += ["# in: its gates' orders, the status, the alerts, the aggregator's availability"]
    lines += [f"topic {t} in 1" for t in routes.inbound]
    return [*lines, ""]


def bridge_config(permit: Permit, settings: BridgeSettings) -> str:
    """The whole ``mosquitto.conf`` for one remote property's broker."""
    lines = [
        *_head(permit, settings),
        *_listener(settings),
        *_storage(settings),
        *_bridge(permit, settings),
        *_topic_lines(permit, settings),
    ]
    return "\n".join(lines)


def stunnel_config_path(etc_dir: Path) -> Path:
    """Where the property's machine keeps stunnel's configuration for the bridge."""
    return etc_dir / "stunnel.conf"


def tunnel_for(settings: BridgeSettings) -> Tunnel:
    """The stunnel that carries this bridge: loopback in, the command post's TLS out."""
    s = settings
    return Tunnel(
        property_id=s.property_id,
        listen_port=s.link_port,
        host=s.central.host,
        port=s.central.port,
        cafile=central_ca_path(s.etc_dir),
        config_path=stunnel_config_path(s.etc_dir),
    )


BROKER_DROPIN = f"""\
# systemd drop-in for the broker of a remote property (README, 'Several properties').
# Generated by `kent-ops deploy bridge`. Install as
# /etc/systemd/system/mosquitto.service.d/kent-ops.conf, then systemctl daemon-reload.
[Unit]
# The bridge reaches the command post only through stunnel.
Wants={UNIT}

[Service]
# Back whatever ends it, clean exit or not.
Restart=always
RestartSec=2
# A broker deaf to SIGTERM (as Mosquitto 2.0.11 is once its TLS bridge hangs it, see
# docs/security.md) is killed after 20 s, not Debian's 90: the property counts again
# sooner. A clean stop saves its queue within a second or two.
TimeoutStopSec=20
"""


def broker_dropin() -> str:
    """The systemd drop-in for the property's ``mosquitto.service``."""
    return BROKER_DROPIN
