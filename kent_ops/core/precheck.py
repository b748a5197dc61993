"""Pre-event findings: what the permit file itself shows is not as the law requires.

These are the conditions the Town Board must see satisfied before the gates open
(permit:A-F and the fee paragraph): the permit, the petition and its statements,
parking, the medical plan, the agent, insurance, inspection, health approvals, bond,
fee and housing. Each is a breach by the applicant or owner. The Town's own duties
(notice, hearing, decision, their order) are warnings: a procedural defect for the
Board to cure, not the applicant's breach. Each finding names its rule, its citation
and the figures behind it, so the clerk can check it against the paper file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Literal

from kent_ops.core import ordinance as law
from kent_ops.core import permit_schema as schema
from kent_ops.core.permit import Permit
from kent_ops.core.permit_schema import STATEMENTS

__all__ = ["CHECKED", "CHECKS", "PreEventFinding", "pre_event_findings"]

Severity = Literal["breach", "warning"]


@dataclass(frozen=True, slots=True)
class PreEventFinding:
    """One thing the permit file shows is not as the ordinance requires."""

    id: str
    severity: Severity
    cite: str
    message: str

    def line(self) -> str:
        """``BREACH|WARNING <id> (<cite>): <sentence>``, as ``kent-ops permit check`` prints."""
        return f"{self.severity.upper()} {self.id} ({self.cite}): {self.message}"


def _breach(rule: str, cite: str, message: str) -> PreEventFinding:
    return PreEventFinding(rule, "breach", cite, message)


def _warning(rule: str, cite: str, message: str) -> PreEventFinding:
    return PreEventFinding(rule, "warning", cite, message)


def _first_day(permit: Permit) -> date:
    """The local date the assembly is first permitted to begin."""
    return permit.first_start.astimezone(permit.timezone).date()


# -- the applicant's and owner's duties (breaches) --------------------------------------------


def permit_not_issued(permit: Permit) -> list[PreEventFinding]:
    """More than 500 persons need an issued permit; a revoked one is not (permit:A)."""
    if permit.max_at_one_time <= law.PERMIT_THRESHOLD or permit.status == "issued":
        return []
    return [
        _breach(
            "permit-not-issued",
            law.CITE_THRESHOLD,
            f"the permit's status is {permit.status!r} and {permit.max_at_one_time:,} persons "
            f"are expected at one time; more than {law.PERMIT_THRESHOLD} may not assemble "
            "without an issued permit",
        )
    ]


def application_lead_time(permit: Permit) -> list[PreEventFinding]:
    """The petition is filed at least 60 days before the assembly (permit:B)."""
    filed, first_day = permit.application_filed_on, _first_day(permit)
    if filed is None:
        return [
            _breach("application-lead-time", law.CITE_APPLICATION, "no filing date is recorded")
        ]
    lead = (first_day - filed).days
    if lead >= law.APPLICATION_LEAD_DAYS:
        return []
    return [
        _breach(
            "application-lead-time",
            law.CITE_APPLICATION,
            f"filed {filed.isoformat()}, {lead} days before the assembly on "
            f"{first_day.isoformat()}; at least {law.APPLICATION_LEAD_DAYS} are required",
        )
    ]


def parking_capacity(permit: Permit) -> list[PreEventFinding]:
    """The lots hold one car per four persons expected at one time (permit:C(6))."""
    needed = law.car_spaces_required(permit.max_at_one_time)
    if permit.spaces_provided >= needed:
        return []
    return [
        _breach(
            "parking-capacity",
            law.CITE_PARKING,
            f"the lots hold {permit.spaces_provided:,} cars and {permit.max_at_one_time:,} "
            f"persons at one time need {needed:,}",
        )
    ]


def medical_plan(permit: Permit) -> list[PreEventFinding]:
    """The plan shows the doctors, nurses and first-aid station the law asks (permit:C(9))."""
    short = []
    doctors, nurses = permit.doctors_planned, permit.nurses_planned
    nurses_needed = law.nurses_required(permit.max_at_one_time, permit.persons_per_nurse)
    if doctors is None:
        short.append("no planned number of doctors is shown")
    elif doctors < permit.doctors_min:
        short.append(f"{doctors} doctors planned, at least {permit.doctors_min} required")
    if nurses is None:
        short.append("no planned number of registered nurses is shown")
    elif nurses < nurses_needed:
        short.append(
            f"{nurses} registered nurses planned, {nurses_needed} required for "
            f"{permit.max_at_one_time:,} persons"
        )
    if not permit.first_aid_station:
        short.append("no first-aid station is shown")
    if not short:
        return []
    return [_breach("medical-plan", law.CITE_MEDICAL, "; ".join(short))]


def application_contents(permit: Permit) -> list[PreEventFinding]:
    """Each statement of the petition not filed, by its item (permit:B(1)-(14))."""
    out = []
    for st in STATEMENTS:
        if st.key == "agent_accepts_service":
            continue  # only a non-resident needs an agent: see nonresident_agent
        if st.item == "B(14)" and not permit.may_run_overnight:
            continue
        if not permit.application.get(st.key, False):
            out.append(
                _breach(
                    "application-contents",
                    st.cite,
                    f"the application does not include {st.item}, {st.text}",
                )
            )
    return out


def nonresident_agent(permit: Permit) -> list[PreEventFinding]:
    """A non-resident names an agent in Putnam County who accepts service (permit:B(1))."""
    if permit.resides_in_town:
        return []
    agent, cite = permit.agent, schema.CITE_APPLICANT
    if agent is None:
        why = "the applicant does not reside in the Town and names no agent"
    elif agent.county.strip().lower().removesuffix(" county") != "putnam":
        why = (
            f"the agent {agent.name} is in {agent.county} County; the agent must reside or "
            "have a place of business in Putnam County"
        )
    elif not permit.application.get("agent_accepts_service", False):
        why = (
            f"the agent {agent.name} has not agreed by verified statement to accept notices "
            "and summonses"
        )
    else:
        return []
    return [_breach("nonresident-agent", cite, why)]


def insurance_limits(permit: Permit) -> list[PreEventFinding]:
    """The policy's limits and notice are at least the law's (permit:E)."""
    p = permit
    limits = (
        (
            p.insurance_bodily_injury_per_person,
            law.INSURANCE_BODILY_INJURY_PER_PERSON,
            "bodily injury ${:,} per person (at least ${:,})",
        ),
        (
            p.insurance_bodily_injury_per_occurrence,
            law.INSURANCE_BODILY_INJURY_PER_OCCURRENCE,
            "bodily injury ${:,} per occurrence (at least ${:,})",
        ),
        (
            p.insurance_property_damage,
            law.INSURANCE_PROPERTY_DAMAGE,
            "property damage ${:,} (at least ${:,})",
        ),
        (
            p.insurance_cancellation_notice_days,
            law.INSURANCE_CANCELLATION_NOTICE_DAYS,
            "cancellable on {} days' notice (at least {})",
        ),
    )
    short = [text.format(value, minimum) for value, minimum, text in limits if value < minimum]
    if not short:
        return []
    return [_breach("insurance-limits", law.CITE_INSURANCE, "; ".join(short))]


def inspection_authorization(permit: Permit) -> list[PreEventFinding]:
    """Every owner, and tenant where there is one, authorises inspection (permit:D)."""
    out = []
    for prop in permit.properties:
        missing = [] if prop.inspection_authorized else [f"its owner {prop.owner}"]
        if prop.tenant is not None and not prop.tenant_authorized:
            missing.append(f"its tenant {prop.tenant}")
        if missing:
            out.append(
                _breach(
                    "inspection-authorization",
                    schema.CITE_INSPECTION,
                    f"property {prop.id} ({prop.address}): no written authorization for the "
                    f"Town to inspect at any time from {' or '.join(missing)}",
                )
            )
    return out


def health_approvals(permit: Permit) -> list[PreEventFinding]:
    """Written approvals of water, toilets, sewage and food (permit:C(1)-(5))."""
    missing = [
        name
        for name, ok in (
            ("water (C(1))", permit.water_approved),
            ("toilets (C(2))", permit.toilets_approved),
            ("sewage (C(3))", permit.sewage_approved),
            ("food (C(5))", permit.food_approved),
        )
        if not ok
    ]
    if not missing:
        return []
    return [
        _breach(
            "health-approvals", schema.CITE_HEALTH, "no written approval for " + ", ".join(missing)
        )
    ]


def bond_posted(permit: Permit) -> list[PreEventFinding]:
    """A clean-up bond posted, in the amount the Board fixed, before the assembly (permit:F)."""
    posted, amount = permit.bond_posted_on, permit.bond_amount
    fixed, first_day = permit.bond_amount_fixed_by_board, _first_day(permit)
    if amount <= 0 or posted is None:
        why = "no clean-up bond has been posted"
    elif fixed is None:
        why = (
            f"the amount the Town Board fixed is not recorded, so the ${amount:,} posted "
            "cannot be checked against it"
        )
    elif amount < fixed:
        why = f"the bond is ${amount:,}; the Town Board fixed ${fixed:,}"
    elif posted > first_day:
        why = (
            f"the bond was posted {posted.isoformat()}, after the assembly began on "
            f"{first_day.isoformat()}"
        )
    else:
        return []
    return [_breach("bond-posted", law.CITE_CLEAN_UP, why)]


def fee_paid(permit: Permit) -> list[PreEventFinding]:
    """The fee accompanies the application: paid on or before filing (fee)."""
    paid, filed = permit.fee_paid_on, permit.application_filed_on
    if paid is None:
        return [_breach("fee-paid", schema.CITE_FEE, "the application fee has not been paid")]
    if filed is not None and paid > filed:
        return [
            _breach(
                "fee-paid",
                schema.CITE_FEE,
                f"the fee was paid {paid.isoformat()}, after the application was filed "
                f"{filed.isoformat()}; it must accompany the application",
            )
        ]
    return []


def overnight_housing(permit: Permit) -> list[PreEventFinding]:
    """An assembly that may run into another day declares its housing (permit:B(14), C(7))."""
    if not permit.may_run_overnight or permit.housing_declared:
        return []
    why = "declared overnight" if permit.overnight else "permitted past a local midnight"
    return [
        _breach(
            "overnight-housing",
            schema.CITE_OVERNIGHT,
            f"the assembly is {why} and no housing is declared",
        )
    ]


# -- the Town's own duties (warnings) ----------------------------------------------------------


def hearing_notice(permit: Permit) -> list[PreEventFinding]:
    """The hearing's notice is published at least 10 days before it (permit:B)."""
    notice, hearing = permit.hearing_notice_published_on, permit.hearing_on
    if notice is None or hearing is None:
        why = "the hearing or its published notice is not recorded"
    elif (hearing - notice).days < law.HEARING_NOTICE_DAYS:
        why = (
            f"notice published {notice.isoformat()}, {(hearing - notice).days} days before the "
            f"hearing on {hearing.isoformat()}; at least {law.HEARING_NOTICE_DAYS} are required"
        )
    else:
        return []
    return [_warning("hearing-notice", law.CITE_APPLICATION, why)]


