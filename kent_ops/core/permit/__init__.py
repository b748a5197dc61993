"""The permit file: one permitted assembly and the sensors installed for it.

This is the package's face: what the rest of kent-ops may use of the permit. Loading
(:mod:`.load`) validates everything and reports every problem at once, as
``field: what is wrong (cite)``; the fields are declared in :mod:`.schema` and read
through :mod:`kent_ops.core.declared`; the checks that join fields are in
:mod:`.checks`, the properties and sensors in :mod:`.places`; the frozen records it
builds are in :mod:`.model`; the permit's status over time (the Clerk's revocations) is
:mod:`.status`. An import-linter contract keeps the rest of kent-ops on this face.
"""

from __future__ import annotations

from kent_ops.core.permit.load import load_permit, parse_permit
from kent_ops.core.permit.model import (
    Agent,
    Alerting,
    GateSpec,
    Permit,
    PermitError,
    Property,
    Window,
    local_midnight_after,
)
from kent_ops.core.permit.schema import (
    CITE_APPLICANT,
    CITE_FEE,
    CITE_HEALTH,
    CITE_INSPECTION,
    CITE_OVERNIGHT,
    ID_PATTERN,
    KNOWN_TABLES,
    SENSOR_ID_PATTERN,
    SENSOR_LISTS,
    STATEMENTS,
    Statement,
)
from kent_ops.core.permit.status import BACKDATE_LIMIT_S, PermitStatus, StatusChange

__all__ = [
    "BACKDATE_LIMIT_S",
    "CITE_APPLICANT",
    "CITE_FEE",
    "CITE_HEALTH",
    "CITE_INSPECTION",
    "CITE_OVERNIGHT",
    "ID_PATTERN",
    "KNOWN_TABLES",
    "SENSOR_ID_PATTERN",
    "SENSOR_LISTS",
    "STATEMENTS",
    "Agent",
    "Alerting",
    "GateSpec",
    "Permit",
    "PermitError",
    "PermitStatus",
    "Property",
    "Statement",
    "StatusChange",
    "Window",
    "load_permit",
    "local_midnight_after",
    "parse_permit",
]
