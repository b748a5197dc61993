"""The broker's access list, generated from the permit: each client may do its own job only.

At an event the broker sits on a laptop in a field and anyone on the event Wi-Fi can
reach it. Mosquitto denies everything an ACL does not grant, and ``allow_anonymous
false`` turns away clients without a password. One user name a role and person:

=========================  ==========================================================
user name                  may
=========================  ==========================================================
``kent-ops-aggregator``    read every sensor, inspector, clerk and notifier topic, its
                           own checkpoint and the broker's uptime; write status,
                           alerts, gate commands, checkpoints, its availability
``sensor-{id}``            write its own count / occupancy / badge (and roster) topic
                           and its availability (one user per gate, lot and staff
                           station); a rented device writes its own topic instead
                           (``source``)
``kent-ops-adapter``       read the rented devices' own topics; write exactly their
                           sensors' kent-ops topics and ``adapter/{sensor}/raw``
``deputy-{gate}``          every gate's deputy: read the event (its order, the status);
                           write only the ``{gate}-manual`` counter, and only where the
                           permit lists that manual tally
``inspector-{id}``         read the event; write only ``inspector/{id}/…``
``clerk-{id}``             read the event; write only ``clerk/{id}/permit`` (permit:G)
``notifier-{id}``          read the event; write only ``notifier/{id}/sent``
``dashboard``              read the event
``bridge-{property}``      the broker of a remote property (``--bridge``): write exactly
                           that property's sensor (and its inspectors') topics; read its
                           gates' commands, the status, the alerts and the
                           aggregator's availability (:mod:`kent_ops.broker.bridge`)
=========================  ==========================================================

A remote property's own broker gets an access list of its own
(:func:`property_acl_text`): its sensors, its deputies, the inspectors who may connect
there and ``dashboard``. docs/protocol.md lists the same roles beside each topic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kent_ops.broker.mosquitto import UPTIME_TOPIC
from kent_ops.core.gate_view import manual_gate
from kent_ops.core.permit import Permit
from kent_ops.core.sensor_kinds import GATE
from kent_ops.core.wire import Topics

__all__ = [
    "ADAPTER_USER",
    "AGGREGATOR_USER",
    "DASHBOARD_USER",
    "BridgeTopics",
    "People",
    "acl_text",
    "bridge_topics",
    "bridge_user",
    "check_person_id",
    "check_property",
    "deputy_gates",
    "tally_gates",
    "property_acl_text",
    "property_sensors",
    "property_users",
    "users_for",
]

AGGREGATOR_USER = "kent-ops-aggregator"
ADAPTER_USER = "kent-ops-adapter"
DASHBOARD_USER = "dashboard"
SIMULATOR_USER = "simulator"


@dataclass(frozen=True, slots=True)
class People:
    """The persons (and services) who get an account of their own, by role."""

    inspectors: Sequence[str] = ()
    clerks: Sequence[str] = ()
    notifiers: Sequence[str] = field(default_factory=tuple)
    bridges: Sequence[str] = ()
    """Remote properties whose own broker is bridged to this one (an account each)."""
    simulator: bool = False
    """An account for ``kent-ops simulate`` in a rehearsal: it may publish as every sensor
    the simulator plays, so it has no place on an event's broker."""


@dataclass(frozen=True, slots=True)
class BridgeTopics:
    """What one remote property's bridge carries, topic by topic, at QoS 1.

    The same lists make the bridge's ``topic`` lines and its account on the command
    post's broker, so the two can never disagree.
    """

    out: tuple[str, ...]
    """Property -> command post: its sensors' readings and availability, its inspectors'."""
    inbound: tuple[str, ...]
    """Command post -> property: its gates' commands, the status, the alerts, availability."""


def check_person_id(role: str, who: str) -> str | None:
    """Why ``who`` cannot name a person in a topic, or None if it can."""
    if not who or any(c in who for c in "/+#") or who.strip() != who:
        return f"{role} id {who!r} cannot be used in an MQTT topic"
    return None


def check_property(permit: Permit, property_id: str) -> str | None:
    """Why ``property_id`` names no property of the permit, or None if it does."""
    known = [p.id for p in permit.properties]
    if property_id in known:
        return None
    return (
        f"property {property_id!r} is not in the permit {permit.number} "
        f"(its properties: {', '.join(known)})"
    )


def bridge_user(property_id: str) -> str:
    """The command post's account for the bridge of one remote property."""
    return f"bridge-{property_id}"