def decision_time(permit: Permit) -> list[PreEventFinding]:
    """The Board acts within 30 days of the application's submission (permit:B)."""
    filed, decided = permit.application_filed_on, permit.decided_on
    if filed is not None and decided is not None:
        took = (decided - filed).days
        if took <= law.BOARD_DECISION_DAYS:
            return []
        why = (
            f"decided {decided.isoformat()}, {took} days after filing; the Board acts within "
            f"{law.BOARD_DECISION_DAYS}"
        )
    elif permit.status == "issued" and decided is None:
        why = "the permit is issued with no decision date"
    else:
        return []
    return [_warning("decision-time", law.CITE_APPLICATION, why)]


def procedure_order(permit: Permit) -> list[PreEventFinding]:
    """Filing, notice, hearing, decision, assembly: in that order (permit:B)."""
    filed, notice = permit.application_filed_on, permit.hearing_notice_published_on
    hearing, decided, first_day = permit.hearing_on, permit.decided_on, _first_day(permit)
    out = []
    if notice is not None and hearing is not None and notice > hearing:
        out.append(f"the notice was published {notice}, after the hearing on {hearing}")
    if hearing is not None and filed is not None and hearing < filed:
        out.append(f"the hearing on {hearing} was held before the application was filed {filed}")
    if decided is not None and hearing is not None and decided < hearing:
        out.append(f"the Board decided {decided}, before its public hearing on {hearing}")
    if decided is not None and decided > first_day:
        out.append(f"the Board decided {decided}, after the assembly was to begin on {first_day}")
    return [_warning("procedure-order", law.CITE_APPLICATION, why) for why in out]


