"""The engine's whole state as one document, and back: a restart replays only the tail.

A festival's evidence log holds millions of records; replaying all of them takes
minutes, and a restarted aggregator is blind meanwhile. So the service writes the
engine's state into the log every few minutes (a ``snapshot`` record, see
docs/protocol.md) and a restart starts from the last one, feeding only the records
after it. The report still replays from the start (it is the proof) and checks that
its engine equals each snapshot it passes.

The document is JSON (msgspec): a header (format version, program and version, the
clock, a fingerprint of the permit and of the signing keys, and a little of the
service's own bookkeeping) and the state. A snapshot written by another program
version, another format, under another permit, clock or keys is refused with
:class:`SnapshotRefused`: the caller replays the whole log instead. Everything here is
pure (no I/O): bytes in, bytes out.

What "the whole state" is, is declared once: each of the engine's parts has a
``*State`` struct whose fields name its attributes (without a leading underscore), and
:data:`DERIVED` names the attributes rebuilt from the permit instead. The dataclasses
inside (the counts, alerts, pending conditions, status changes) are written whole by
msgspec. tests/core/test_snapshot.py checks that every attribute of every part is one
or the other, so a field added to the engine cannot be silently left out.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Mapping
from types import GenericAlias
from typing import Any, Protocol, TypeVar, get_args, get_origin

import msgspec

from kent_ops import __version__
from kent_ops.core import wire
from kent_ops.core.alerts import Alert, Brief, _Pending
from kent_ops.core.counting import Counting
from kent_ops.core.coverage import CoverEnd
from kent_ops.core.doubt import DoubtTrack
from kent_ops.core.foresight import Foresight
from kent_ops.core.inspectors import NOTES_KEPT
from kent_ops.core.permit import Permit, StatusChange
from kent_ops.core.seq import Gap

__all__ = [
    "DERIVED",
    "Snapshotted",
    "FORMAT",
    "PARTS",
    "EngineState",
    "Header",
    "SnapshotRefused",
    "differences",
    "keys_fingerprint",
    "load",
    "permit_fingerprint",
    "read_header",
    "take",
]

FORMAT = 6
"""The layout of the document; raise it whenever a state struct changes (and say how an
older layout reads, where it can, or why it cannot). Format 5 adds each sensor's sequence
numbers (gaps, runs, the messages remembered), stuck sensors, rosters unknown since a
gap, a broker restart, and the engine's list of gaps: a format-4 snapshot holds none."""
PROGRAM = "kent-ops"
_EARLIER_READING = 2
"""Formats 2 and 3 were written before each alert carried its stretches (docs/law.md):
their state cannot be carried over, so a restart or a report replays the whole log."""
_BEFORE_FORESIGHT_AND_SEQ = (4, 5)
"""Formats 4 and 5 were written before the engine kept both the samples its forecast of a
HOLD reads (core/foresight.py) and each sensor's sequence numbers (docs/protocol.md,
"Counting"): a restart from one would forecast from nothing or miss a gap, so the log is
replayed whole."""


class SnapshotRefused(ValueError):
    """A snapshot this program must not start from; replay the whole log instead."""


class Snapshotted(Protocol):
    """What a snapshot is taken of: the engine, as far as this module needs to know it.

    The engine uses this module (to take and restore its state), so this module names
    only what it reads of the engine, never the engine itself: its parts are found by
    the attribute names the state structs declare (:data:`PARTS`).
    """

    @property
    def permit(self) -> Permit: ...
    @property
    def clock(self) -> str: ...
    @property
    def keys(self) -> Mapping[str, bytes] | None: ...


class Header(msgspec.Struct, kw_only=True):
    """Who wrote the snapshot, under what; read before the state is trusted."""

    format: int
    program: str
    version: str
    clock: str
    permit: str
    """SHA-256 of the permit as loaded (:func:`permit_fingerprint`)."""
    keys: str | None
    """SHA-256 of the signing keys (:func:`keys_fingerprint`), None when unsigned."""
    service: dict[str, Any] = {}
    """What the service that wrote it wants back (the engine ignores it)."""


# -- the parts' states: field names are attribute names without a leading underscore ------


class _State(msgspec.Struct, forbid_unknown_fields=True):
    """A part's state: a field this program does not know makes the snapshot unusable."""


