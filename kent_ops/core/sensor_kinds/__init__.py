"""Every kind of sensor kent-ops takes, and what each publishes.

This is the package's face: what the rest of kent-ops may use of the sensor kinds. The
table of kinds (:mod:`.table`: each kind's topic, payload, permit list and fields,
liveness, whether it makes attendance uncertain, the figure it moves, its device class,
how the report lists it) is read by the topics, the decoder, the permit, counting, the
engine, the access list, the flood guard, the adapter, the devices and the report; the
payloads (:mod:`.payloads`) are the frozen Structs each kind publishes, with the checks
their types do not express. An import-linter contract keeps the rest on this face.
"""

from __future__ import annotations

from kent_ops.core.sensor_kinds.payloads import (
    MAX_COUNT,
    MAX_ROSTER,
    ROLES,
    Badge,
    GateCount,
    LotOccupancy,
    OnDuty,
    Reading,
    Role,
    Roster,
    check_badge,
    check_gate,
    check_lot,
    check_roster,
    count_problem,
    seq_problem,
)
from kent_ops.core.sensor_kinds.table import (
    GATE,
    LOT,
    MANUAL_TALLY,
    SENSOR_KINDS,
    STATION,
    Figure,
    SensorKind,
    by_name,
    is_reading,
    kind_of,
)

__all__ = [
    "GATE",
    "LOT",
    "MANUAL_TALLY",
    "MAX_COUNT",
    "MAX_ROSTER",
    "ROLES",
    "SENSOR_KINDS",
    "STATION",
    "Badge",
    "Figure",
    "GateCount",
    "LotOccupancy",
    "OnDuty",
    "Reading",
    "Role",
    "Roster",
    "SensorKind",
    "by_name",
    "check_badge",
    "check_gate",
    "check_lot",
    "check_roster",
    "count_problem",
    "is_reading",
    "kind_of",
    "seq_problem",
]