def permit_revoked(permit: Permit) -> list[PreEventFinding]:
    """The Board revoked the permit (permit:G): said, so no one relies on it."""
    if permit.revoked_at is None:
        return []
    at = permit.revoked_at.astimezone(permit.timezone).isoformat()
    by = f" by resolution {permit.revocation_resolution}" if permit.revocation_resolution else ""
    return [
        _warning(
            "permit-revoked", law.CITE_REVOCATION, f"the Town Board revoked the permit{by} at {at}"
        )
    ]


CHECKS: tuple[Callable[[Permit], list[PreEventFinding]], ...] = (
    permit_not_issued,
    application_lead_time,
    parking_capacity,
    medical_plan,
    application_contents,
    nonresident_agent,
    insurance_limits,
    inspection_authorization,
    health_approvals,
    bond_posted,
    fee_paid,
    overnight_housing,
    hearing_notice,
    decision_time,
    procedure_order,
    permit_revoked,
)
"""Every pre-event check, the applicant's breaches first, then the Town's warnings."""

CHECKED = (
    "the permit's status and any revocation, the application's filing date and statements, "
    "parking capacity, the medical plan, the non-resident's agent, insurance, inspection "
    "authorization, health approvals, the bond, the fee, overnight housing, and the Town's "
    "notice, hearing, decision and their order"
)
"""What :data:`CHECKS` covers, in words, for a report that finds nothing."""


def pre_event_findings(permit: Permit) -> list[PreEventFinding]:
    """Every pre-event finding for ``permit``: breaches first, in the order of the law."""
    return [finding for check in CHECKS for finding in check(permit)]
