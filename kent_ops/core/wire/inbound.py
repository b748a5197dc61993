"""What the aggregator hears: every inbound payload as a typed, frozen record.

Every message the aggregator receives passes through :func:`decode` exactly once. It
never raises; a bad payload comes back as a :class:`Rejection` whose ``reason`` is one
plain sentence, stored in the evidence log beside the raw bytes. Stateful checks
(falling totals, an ack for an unknown alert) belong to the counting state and the
engine, not here. docs/protocol.md describes each payload for device makers.

A sensor's payload is declared with its kind (:mod:`kent_ops.core.sensor_kinds.payloads`, one
entry of :data:`kent_ops.core.sensor_kinds.SENSOR_KINDS` each) and re-exported here; the
routes and checks below take every kind from that table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, NamedTuple, Protocol

import msgspec

from kent_ops.core.sensor_kinds import (
    MAX_COUNT,
    ROLES,
    SENSOR_KINDS,
    Badge,
    GateCount,
    LotOccupancy,
    OnDuty,
    Reading,
    Role,
    Roster,
    check_gate,
    count_problem,
)
from kent_ops.core.timeutil import EARLIEST, LATEST, instant_problem
from kent_ops.core.wire.adapter import AdapterRaw, check_raw
from kent_ops.core.wire.availability import decode_sensor_availability
from kent_ops.core.wire.signing import unsign
from kent_ops.core.wire.topics import ROOT, TopicProblem, Topics

__all__ = [
    "INBOUND_KINDS",
    "INSPECTION_RESULTS",
    "MAX_COUNT",
    "MAX_PAYLOAD_BYTES",
    "MAX_TEXT",
    "ROLES",
    "Ack",
    "Adjust",
    "Availability",
    "Badge",
    "ClerkPermit",
    "Decoded",
    "GateCount",
    "Inspection",
    "LotOccupancy",
    "Note",
    "NotifierSent",
    "OnDuty",
    "PERMIT_STATUSES",
    "InspectionResult",
    "PermitStatus",
    "Record",
    "Rejection",
    "Role",
    "Roster",
    "SENSOR_CLOCK_MARGIN",
    "Span",
    "decode",
    "decode_bridge_state",
    "payload_problem",
    "steady_gate_count",
    "sensor_clock_span",
]

MAX_PAYLOAD_BYTES = 64 * 1024
"""A payload over 64 KiB is rejected unread."""
MAX_TEXT = 4000
"""The longest note an inspector may send, in characters."""

SENSOR_CLOCK_MARGIN = timedelta(days=30)
"""On the sensor clock a message is taken at its own ``ts``: one that lies further than
this before the permit's first window or after its last is refused, so no sensor can
move the engine's time (and the report's timeline) years away from the event."""

Span = tuple[datetime, datetime]
"""The first and last ``ts`` a message may carry (inclusive)."""

InspectionResult = Literal["ok", "deficient", "n/a"]
INSPECTION_RESULTS: tuple[InspectionResult, ...] = ("ok", "deficient", "n/a")
"""What an inspector may mark a checklist item (docs/protocol.md, "inspection")."""
PermitStatus = Literal["revoked", "issued"]
PERMIT_STATUSES: tuple[PermitStatus, ...] = ("revoked", "issued")
"""What the Town Clerk may set the permit to: revoked, or issued again (permit:G)."""


class Note(msgspec.Struct, frozen=True, omit_defaults=True):
    """An inspector's note, optionally about one alert (left out when it is about none)."""

    ts: datetime
    text: str
    alert: str | None = None


class Ack(msgspec.Struct, frozen=True):
    """An inspector acknowledges an alert."""

    ts: datetime
    alert: str
    comment: str = ""


class Inspection(msgspec.Struct, frozen=True, omit_defaults=True):
    """One item of the facilities checklist, marked by an inspector (permit:C, D, F);
    an empty note is left out."""

    ts: datetime
    item: str
    result: InspectionResult
    note: str = ""


class Adjust(msgspec.Struct, frozen=True):
    """An inspector corrects drift: attendance becomes the counters plus an offset."""

    ts: datetime
    attendance: int
    reason: str


