"""What the report states beside the findings: properties, the permit's status over time,
the pre-event checks, and whether the record is complete.

Each is read from the replayed engine (its status, its permit-status changes) or from the
permit file, so the page says what the live service knew, and nothing else. Texts that
came off the wire (a Clerk's resolution and reason, an account id) are cleaned of
control characters here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from kent_ops.core import wire
from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit
from kent_ops.core.precheck import CHECKS, PreEventFinding
from kent_ops.core.timeutil import from_us
from kent_ops.report.findings import Finding, rule_name
from kent_ops.report.text import clean

__all__ = [
    "PreEventCheck",
    "PropertyFacts",
    "StatusEntry",
    "incomplete_reasons",
    "permit_history",
    "pre_event_checks",
    "property_facts",
]

CHECK_WORDS: dict[str, tuple[str, str]] = {
    "permit-not-issued": ("permit:A", "an issued permit, where more than 500 are expected"),
    "application-lead-time": ("permit:B", "the application filed at least 60 days ahead"),
    "parking-capacity": ("permit:C(6)", "lots for one car per four persons expected"),
    "medical-plan": ("permit:C(9)", "doctors, nurses and a first-aid station planned"),
    "application-contents": ("permit:B(1)-(14)", "every statement of the application filed"),
    "nonresident-agent": ("permit:B(1)", "an agent in Putnam County for a non-resident"),
    "insurance-limits": ("permit:E", "insurance limits and cancellation notice"),
    "inspection-authorization": ("permit:D", "each owner's and tenant's authorization"),
    "health-approvals": ("permit:C(1)-(9)", "written approvals of every condition of C(1)-(9)"),
    "bond-posted": ("permit:F", "the clean-up bond posted, in the Board's amount, in time"),
    "fee-paid": ("fee", "the fee paid with the application"),
    "overnight-housing": ("permit:B(14), permit:C(7)", "housing, if it may run overnight"),
    "hearing-notice": ("permit:B", "the hearing's notice 10 days ahead (the Town's duty)"),
    "decision-time": ("permit:B", "the Board's decision within 30 days (the Town's duty)"),
    "procedure-order": ("permit:B", "filing, notice, hearing, decision in order (the Town's)"),
    "permit-revoked": ("permit:G", "whether the file records a revocation"),
    "not-on-record": ("", "what the Town's own file leaves out (a warning, never a breach)"),
}
"""Each pre-event check's citation and what it looks at, in plain words."""


@dataclass(frozen=True, slots=True)
class PreEventCheck:
    """One check of the permit file before the assembly, and what it found."""

    id: str
    cite: str
    what: str
    findings: list[PreEventFinding]

    @property
    def clean(self) -> bool:
        return not self.findings


def pre_event_checks(permit: Permit) -> list[PreEventCheck]:
    """Every pre-event check, run one by one, each with what it found (often nothing).

    None for a permit of 500 or fewer: no permit is needed, so nothing is checked.
    """
    if not permit.regulated:
        return []
    out = []
    for check in CHECKS:
        cid = check.__name__.replace("_", "-")
        doc = (check.__doc__ or cid).strip().splitlines()[0]
        cite, what = CHECK_WORDS.get(cid, ("", doc))
        out.append(PreEventCheck(cid, cite, what, check(permit)))
    return out


@dataclass(frozen=True, slots=True)
class PropertyFacts:
    """One property, its owner (and tenant or lessee), and the persons the status showed
    on it."""

    id: str
    owner: str
    address: str
    tenant: str | None
    inspection_authorized: bool
    tenant_authorized: bool
    highest: int
    highest_at: datetime | None
    at_end: int


def property_facts(
    permit: Permit,
    peaks: Mapping[str, tuple[int, datetime]],
    at_end: Mapping[str, wire.PropertyState],
) -> list[PropertyFacts]:
    """Each property of the permit with its highest and its last count of persons."""
    out = []
    for p in permit.properties:
        highest, when = peaks.get(p.id, (0, None))
        end = at_end.get(p.id)
        out.append(
            PropertyFacts(
                id=p.id,
                owner=p.owner,
                address=p.address,
                tenant=p.tenant,
                inspection_authorized=p.inspection_authorized,
                tenant_authorized=p.tenant_authorized,
                highest=highest,
                highest_at=when,
                at_end=end.attendance if end is not None else 0,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class StatusEntry:
    """The permit's status from ``at`` on (None: as the permit file gives it)."""

    at: datetime | None
    status: str
    word: str
    """``issued``, ``revoked`` or ``reinstated`` (issued again after a revocation)."""
    resolution: str
    by: str
    reason: str


def permit_history(permit: Permit, engine: Engine) -> list[StatusEntry]:
    """The permit's status over time: the file's, then each change in the order it took effect."""
    base = "issued" if permit.revoked_at is not None else permit.status
    given = (
        "as the permit file gives it: issued until its revoked_at"
        if permit.revoked_at is not None
        else "as the permit file gives it"
    )
    out = [StatusEntry(None, base, base, "", "", given)]
    revoked = base != "issued"
    for change in engine.permit_status.changes:
        word = change.status
        if change.status == "issued" and revoked:
            word = "reinstated"
        revoked = change.status != "issued"
        out.append(
            StatusEntry(
                at=from_us(change.at),
                status=change.status,
                word=word,
                resolution=clean(change.resolution),
                by=clean(change.by) or "the permit file",
                reason=clean(change.reason),
            )
        )
    return out


def incomplete_reasons(
    permit: Permit,
    findings: Sequence[Finding],
    log_end: datetime | None,
    assembly_end: datetime | None = None,
) -> list[str]:
    """Why the record may not show the whole assembly; empty when it does.

    A sensor still silent when the log ends counts only if it fell silent before the
    assembly ended (``assembly_end``, None while it is still on): a counter switched off
    days after the crowd went home hides nothing of the assembly.
    """
    if log_end is None:
        return ["the evidence log holds no sensor or inspector messages"]
    out = []
    if log_end < permit.last_end:
        out.append("the evidence log ends before the last permitted window ended")
    for f in findings:
        if f.end is not None:
            continue
        if f.is_breach:
            out.append(
                f"breach {f.id} ({rule_name(f.rule)}) was still in progress when the log ends"
            )
        elif f.rule == "sensor-offline" and (assembly_end is None or f.start < assembly_end):
            out.append(f"sensor {f.subject or ''} was still offline or silent when the log ends")
    return out