_S = TypeVar("_S", bound=_State)


class DeadlinesState(_State):
    heap: list[tuple[int, int, str]]
    stale: set[str]


class AlertBookState(_State):
    pending: list[tuple[str, str | None, _Pending]]
    alerts: list[Alert]
    live: list[tuple[str, str | None, str]]
    """(rule, subject, alert id): the live alert is the very object in ``alerts``."""
    changed: set[str]
    next_number: int
    brief: list[Brief]


class OrdersState(_State):
    admit_capacity: bool
    state: tuple[bool, str]
    decided: bool
    changed: bool


class PermitStatusState(_State):
    changes: list[StatusChange]


class DispersalState(_State):
    end: CoverEnd | None
    entries_at_end: int
    admitted_at: int | None


class AssemblyState(_State):
    on_since: int | None
    overnight_from: int | None
    spans: list[list[int | None]]


class BandState(_State):
    counts_only: bool
    limits: tuple[int, int] | None
    over_collective: bool
    stretch_peak: int | None
    stretch_at: int
    stretch_split: dict[str, int] | None


class InspectorsState(_State):
    notes: list[wire.NoteEntry]
    adjustments: list[wire.Adjustment]
    marks: dict[str, wire.ChecklistMark]
    deficient: dict[str, str]
    seen: set[tuple[str, str, bytes]]


class EngineState(_State):
    counts: Counting
    orders: OrdersState
    deadlines: DeadlinesState
    alert_book: AlertBookState
    permit_status: PermitStatusState
    dispersal: DispersalState
    assembly: AssemblyState
    inspectors: InspectorsState
    band: BandState
    doubt: DoubtTrack
    foresight: Foresight
    gaps: list[Gap]
    now: int | None
    start: int | None
    skewed: dict[str, float]
    last_record: int | None
    clerk_seen: set[tuple[str, str, wire.ClerkPermit]]
    rejected: int
    accepted: int


class _Document(Header, kw_only=True, forbid_unknown_fields=True):
    state: EngineState


PARTS: dict[str, type[_State]] = {
    "": EngineState,
    "orders": OrdersState,
    "_deadlines": DeadlinesState,
    "alert_book": AlertBookState,
    "permit_status": PermitStatusState,
    "dispersal": DispersalState,
    "assembly": AssemblyState,
    "inspectors": InspectorsState,
    "band": BandState,
}
"""Each part of the engine ("" the engine itself) by attribute, with its state struct."""

DERIVED: dict[str, frozenset[str]] = {
    "": frozenset(
        {
            "permit",
            "clock",
            "keys",
            "terms",
            "_prefix",
            "_sensor_kinds",
            "_ts_span",
            "_stale_us",
            "_checklist_items",
            "_steady",
        }
    ),
    "orders": frozenset({"hold_at", "resume_below"}),
    "_deadlines": frozenset(),
    "alert_book": frozenset({"pending_us", "clear_us", "_schedule"}),
    "permit_status": frozenset({"base", "_times"}),
    "dispersal": frozenset({"allowance_us"}),
    "assembly": frozenset({"tz"}),
    "inspectors": frozenset({"checklist"}),
    "band": frozenset(),
}
"""Attributes each part rebuilds from the permit (and the changes list), not the snapshot."""


# -- fingerprints -----------------------------------------------------------------------------


def permit_fingerprint(permit: Permit) -> str:
    """SHA-256 of the permit as the engine sees it (where its file lies does not count)."""
    plain = msgspec.to_builtins(permit, enc_hook=str, order="sorted")
    plain.pop("source_path", None)
    return hashlib.sha256(msgspec.json.encode(plain, order="sorted")).hexdigest()


def keys_fingerprint(keys: Mapping[str, bytes] | None) -> str | None:
    """SHA-256 of the signing keys (never the keys themselves), None when unsigned."""
    if keys is None:
        return None
    h = hashlib.sha256(b"kent-ops signing keys\n")
    for name in sorted(keys):
        h.update(len(name).to_bytes(4, "big") + name.encode())
        h.update(len(keys[name]).to_bytes(4, "big") + keys[name])
    return h.hexdigest()


# -- writing ----------------------------------------------------------------------------------


def _enc(obj: Any) -> Any:
    if isinstance(obj, deque):
        return list(obj)
    raise NotImplementedError(f"a snapshot cannot hold {type(obj).__name__}")