class ClerkPermit(msgspec.Struct, frozen=True):
    """The Town Clerk, for the Town Board: the permit's status from ``effective_at`` on.

    ``revoked`` revokes the permit (permit:G); ``issued`` reinstates it.
    """

    ts: datetime
    status: PermitStatus
    effective_at: datetime
    resolution: str
    reason: str = ""


class NotifierSent(msgspec.Struct, frozen=True):
    """One attempt to tell a person about an alert: who (an id, never an address), how."""

    ts: datetime
    alert: str
    state: str
    to: str
    channel: str
    ok: bool
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Availability:
    """A sensor's retained online/offline (its last will says offline)."""

    online: bool


Payload = Reading | Note | Ack | Inspection | Adjust | ClerkPermit | NotifierSent | AdapterRaw
"""A payload as decoded from its JSON bytes."""
Record = Payload | Availability
"""A decoded message's record: a payload, or a sensor's retained availability."""


class Decoded(NamedTuple):
    """A message that parsed: its kind, its source (sensor or person id) and its record."""

    kind: str
    source: str
    record: Record


class Rejection(NamedTuple):
    """A message that did not parse; ``reason`` is one sentence for the evidence log."""

    kind: str
    reason: str


# kind -> (payload type, the kind of sensor the permit must list it as, or None for people);
# each kind of sensor's readings as its entry in core/sensor_kinds/table.py declares them
_PAYLOADS: dict[str, tuple[type[Payload], str | None]] = {
    **{m.record: (m.payload, kind.name) for kind in SENSOR_KINDS for m in kind.messages},
    "note": (Note, None),
    "ack": (Ack, None),
    "inspection": (Inspection, None),
    "adjust": (Adjust, None),
    "clerk-permit": (ClerkPermit, None),
    "notifier-sent": (NotifierSent, None),
    "adapter-raw": (AdapterRaw, "any"),  # a rented device's bytes, for any listed sensor
}
INBOUND_KINDS: frozenset[str] = frozenset({*_PAYLOADS, "availability"})
"""The kinds of record the aggregator takes in."""
_SIGNED_KINDS = frozenset(m.record for kind in SENSOR_KINDS for m in kind.messages)
_SENSOR_CHECKS: dict[type[Payload], Callable[[Any], str | None]] = {
    m.payload: m.check for kind in SENSOR_KINDS for m in kind.messages
}
_DECODERS: dict[type[Payload], msgspec.json.Decoder[Payload]] = {
    cls: msgspec.json.Decoder(cls) for cls, _ in _PAYLOADS.values()
}

_Route = tuple[str, str, "type[Payload] | None", "str | None"]
_ROUTES: dict[tuple[str, str], tuple[Mapping[str, str], _Route]] = {}
_ROUTES_KEPT = 10_000
_TOPICS: dict[str, Topics] = {}


def decode(
    prefix: str,
    sensors: Mapping[str, str],
    topic: str,
    payload: bytes,
    keys: Mapping[str, bytes] | None = None,
    span: Span | None = None,
) -> Decoded | Rejection:
    """Turn one received message into a record or a rejection; never raises.

    Args:
        prefix: the event's topic prefix, ``kent/{event_id}`` (:attr:`Topics.prefix`).
        sensors: every sensor id the permit lists, mapped to its kind
            (``gate``, ``lot`` or ``station``).
        topic: the MQTT topic as received.
        payload: the raw bytes as received.
        keys: when the event signs its payloads, each sensor's HMAC key; a gate, lot
            or badge payload must then carry a good ``sig`` (see ``wire.signing``).
        span: on the sensor clock, the ``ts`` a message may carry
            (:func:`sensor_clock_span`); None on the wall clock.

    Every instant a payload names must lie in the years kent-ops holds
    (:func:`kent_ops.core.timeutil.instant_problem`), whatever the clock.
    """
    if len(payload) > MAX_PAYLOAD_BYTES:
        return Rejection("unknown", f"payload of {len(payload):,} bytes is over the 64 KiB limit")
    cached = _ROUTES.get((prefix, topic))
    if cached is not None and cached[0] is sensors:
        route = cached[1]
    else:
        route = _route(prefix, sensors, topic)
        if len(_ROUTES) >= _ROUTES_KEPT:
            _ROUTES.clear()  # a flood of made-up topics must not grow memory without bound
        _ROUTES[(prefix, topic)] = (sensors, route)
    kind, source, cls, problem = route
    if problem is not None:
        return Rejection(kind, problem)
    if cls is None:
        return _availability(source, payload)
    if keys is not None and kind in _SIGNED_KINDS:
        key = keys.get(source)
        if key is None:
            return Rejection(kind, f"no signing key for sensor {source!r} in the keys file")
        unsigned = unsign(payload, key)
        if isinstance(unsigned, str):
            return Rejection(kind, unsigned)
        payload = unsigned
    return _decode_json(kind, source, cls, payload, span)