def property_sensors(permit: Permit, property_id: str) -> dict[str, str]:
    """The sensors standing on one property, with their kinds, in the permit's order.

    A boundary gate of the property, a gate between it and another property (its
    counter connects to the broker of the property it stands on: either), a lot and a
    staff station on it. A ``{gate}-manual`` tally is a gate like any other.
    """
    return {
        sensor: kind
        for sensor, kind in permit.sensors.items()
        if property_id in permit.properties_of(sensor)
    }


def bridge_topics(permit: Permit, property_id: str, inspectors: Sequence[str] = ()) -> BridgeTopics:
    """Exactly the topics a property's bridge forwards out and receives in."""
    topics = Topics(permit.event_id)
    sensors = property_sensors(permit, property_id)
    out: list[str] = []
    for sensor, kind in sensors.items():
        out += [*topics.sensor_topics(kind, sensor), topics.availability(sensor)]
    out += [topics.inspector(who, "+") for who in inspectors]
    inbound = [topics.gate_command(g) for g, kind in sensors.items() if kind == GATE.name]
    inbound += [topics.status, topics.alerts_wildcard, topics.aggregator_availability]
    return BridgeTopics(tuple(out), tuple(inbound))


def deputy_gates(permit: Permit) -> list[str]:
    """The gates a deputy may stand at: every gate of the permit but the manual tallies."""
    return [g for g in permit.gates if g not in permit.manual_gates]


def tally_gates(permit: Permit) -> list[str]:
    """Gates whose deputy keeps a manual tally: those with a ``{gate}-manual`` listed."""
    return [g for g in deputy_gates(permit) if manual_gate(g) in permit.gates]


def users_for(permit: Permit, people: People) -> list[str]:
    """Every user name the ACL grants something to, for the password file."""
    users = [AGGREGATOR_USER, DASHBOARD_USER]
    users += [ADAPTER_USER] if permit.sources else []
    users += [f"sensor-{sensor}" for sensor in permit.sensors]
    users += [f"deputy-{gate}" for gate in deputy_gates(permit)]
    users += [f"inspector-{who}" for who in people.inspectors]
    users += [f"clerk-{who}" for who in people.clerks]
    users += [f"notifier-{who}" for who in people.notifiers]
    users += [bridge_user(p) for p in people.bridges]
    users += [SIMULATOR_USER] if people.simulator else []
    return users


def _property_deputies(permit: Permit, property_id: str) -> list[str]:
    sensors = property_sensors(permit, property_id)
    return [g for g in deputy_gates(permit) if g in sensors]


def property_users(permit: Permit, property_id: str, inspectors: Sequence[str] = ()) -> list[str]:
    """Every user name a remote property's own broker grants something to."""
    users = [DASHBOARD_USER]
    users += [f"sensor-{sensor}" for sensor in property_sensors(permit, property_id)]
    users += [f"deputy-{gate}" for gate in _property_deputies(permit, property_id)]
    users += [f"inspector-{who}" for who in inspectors]
    return users


def sensor_topic(topics: Topics, kind: str, sensor: str) -> str:
    """The topic a sensor of this kind publishes its readings on."""
    return topics.reading(kind, sensor)


def _aggregator(topics: Topics) -> list[str]:
    lines = [f"user {AGGREGATOR_USER}"]
    lines += [f"topic read {t}" for t in topics.inputs]
    lines += [f"topic read {UPTIME_TOPIC}"]  # a broker restart (docs/protocol.md)
    lines += [
        f"topic write {topics.status}",
        f"topic write {topics.alerts_wildcard}",
        f"topic write {topics.gate_commands_wildcard}",
        # read too: at a start it reads its retained checkpoint back (docs/protocol.md)
        f"topic readwrite {topics.checkpoint}",
        f"topic readwrite {topics.aggregator_availability}",
    ]
    return lines


def _adapter(permit: Permit, topics: Topics) -> list[str]:
    """The adapter reads the devices' own topics (when they publish on this broker) and
    writes exactly the kent-ops topics of the sensors they stand for, and their raw records."""
    lines = ["# rented devices, translated by `kent-ops adapt`", f"user {ADAPTER_USER}"]
    for spec in permit.sources.values():
        if spec.topic is not None:
            lines.append(f"topic read {spec.topic}")
        lines.append(f"topic write {sensor_topic(topics, spec.kind, spec.sensor)}")
        lines.append(f"topic write {topics.adapter_raw(spec.sensor)}")
    return [*lines, ""]


def _sensor(topics: Topics, sensor: str, kind: str, permit: Permit | None = None) -> list[str]:
    source = permit.sources.get(sensor) if permit is not None else None
    if source is not None:  # a rented device: its own topic; only the adapter writes ours
        own = [f"topic write {source.topic}"] if source.topic is not None else []
        return [f"user sensor-{sensor}", *own, f"topic write {topics.availability(sensor)}", ""]
    return [
        f"user sensor-{sensor}",
        *(f"topic write {topic}" for topic in topics.sensor_topics(kind, sensor)),
        f"topic write {topics.availability(sensor)}",
        "",
    ]


