"""Every topic of the wire contract, built and parsed in one place.

The topic tree is ``kent/{event_id}/…`` (docs/protocol.md lists each topic, who
publishes it, its QoS and whether it is retained). :class:`Topics` builds each topic
for one event and :meth:`Topics.parse` reads any topic back into a :class:`TopicRef`,
so the aggregator, the sensors, the dashboards and the deploy command can never
disagree about a topic's shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from kent_ops.core.sensor_kinds import GATE, LOT, SENSOR_KINDS, STATION, SensorKind, by_name

__all__ = ["INSPECTOR_ACTIONS", "OTHER_KINDS", "ROOT", "TopicKind", "TopicRef", "Topics"]

ROOT = "kent"
"""The first level of every topic."""

TopicKind = str
"""What a topic names: a sensor kind's ``record`` (:mod:`kent_ops.core.sensor_kinds`) or
one of :data:`OTHER_KINDS`."""

OTHER_KINDS: tuple[str, ...] = (
    "availability",
    "note",
    "ack",
    "inspection",
    "adjust",
    "clerk-permit",
    "notifier-sent",
    "status",
    "alert",
    "command",
    "checkpoint",
    "aggregator-availability",
    "bridge-state",
    "adapter-raw",
)
"""Every kind of topic that is not a sensor's reading."""

INSPECTOR_ACTIONS: tuple[str, ...] = ("note", "ack", "inspection", "adjust")
"""The leaves of ``inspector/{who}/…``, each also the record kind it decodes to."""

# (area, leaf) of a three-level topic ``{area}/{id}/{leaf}`` -> its kind
_THREE_LEVEL: dict[tuple[str, str], TopicKind] = {
    **{(kind.area, m.leaf): m.record for kind in SENSOR_KINDS for m in kind.messages},
    ("sensor", "availability"): "availability",
    ("inspector", "note"): "note",
    ("inspector", "ack"): "ack",
    ("inspector", "inspection"): "inspection",
    ("inspector", "adjust"): "adjust",
    ("clerk", "permit"): "clerk-permit",
    ("notifier", "sent"): "notifier-sent",
    ("gate", "command"): "command",
    ("bridge", "state"): "bridge-state",
    ("adapter", "raw"): "adapter-raw",
}
_TWO_LEVEL: dict[tuple[str, str], TopicKind] = {
    ("evidence", "checkpoint"): "checkpoint",
    ("aggregator", "availability"): "aggregator-availability",
}


class TopicRef(NamedTuple):
    """What a topic names: its kind and the id in it (a sensor, a person, an alert)."""

    kind: TopicKind
    id: str


class TopicProblem(NamedTuple):
    """A topic under the event's prefix that is not one of ours, and why.

    ``specific`` is False when the topic is simply not in the tree (the reader words
    that for its own audience) and True when the reason says what exactly is wrong.
    """

    id: str
    reason: str
    specific: bool = True