def _dec(kind: Any, obj: Any) -> Any:
    if get_origin(kind) is deque or kind is deque:
        args = get_args(kind)
        return deque(msgspec.convert(obj, GenericAlias(list, args) if args else list))
    raise NotImplementedError(f"a snapshot cannot hold {kind}")


_ENCODER = msgspec.json.Encoder(enc_hook=_enc)
_HEADER = msgspec.json.Decoder(Header)
_DOCUMENT = msgspec.json.Decoder(_Document, dec_hook=_dec)


def _attr(obj: Any, name: str) -> str:
    return name if name in vars(obj) else f"_{name}"


_Save = dict[str, Callable[[Any], Any]]
_Load = dict[str, Callable[[Any, Any], None]]


def _save(obj: Any, kind: type[_S], special: _Save) -> _S:
    """The part's state: each field from its attribute, or from its special reader."""
    values = {
        name: special[name](obj) if name in special else getattr(obj, _attr(obj, name))
        for name in kind.__struct_fields__
    }
    return kind(**values)


def _load(obj: Any, state: _State, special: _Load) -> None:
    """Put each field back on its attribute, or through its special writer."""
    for name in state.__struct_fields__:
        value = getattr(state, name)
        if name in special:
            special[name](obj, value)
        else:
            setattr(obj, _attr(obj, name), value)


def _book_save() -> _Save:
    return {
        "pending": lambda b: [(r, s, p) for (r, s), p in b.pending.items()],
        "alerts": lambda b: list(b.alerts.values()),
        "live": lambda b: [(r, s, a.id) for (r, s), a in b.live.items()],
    }


def _book_load() -> _Load:
    def alerts(book: Any, value: list[Alert]) -> None:
        book.alerts = {a.id: a for a in value}

    def live(book: Any, value: list[tuple[str, str | None, str]]) -> None:
        book.live = {(r, s): book.alerts[aid] for r, s, aid in value}

    return {
        "pending": lambda b, v: setattr(b, "pending", {(r, s): p for r, s, p in v}),
        "alerts": alerts,
        "live": live,
    }


_SAVE: dict[type[_State], _Save] = {
    EngineState: {
        "orders": lambda e: _save(e.orders, OrdersState, {}),
        "deadlines": lambda e: _save(
            e._deadlines, DeadlinesState, {"heap": lambda d: sorted(d._heap)}
        ),
        "alert_book": lambda e: _save(e.alert_book, AlertBookState, _book_save()),
        "permit_status": lambda e: _save(e.permit_status, PermitStatusState, {}),
        "dispersal": lambda e: _save(e.dispersal, DispersalState, {}),
        "assembly": lambda e: _save(e.assembly, AssemblyState, {}),
        "inspectors": lambda e: _save(
            e.inspectors, InspectorsState, {"notes": lambda i: list(i.notes)}
        ),
        "band": lambda e: _save(e.band, BandState, {}),
    },
}


def _put_status(status: Any, changes: list[StatusChange]) -> None:
    status.changes = list(changes)
    status._times = [c.at for c in changes]


_LOAD: _Load = {
    "orders": lambda e, v: _load(e.orders, v, {}),
    "deadlines": lambda e, v: _load(e._deadlines, v, {}),
    "alert_book": lambda e, v: _load(e.alert_book, v, _book_load()),
    "permit_status": lambda e, v: _load(e.permit_status, v, {"changes": _put_status}),
    "dispersal": lambda e, v: _load(e.dispersal, v, {}),
    "assembly": lambda e, v: _load(e.assembly, v, {}),
    "inspectors": lambda e, v: _load(
        e.inspectors,
        v,
        {"notes": lambda i, notes: setattr(i, "notes", deque(notes, maxlen=NOTES_KEPT))},
    ),
    "band": lambda e, v: _load(e.band, v, {}),
}


def state_of(engine: Snapshotted) -> EngineState:
    """The engine's state as a struct (it shares the engine's objects: encode it at once)."""
    return _save(engine, EngineState, _SAVE[EngineState])


def header_of(engine: Snapshotted, service: Mapping[str, Any] | None = None) -> Header:
    """The header a snapshot of ``engine`` carries."""
    return Header(
        format=FORMAT,
        program=PROGRAM,
        version=__version__,
        clock=engine.clock,
        permit=permit_fingerprint(engine.permit),
        keys=keys_fingerprint(engine.keys),
        service=dict(service or {}),
    )


