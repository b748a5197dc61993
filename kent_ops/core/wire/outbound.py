"""What the aggregator publishes: the status, alerts, gate commands and checkpoints.

Each is a frozen msgspec Struct, encoded once by the aggregator and decoded once by
whoever reads it (the dashboards at their feed, the report from the evidence log), so a
field is added in one place and every reader sees it typed. Readers are lenient about
what they do not know: unknown fields are ignored and most fields have a default, so a
dashboard keeps working against a newer or older aggregator. docs/protocol.md shows
every field with an example.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, TypeVar

import msgspec

__all__ = [
    "Acknowledgement",
    "Adjustment",
    "Alert",
    "AlertState",
    "AssemblyState",
    "Attendance",
    "Checkpoint",
    "ChecklistItemInfo",
    "ChecklistMark",
    "EvidenceHealth",
    "EvidenceRef",
    "Figures",
    "GateCommand",
    "GateState",
    "LotState",
    "Medical",
    "NoteEntry",
    "Parking",
    "PendingCondition",
    "PermitState",
    "PropertyState",
    "Security",
    "SensorState",
    "Severity",
    "Status",
    "Stretch",
    "WindowState",
    "Worst",
    "decode_json",
    "encode",
]

Severity = Literal["breach", "warning", "data"]
AlertState = Literal["active", "cleared"]
Figures = dict[str, Any]
"""A rule's observed or required figures, by name (``{"nurses_on_duty": 6, ...}``)."""


class _Out(msgspec.Struct, frozen=True, kw_only=True):
    """Every outbound record: frozen, keyword-built, unknown fields ignored on decode.

    msgspec passes ``frozen`` and ``kw_only`` down to subclasses, but a type checker reads
    each class's own keywords only (PEP 681), so every subclass repeats them."""


# -- the status -------------------------------------------------------------------------


class PermitState(_Out, frozen=True, kw_only=True):
    """The permit's status now; ``since`` and ``resolution`` once the Clerk changed it."""

    number: str = ""
    status: str = "issued"
    since: datetime | None = None
    resolution: str | None = None


class AssemblyState(_Out, frozen=True, kw_only=True):
    """Whether the assembly is on (the duties that bind it hold only then)."""

    on: bool = False
    window: int | None = None
    """The index of the permitted window we are inside, if any."""


class PropertyState(_Out, frozen=True, kw_only=True):
    """One property of the assembly: persons on it (from its gates) and who owns it."""

    attendance: int = 0
    owner: str = ""
    address: str = ""
    tenant: str | None = None


class WindowState(_Out, frozen=True, kw_only=True):
    inside: bool = False
    start: datetime | None = None
    end: datetime | None = None


class Attendance(_Out, frozen=True, kw_only=True):
    current: int
    entries: int = 0
    exits: int = 0
    peak: int = 0
    offset: int = 0
    max_at_one_time: int = 0
    max_collective: int = 0
    threshold: int = 500
    uncertain: bool = False
    hold_in_s: int | None = None
    """Seconds until attendance reaches ``hold_at`` at its net rate of the last 10 minutes;
    None when it is not rising or is there already. Advice, never a finding."""


class Parking(_Out, frozen=True, kw_only=True):
    spaces_provided: int = 0
    spaces_required: int = 0
    occupied: int = 0
    vehicles_at_one_time: int = 0


class Medical(_Out, frozen=True, kw_only=True):
    doctors_on_duty: int = 0
    doctors_required: int = 0
    nurses_on_duty: int = 0
    nurses_required: int = 0
    uncertain: bool = False
    """A staff station's roster is not known now (its badge reader offline)."""


class Security(_Out, frozen=True, kw_only=True):
    on_duty: int = 0
    declared: int = 0