def _deputy(permit: Permit, topics: Topics, gate: str) -> list[str]:
    """Every gate's deputy reads its order; only a gate with a manual tally may count."""
    lines = [f"user deputy-{gate}", f"topic read {topics.everything}"]
    if gate in tally_gates(permit):
        tally = manual_gate(gate)
        lines += [
            f"topic write {topics.gate_count(tally)}",
            f"topic write {topics.availability(tally)}",
        ]
    return [*lines, ""]


def _inspector(topics: Topics, who: str) -> list[str]:
    return [
        f"user inspector-{who}",
        f"topic read {topics.everything}",
        f"topic write {topics.inspector(who, '+')}",
        "",
    ]


def _bridge(permit: Permit, property_id: str, inspectors: Sequence[str]) -> list[str]:
    routes = bridge_topics(permit, property_id, inspectors)
    lines = [f"# the broker of {property_id}, over its bridge (kent-ops deploy bridge)"]
    lines += [f"user {bridge_user(property_id)}"]
    lines += [f"topic write {t}" for t in routes.out]
    lines += [f"topic read {t}" for t in routes.inbound]
    return [*lines, ""]


def acl_text(permit: Permit, people: People) -> str:
    """The Mosquitto ACL file for this permit's sensors, deputies, inspectors and clerks."""
    topics = Topics(permit.event_id)
    everything = topics.everything
    lines = [
        f"# kent-ops ACL for {permit.event_name} ({permit.event_id}), permit {permit.number}.",
        "# Generated by `kent-ops deploy acl`; regenerate when the permit's sensors change.",
        "# Anything not granted here is denied.",
        "",
        *_aggregator(topics),
        "",
        f"user {DASHBOARD_USER}",
        f"topic read {everything}",
        "",
    ]
    if permit.sources:
        lines += _adapter(permit, topics)
    for sensor, kind in permit.sensors.items():
        lines += _sensor(topics, sensor, kind, permit)
    for gate in deputy_gates(permit):
        lines += _deputy(permit, topics, gate)
    for who in people.inspectors:
        lines += _inspector(topics, who)
    for role, ids, topic in (
        ("clerk", people.clerks, topics.clerk_permit),
        ("notifier", people.notifiers, topics.notifier_sent),
    ):
        for who in ids:
            lines += [
                f"user {role}-{who}",
                f"topic read {everything}",
                f"topic write {topic(who)}",
                "",
            ]
    for property_id in people.bridges:
        lines += _bridge(permit, property_id, people.inspectors)
    if people.simulator:
        lines += _simulator(permit, topics)
    return "\n".join(lines)


def _simulator(permit: Permit, topics: Topics) -> list[str]:
    """A rehearsal's ``kent-ops simulate``: every sensor it plays (not the deputies' tallies)."""
    lines = [
        "# a rehearsal's simulator (`kent-ops simulate`): it publishes as every sensor,",
        "# so never grant it on an event's broker",
        f"user {SIMULATOR_USER}",
    ]
    for sensor, kind in permit.sensors.items():
        if not permit.sensor_kind(sensor).simulated:  # a deputy's tally is the deputy's
            continue
        lines += [f"topic write {topic}" for topic in topics.sensor_topics(kind, sensor)]
        lines.append(f"topic write {topics.availability(sensor)}")
    return [*lines, ""]


def property_acl_text(permit: Permit, property_id: str, inspectors: Sequence[str] = ()) -> str:
    """The ACL of a remote property's own broker: that property's sensors and people only.

    The bridge itself needs no entry (Mosquitto does not check its own bridge against
    the ACL); what it may carry is fixed by its ``topic`` lines and, at the command
    post, by the ``bridge-{property}`` account.
    """
    topics = Topics(permit.event_id)
    lines = [
        f"# kent-ops ACL for the broker of property {property_id} of {permit.event_name} "
        f"({permit.event_id}), permit {permit.number}.",
        "# Generated by `kent-ops deploy bridge`; regenerate when the permit's sensors change.",
        "# Anything not granted here is denied.",
        "",
        f"user {DASHBOARD_USER}",
        f"topic read {topics.everything}",
        "",
    ]
    for sensor, kind in property_sensors(permit, property_id).items():
        lines += _sensor(topics, sensor, kind)
    for gate in _property_deputies(permit, property_id):
        lines += _deputy(permit, topics, gate)
    for who in inspectors:
        lines += _inspector(topics, who)
    return "\n".join(lines)