def take(engine: Snapshotted, service: Mapping[str, Any] | None = None) -> bytes:
    """The engine's whole state as one JSON document; the engine is not changed."""
    header = header_of(engine, service)
    fields = {name: getattr(header, name) for name in Header.__struct_fields__}
    return _ENCODER.encode(_Document(**fields, state=state_of(engine)))


# -- reading ----------------------------------------------------------------------------------


def read_header(data: bytes) -> Header:
    """The header alone (cheap); raises SnapshotRefused if it is not a snapshot."""
    try:
        return _HEADER.decode(data)
    except msgspec.DecodeError as exc:
        raise SnapshotRefused(f"it is not an engine snapshot ({exc})") from None


def _decode(data: bytes, header: Header) -> _Document:
    try:
        return _DOCUMENT.decode(data)
    except (msgspec.DecodeError, NotImplementedError, TypeError, ValueError, KeyError) as exc:
        raise SnapshotRefused(f"its state cannot be read by this program ({exc})") from None


def check_header(header: Header, engine: Snapshotted) -> None:
    """Refuse a snapshot another program, format, permit, clock or set of keys wrote."""
    mine = header_of(engine)
    if header.program != PROGRAM or header.version != mine.version:
        raise SnapshotRefused(f"it was written by {header.program} {header.version}")
    if header.format in _BEFORE_FORESIGHT_AND_SEQ:
        raise SnapshotRefused(
            f"it is in snapshot format {header.format}, written before the engine kept the "
            "samples its forecast of a HOLD reads and each sensor's sequence numbers (gaps, "
            "restarts): the whole log is replayed instead"
        )
    if header.format < FORMAT and header.format >= _EARLIER_READING:
        raise SnapshotRefused(
            f"it is in snapshot format {header.format}, written under an earlier reading of "
            "the law (its alerts carry no stretches): the whole log is replayed instead"
        )
    if header.format != FORMAT:
        raise SnapshotRefused(f"it is in snapshot format {header.format}, not {FORMAT}")
    if header.clock != mine.clock:
        raise SnapshotRefused(f"it was taken with the {header.clock} clock")
    if header.permit != mine.permit:
        raise SnapshotRefused("it was taken under another permit file")
    if header.keys != mine.keys:
        raise SnapshotRefused("it was taken with other signing keys")


def load(engine: Snapshotted, data: bytes) -> Header:
    """Put a snapshot's state into a fresh engine built for the same permit, clock and keys.

    Raises:
        SnapshotRefused: the snapshot is not for this program, permit, clock or keys, or
            cannot be read; the engine is then unchanged.
    """
    header = read_header(data)
    check_header(header, engine)
    doc = _decode(data, header)
    _load(engine, doc.state, _LOAD)
    return doc


def differences(engine: Snapshotted, data: bytes, limit: int = 5) -> list[str]:
    """Where the engine's state differs from the snapshot's (empty: they are equal).

    Raises:
        SnapshotRefused: the snapshot cannot be compared (see :func:`load`).
    """
    header = read_header(data)
    check_header(header, engine)
    theirs = _decode(data, header).state
    mine = state_of(engine)
    if mine == theirs:
        return []
    found: list[str] = []
    _diff(_plain(mine), _plain(theirs), "state", found, limit)
    return found or ["state (the same figures, held as other types)"]


def _plain(state: EngineState) -> Any:
    """The state as plain values, sets sorted, so two of them can be walked side by side."""
    try:
        return msgspec.to_builtins(state, enc_hook=_enc, order="deterministic")
    except TypeError:  # pragma: no cover - a set whose items do not sort
        return msgspec.to_builtins(state, enc_hook=_enc)


def _diff(a: Any, b: Any, path: str, found: list[str], limit: int) -> None:
    """Collect up to ``limit`` paths at which two plain values differ."""
    if len(found) >= limit or a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            _diff(a.get(key), b.get(key), f"{path}.{key}", found, limit)
        return
    sequences = (list, tuple)
    if isinstance(a, sequences) and isinstance(b, sequences) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", found, limit)
        return
    found.append(f"{path}: {_short(a)} by the engine, {_short(b)} in the snapshot")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