class SensorState(_Out, frozen=True, kw_only=True):
    kind: str
    online: bool | None = True
    """None for a deputy's manual tally that has counted nobody: not used, not offline."""
    last_seen: datetime | None = None
    gaps: int = 0
    """Gaps in its ``seq`` so far; ``missing`` the numbers never received over them all."""
    missing: int = 0
    last_gap: str | None = None
    """The numbers of its latest gap (``seq 7–40``)."""
    stuck: bool = False
    """Its messages arrive but none has been counted for ``stale_after_s``."""
    doubt: str | None = None
    """Why its figure is indeterminate now (``stuck``, ``roster unknown since a gap (seq
    7–40)``, ``not heard since the broker restarted``, ``offline``, ``silent``), or None."""


class GateState(_Out, frozen=True, kw_only=True):
    in_: int = msgspec.field(default=0, name="in")
    property: str | None = None
    """The property it admits to; None for a gate between two properties."""
    out: int = 0
    net: int = 0
    per_minute: float = 0.0
    last_seen: datetime | None = None
    online: bool | None = True
    """None for a manual tally that has counted nobody: not used, which is not offline."""
    manual: bool = False
    restarts: int = 0

    def unused_tally(self) -> bool:
        """A deputy's manual tally nobody has used yet: not reporting, and no fault.

        The status says so with ``"online": null``; a status of an earlier version said
        ``false`` for it, and is read the same way (a tally never heard, counting nobody).
        """
        if self.online is None:
            return True
        return self.manual and self.last_seen is None and self.in_ == 0 and self.out == 0

    def down(self) -> bool:
        """Offline, and not an unused tally: a gate whose count may be behind."""
        return self.online is False and not self.unused_tally()


class LotState(_Out, frozen=True, kw_only=True):
    capacity: int = 0
    occupied: int | None = None
    free: int | None = None
    share: float | None = None
    online: bool = True
    last_seen: datetime | None = None


class PendingCondition(_Out, frozen=True, kw_only=True):
    rule: str
    subject: str | None = None
    since: datetime | None = None


class NoteEntry(_Out, frozen=True, kw_only=True):
    by: str
    at: datetime | None = None
    text: str = ""
    alert: str | None = None


class Adjustment(_Out, frozen=True, kw_only=True):
    by: str
    at: datetime | None = None
    attendance: int = 0
    offset: int = 0
    reason: str = ""


class ChecklistMark(_Out, frozen=True, kw_only=True):
    result: str
    by: str = ""
    at: datetime | None = None
    note: str = ""


class ChecklistItemInfo(_Out, frozen=True, kw_only=True):
    item: str
    paragraph: str = ""
    text: str = ""
    cite: str = ""


class EvidenceHealth(_Out, frozen=True, kw_only=True):
    """Said only while the evidence log cannot be written (the service adds it)."""

    ok: bool
    error: str | None = None
    since: datetime | None = None
    held: int = 0


class Status(_Out, frozen=True, kw_only=True):
    """The live picture, published retained on every change and at least every 5 s."""

    ts: datetime | None
    event: str
    attendance: Attendance
    event_name: str = ""
    timezone: str = "America/New_York"
    clock: str = "wall"
    """The aggregator's clock: ``sensor`` in a simulation or a replay (the demo), whose
    time is this status's ``ts`` and not the wall clock's (screens show that time)."""
    permit: PermitState = msgspec.field(default_factory=PermitState)
    assembly: AssemblyState = msgspec.field(default_factory=AssemblyState)
    properties: dict[str, PropertyState] = {}
    window: WindowState = msgspec.field(default_factory=WindowState)
    admit: bool = True
    hold_at: int = 0
    resume_below: int = 0
    parking: Parking = msgspec.field(default_factory=Parking)
    medical: Medical = msgspec.field(default_factory=Medical)
    security: Security = msgspec.field(default_factory=Security)
    sensors: dict[str, SensorState] = {}
    gates: dict[str, GateState] = {}
    lots: dict[str, LotState] = {}
    active_alerts: list[str] = []
    pending: list[PendingCondition] = []
    rejected: int = 0
    accepted: int = 0
    notes: list[NoteEntry] = []
    adjustments: list[Adjustment] = []
    checklist: dict[str, ChecklistMark] = {}
    checklist_items: list[ChecklistItemInfo] = []
    evidence: EvidenceHealth | msgspec.UnsetType = msgspec.UNSET
    """Present only while the evidence log cannot be written (absent from the JSON else)."""


