"""The findings before the assembly (``kent-ops permit check``): what the permit file shows.

This is the package's face: what the rest of kent-ops may use of the pre-event check.
The checks of the applicant's and owner's duties, and the Town's own, are in
:mod:`.checks`; what a finding is, and the facts about a permit the checks share, in
:mod:`.base`; the warnings for what the Town's own file leaves out (``not-on-record``) in
:mod:`.records`. An import-linter contract keeps the rest of kent-ops on this face.
"""

from __future__ import annotations

from kent_ops.core.precheck.checks import (
    CHECKED,
    CHECKS,
    NO_PERMIT_NEEDED,
    PreEventFinding,
    pre_event_findings,
)

__all__ = ["CHECKED", "CHECKS", "NO_PERMIT_NEEDED", "PreEventFinding", "pre_event_findings"]