class _Window(Protocol):
    @property
    def start(self) -> datetime: ...
    @property
    def end(self) -> datetime: ...


def sensor_clock_span(windows: Iterable[_Window]) -> Span | None:
    """The ``ts`` a message may carry on the sensor clock, around a permit's windows."""
    ends = [(w.start, w.end) for w in windows]
    if not ends:
        return None
    first = min(start for start, _ in ends)
    last = max(end for _, end in ends)
    return first - SENSOR_CLOCK_MARGIN, last + SENSOR_CLOCK_MARGIN


def _availability(source: str, payload: bytes) -> Decoded | Rejection:
    online = decode_sensor_availability(payload)
    if online is None:
        return Rejection("availability", "availability must be 'online' or 'offline'")
    return Decoded("availability", source, Availability(online))


def decode_bridge_state(payload: bytes | bytearray) -> bool | None:
    """Whether a remote property's bridge to the command post is up, as its broker says.

    Not an input of the aggregator: Mosquitto publishes it, retained, on the property's
    own broker only (:meth:`Topics.bridge_state`), ``1`` while the command post is
    reachable and ``0`` when not (docs/protocol.md, "Remote properties: bridges"). The
    gate view there reads it; anything else is not Mosquitto's word, so None.
    """
    text = payload.strip()
    if text == b"1":
        return True
    if text == b"0":
        return False
    return None


def _topics_for(prefix: str) -> Topics:
    topics = _TOPICS.get(prefix)
    if topics is None:
        topics = _TOPICS[prefix] = Topics(prefix.removeprefix(ROOT + "/"))
    return topics


def _route(prefix: str, sensors: Mapping[str, str], topic: str) -> _Route:
    """Where a topic leads: (kind, source, payload type, or the reason it leads nowhere).

    The answer depends only on the topic and the permit's sensors, so it is cached with
    the very ``sensors`` mapping it was worked out for: two permits may share an event id
    (a permit amended mid-event, a test's variant) yet list different sensors, so a route
    is reused only for the same mapping object (the cache keeps it alive, so its id
    cannot be reused by another).
    """
    ref = _topics_for(prefix).parse(topic)
    if ref is None:
        return ("unknown", "", None, f"topic {topic!r} is not under {prefix}/")
    if isinstance(ref, TopicProblem):
        if ref.specific:
            return ("unknown", ref.id, None, ref.reason)
        return ("unknown", ref.id, None, f"topic {topic!r} is not a kent-ops input topic")
    kind, source = ref
    if kind == "availability":
        if source not in sensors:
            return ("availability", source, None, f"sensor {source!r} is not listed in the permit")
        return ("availability", source, None, None)
    entry = _PAYLOADS.get(kind)
    if entry is None:
        return ("unknown", source, None, f"topic {topic!r} is not a kent-ops input topic")
    cls, sensor_kind = entry
    if sensor_kind is None:
        return (kind, source, cls, None)
    listed = sensors.get(source)
    if sensor_kind == "any" and listed is not None:
        return (kind, source, cls, None)
    if listed != sensor_kind:
        if listed is None:
            what = "sensor" if sensor_kind == "any" else sensor_kind
            return (kind, source, None, f"{what} {source!r} is not listed in the permit")
        return (kind, source, None, f"{source!r} is listed as a {listed}, not a {sensor_kind}")
    return (kind, source, cls, None)