# -- an alert ---------------------------------------------------------------------------


class Acknowledgement(_Out, frozen=True, kw_only=True):
    by: str
    at: datetime | None = None
    comment: str = ""


class Worst(_Out, frozen=True, kw_only=True):
    """The figures at the alert's worst moment (largest excess or shortfall)."""

    observed: Figures = {}
    required: Figures = {}


class Stretch(_Out, frozen=True, kw_only=True):
    """A part of an alert's time with one basis (docs/protocol.md, "Stretches").

    ``basis`` is ``measured`` (proven), ``indeterminate`` (a sensor behind its figures in
    doubt), ``estimate`` (it holds only by an inspector's adjustment) or ``rounding`` (only
    by kent-ops' rounding up); ``rests_on`` says what, in words, when not measured.
    """

    start: datetime
    end: datetime | None = None
    basis: str = "measured"
    rests_on: list[str] = []


class EvidenceRef(_Out, frozen=True, kw_only=True):
    """The evidence record the condition started at, and that record's hash."""

    record: int | None = None
    hash: str | None = None


class Alert(_Out, frozen=True, kw_only=True):
    """One alert, republished retained at every change of state."""

    id: str
    rule: str
    subject: str | None = None
    cite: str = ""
    severity: Severity = "breach"
    state: AlertState = "active"
    since: datetime | None = None
    raised_at: datetime | None = None
    ended_at: datetime | None = None
    cleared_at: datetime | None = None
    observed: Figures = {}
    required: Figures = {}
    worst: Worst = msgspec.field(default_factory=Worst)
    message: str = ""
    acknowledged: list[Acknowledgement] = []
    notes: list[NoteEntry] = []
    evidence: EvidenceRef = msgspec.field(default_factory=EvidenceRef)
    uncertain: bool = False
    """Its figures are indeterminate as it stands now (its last stretch's basis)."""
    stretches: list[Stretch] = []
    """Its time split by what it rests on, from ``since``; empty from an older program."""


# -- deputies and checkpoints ---------------------------------------------------------


class GateCommand(_Out, frozen=True, kw_only=True):
    """ADMIT or HOLD for the deputy at one gate."""

    admit: bool
    attendance: int = 0
    hold_at: int = 0
    resume_below: int = 0
    reason: str = ""
    hold_in_s: int | None = None
    """The status's ``attendance.hold_in_s`` in whole minutes (720), refreshed at most once
    a minute (docs/protocol.md, "Foresight")."""


class Checkpoint(_Out, frozen=True, kw_only=True):
    """The evidence log's head, published so anyone can later prove it was not rewritten."""

    record: int
    hash: str
    ts: datetime | None = None


# -- encoding -------------------------------------------------------------------------

_ENCODER = msgspec.json.Encoder()
T = TypeVar("T", bound=msgspec.Struct)
_DECODERS: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def encode(record: msgspec.Struct) -> bytes:
    """The JSON bytes of an outbound record, as published and as logged."""
    return _ENCODER.encode(record)


def decode_json(cls: type[T], payload: bytes | bytearray) -> T:
    """Read an outbound record back; raises ``msgspec.DecodeError`` (or its
    ``ValidationError``) with the field at fault when the payload is not one."""
    decoder: msgspec.json.Decoder[T] | None = _DECODERS.get(cls)
    if decoder is None:
        decoder = _DECODERS[cls] = msgspec.json.Decoder(cls)
    return decoder.decode(payload)