@dataclass(frozen=True, slots=True)
class Topics:
    """The topics of one event: build any of them, or parse one back."""

    event_id: str

    @property
    def prefix(self) -> str:
        return f"{ROOT}/{self.event_id}"

    # -- sensors ------------------------------------------------------------------------

    def reading(self, kind: SensorKind | str, sensor: str) -> str:
        """Where a sensor of ``kind`` (a kind, or its name) publishes its readings."""
        return (by_name(kind) if isinstance(kind, str) else kind).topic(self.prefix, sensor)

    def gate_count(self, gate: str) -> str:
        return self.reading(GATE, gate)

    def lot_occupancy(self, lot: str) -> str:
        return self.reading(LOT, lot)

    def staff_badge(self, station: str) -> str:
        return self.reading(STATION, station)

    def staff_roster(self, station: str) -> str:
        """Where a badge reader re-states who is on duty at its station."""
        return self.sensor_topics(STATION, station)[1]

    def sensor_topics(self, kind: SensorKind | str, sensor: str) -> list[str]:
        """Every topic a sensor of ``kind`` publishes on: its readings, and its
        re-statement where its kind has one (its availability aside)."""
        return (by_name(kind) if isinstance(kind, str) else kind).topics(self.prefix, sensor)

    def availability(self, sensor: str) -> str:
        return f"{self.prefix}/sensor/{sensor}/availability"

    def adapter_raw(self, sensor: str) -> str:
        """A rented device's message as received, with its translation (``kent-ops adapt``)."""
        return f"{self.prefix}/adapter/{sensor}/raw"

    # -- people -------------------------------------------------------------------------

    def inspector(self, who: str, action: str) -> str:
        return f"{self.prefix}/inspector/{who}/{action}"

    def clerk_permit(self, who: str) -> str:
        return f"{self.prefix}/clerk/{who}/permit"

    def notifier_sent(self, notifier: str) -> str:
        return f"{self.prefix}/notifier/{notifier}/sent"

    # -- the aggregator -----------------------------------------------------------------

    @property
    def status(self) -> str:
        return f"{self.prefix}/status"

    def alert(self, alert_id: str) -> str:
        return f"{self.prefix}/alerts/{alert_id}"

    @property
    def alerts_wildcard(self) -> str:
        return f"{self.prefix}/alerts/+"

    def gate_command(self, gate: str) -> str:
        return f"{self.prefix}/gate/{gate}/command"

    @property
    def gate_commands_wildcard(self) -> str:
        return f"{self.prefix}/gate/+/command"

    @property
    def checkpoint(self) -> str:
        return f"{self.prefix}/evidence/checkpoint"

    @property
    def aggregator_availability(self) -> str:
        return f"{self.prefix}/aggregator/availability"

    # -- a remote property's broker -----------------------------------------------------

    def bridge_state(self, property_id: str) -> str:
        """Where a property's broker says whether its bridge to the command post is up.

        Mosquitto publishes it (retained, ``1`` up, ``0`` down) on that property's own
        broker only (docs/protocol.md, "Remote properties: bridges").
        """
        return f"{self.prefix}/bridge/{property_id}/state"

    @property
    def bridge_states(self) -> str:
        return f"{self.prefix}/bridge/+/state"

    @property
    def everything(self) -> str:
        return f"{self.prefix}/#"

    @property
    def inputs(self) -> list[str]:
        """What the aggregator subscribes to: every sensor, inspector, clerk and notifier topic."""
        p = self.prefix
        return [
            *(topic for kind in SENSOR_KINDS for topic in kind.topics(p, "+")),
            f"{p}/sensor/+/availability",
            f"{p}/inspector/+/+",
            f"{p}/clerk/+/permit",
            f"{p}/notifier/+/sent",
            f"{p}/adapter/+/raw",
        ]

    # -- reading a topic back -----------------------------------------------------------

    def parse(self, topic: str) -> TopicRef | TopicProblem | None:
        """What ``topic`` names; None when it is not under this event's prefix.

        A topic under the prefix that is not one of ours gives a :class:`TopicProblem`
        with the reason in one sentence (the aggregator records it as rejected).
        """
        prefix = self.prefix
        if not topic.startswith(prefix) or topic[len(prefix) : len(prefix) + 1] != "/":
            return None
        parts = topic[len(prefix) + 1 :].split("/")
        if len(parts) == 1 and parts[0] == "status":
            return TopicRef("status", "")
        if len(parts) == 2:
            if parts[0] == "alerts" and parts[1]:
                return TopicRef("alert", parts[1])
            kind2 = _TWO_LEVEL.get((parts[0], parts[1]))
            if kind2 is not None:
                return TopicRef(kind2, "")
        if len(parts) == 3:
            area, ident, leaf = parts
            kind3 = _THREE_LEVEL.get((area, leaf))
            if kind3 is not None:
                if not ident:
                    return TopicProblem(ident, f"{area} id is empty")
                return TopicRef(kind3, ident)
            if area == "inspector":
                *first, last = INSPECTOR_ACTIONS
                return TopicProblem(
                    ident, f"inspector topic {leaf!r} is not {', '.join(first)} or {last}"
                )
        return TopicProblem(
            parts[1] if len(parts) == 3 else "", f"topic {topic!r} is not a kent-ops topic", False
        )