def _decode_json(
    kind: str, source: str, cls: type[Payload], payload: bytes, span: Span | None
) -> Decoded | Rejection:
    try:
        record = _DECODERS[cls].decode(payload)
    except msgspec.ValidationError as exc:
        return Rejection(kind, f"wrong field: {exc}")
    except msgspec.DecodeError as exc:
        return Rejection(kind, f"not valid JSON: {exc}")
    except Exception as exc:  # noqa: BLE001 - the decoder must never raise into the loop
        return Rejection(kind, f"undecodable payload: {exc}")
    problem = payload_problem(record) or _check_time(record, span)
    if problem is not None:
        return Rejection(kind, problem)
    return Decoded(kind, source, record)


_GATE_DECODER = msgspec.json.Decoder(GateCount)


def steady_gate_count(payload: bytes, span: Span | None) -> GateCount | None:
    """A gate counter's reading that passes every check :func:`decode` makes, or None.

    The engine's hot path (a festival's counters send thousands a minute) decodes a
    count topic's payload with this alone; on None it decodes again with :func:`decode`,
    which says why. The checks are :func:`payload_problem`'s and :func:`_check_time`'s
    for a ``GateCount``, in one expression each.
    """
    if len(payload) > MAX_PAYLOAD_BYTES:
        return None
    try:
        record = _GATE_DECODER.decode(payload)
    except Exception:  # noqa: BLE001 - any failure (a nesting too deep…) is decode()'s to say
        return None
    ts = record.ts
    if ts.tzinfo is None or not EARLIEST <= ts < LATEST or check_gate(record) is not None:
        return None
    if span is not None and not span[0] <= ts <= span[1]:
        return None
    return record


def payload_problem(record: Payload) -> str | None:
    """The checks msgspec's types do not express: offsets, signs, ranges, required text.

    The aggregator refuses a payload for the sentence returned; a publisher (the
    inspector's dashboard, the Clerk's command) asks first, so it never sends one.
    """
    ts = getattr(record, "ts", None)
    if isinstance(ts, datetime) and ts.tzinfo is None:
        return "bad timestamp: ts has no offset (use e.g. 2027-07-04T14:03:05-04:00 or Z)"
    if isinstance(ts, datetime) and not EARLIEST <= ts < LATEST:
        return f"bad timestamp: ts {instant_problem(ts)}"
    check = _SENSOR_CHECKS.get(type(record))
    if check is not None:
        return check(record)
    if isinstance(record, AdapterRaw):
        return check_raw(record)
    return _check_person(record)


def _check_person(record: Payload) -> str | None:
    if isinstance(record, Adjust):
        if not record.reason.strip():
            return "an adjustment needs a reason"
        return count_problem("attendance", record.attendance)
    if isinstance(record, Note):
        if not record.text.strip():
            return "a note needs text"
        if len(record.text) > MAX_TEXT:
            return f"note text is over {MAX_TEXT} characters"
    if isinstance(record, Inspection) and not record.item.strip():
        return "an inspection needs an item"
    if isinstance(record, ClerkPermit):
        if record.effective_at.tzinfo is None:
            return "bad timestamp: effective_at has no offset"
        if not EARLIEST <= record.effective_at < LATEST:
            return f"bad timestamp: effective_at {instant_problem(record.effective_at)}"
        if not record.resolution.strip():
            return "a change of the permit's status needs the Town Board's resolution"
    if isinstance(record, NotifierSent) and not (record.alert and record.to and record.channel):
        return "a sent record needs the alert, the person's id and the channel"
    return None


def _check_time(record: Payload, span: Span | None) -> str | None:
    """On the sensor clock: the ``ts`` the message would be taken at is near the event."""
    if span is None:
        return None
    ts = getattr(record, "ts", None)
    if isinstance(ts, datetime) and not span[0] <= ts <= span[1]:
        return (
            f"bad timestamp: ts {ts.isoformat()} is more than {SENSOR_CLOCK_MARGIN.days} days "
            "outside the permit's windows, and the sensor clock takes each message at its ts"
        )
    return None
