"""Pre-event findings: what the permit file itself shows is not as the law requires.

These are the conditions the Town Board must see satisfied before the gates open
(permit:A-F and the fee paragraph): the permit, the petition and its statements,
parking, the medical plan, the agent, insurance, inspection, health approvals, bond,
fee and housing. Each finding claims no more than the file shows (docs/law.md, "What a
finding may claim"):

- planning is no offence: no issued permit for an assembly over 500 is a warning
  (holding it would be ``permit-required``, which only live attendance shows);
- a condition of issuing is the applicant's breach while the permit is not issued, and
  once the Board has issued it, a warning addressed to the Board (:func:`condition`);
- housing asked only because the windows fall on several dates that each close by
  midnight is a warning: ask whether anyone stays overnight;
- the Town's own duties (notice, hearing, decision, their order) are warnings: a
  procedural defect for the Board to cure, not the applicant's breach.

Each finding names its rule, its citation and the figures behind it, so the clerk can
check it against the paper file.
"""

from __future__ import annotations

from collections.abc import Callable

from kent_ops.core import ordinance as law
from kent_ops.core.permit import (
    CITE_APPLICANT,
    CITE_FEE,
    CITE_HEALTH,
    CITE_INSPECTION,
    CITE_OVERNIGHT,
    STATEMENTS,
    Permit,
    local_midnight_after,
)
from kent_ops.core.precheck.base import (
    ASK_OVERNIGHT,
    CONDITIONS_OF_ISSUING,
    PreEventFinding,
    approvals_needed,
    breach,
    condition,
    first_day,
    night_only_by_dates,
    statement_applies,
    warning,
)
from kent_ops.core.precheck.records import not_on_record

__all__ = ["CHECKED", "CHECKS", "NO_PERMIT_NEEDED", "PreEventFinding", "pre_event_findings"]

# -- the applicant's and owner's duties --------------------------------------------------------


def _several_dates(permit: Permit) -> str:
    """Why housing is only asked about: ``the assembly is permitted on 2 local dates, …``."""
    tz = permit.timezone
    dates = len({w.start.astimezone(tz).date() for w in permit.windows})
    return f"the assembly is permitted on {dates} local dates, each window closing by midnight"


def _ask_overnight(permit: Permit, rule: str, cite: str, message: str) -> PreEventFinding:
    """Housing asked only because of several dates: a warning, whoever it is addressed to."""
    text = f"{message}; {_several_dates(permit)}: {ASK_OVERNIGHT}"
    found = condition(permit, rule, cite, text) if rule in CONDITIONS_OF_ISSUING else None
    if found is None:
        return warning(rule, cite, text)
    return PreEventFinding(found.id, "warning", found.cite, found.message, found.to_board)


def permit_not_issued(permit: Permit) -> list[PreEventFinding]:
    """More than 500 persons need an issued permit; a revoked one is not (permit:A).

    Planning an assembly is no offence: holding one over 500 without a permit is
    ``permit-required``, which only attendance counted live shows. So this is a warning.
    A ``revoked_at`` in the file means the permit was issued until then, whatever its
    status says; revoked at or before the first window opens, it covers nothing.
    """
    revoked = permit.revoked_at
    if revoked is not None:
        if revoked > permit.first_start:
            return []
        at = revoked.astimezone(permit.timezone).isoformat()
        why = f"the permit was revoked at {at}, before the first permitted window opened,"
    elif permit.status == "issued":
        return []
    else:
        why = f"the permit's status is {permit.status!r}"
    return [
        warning(
            "permit-not-issued",
            law.CITE_THRESHOLD,
            f"{why} and {permit.max_at_one_time:,} persons are expected at one time: no "
            f"issued permit covers an assembly of more than {law.PERMIT_THRESHOLD}; holding "
            "one would be permit-required, which only attendance counted live shows",
        )
    ]


def application_lead_time(permit: Permit) -> list[PreEventFinding]:
    """The petition is filed at least 60 days before the assembly (permit:B)."""
    filed, start = permit.application_filed_on, first_day(permit)
    if filed is None:
        return []  # the Town's own record is missing: see not_on_record
    lead = (start - filed).days
    if lead >= law.APPLICATION_LEAD_DAYS:
        return []
    return [
        condition(
            permit,
            "application-lead-time",
            law.CITE_APPLICATION,
            f"the application was filed {filed.isoformat()}, {lead} days before the assembly "
            f"on {start.isoformat()}; at least {law.APPLICATION_LEAD_DAYS} are required",
        )
    ]


def parking_capacity(permit: Permit) -> list[PreEventFinding]:
    """The lots hold one car per four persons expected at one time (permit:C(6))."""
    needed = law.car_spaces_required(permit.max_at_one_time)
    if permit.spaces_provided >= needed:
        return []
    return [
        condition(
            permit,
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
    why = "the medical plan falls short: " + "; ".join(short)
    return [condition(permit, "medical-plan", law.CITE_MEDICAL, why)]


def application_contents(permit: Permit) -> list[PreEventFinding]:
    """Each statement of the petition not filed, by its item (permit:B(1)-(14)).

    Only an explicit ``false`` is the applicant's breach; a statement the file leaves
    out is not on record (see :func:`not_on_record`). The housing statement of B(14),
    asked only because the windows fall on several dates, is a warning.
    """
    out = []
    for st in STATEMENTS:
        if not statement_applies(permit, st) or permit.application.get(st.key) is not False:
            continue
        text = f"the application does not include {st.item}, {st.text}"
        if st.item == "B(14)" and night_only_by_dates(permit):
            out.append(_ask_overnight(permit, "application-contents", st.cite, text))
        else:
            out.append(condition(permit, "application-contents", st.cite, text))
    return out


def nonresident_agent(permit: Permit) -> list[PreEventFinding]:
    """A non-resident names an agent in Putnam County who accepts service (permit:B(1)).

    The agent "shall be a natural person": one the file says is not is a breach; one
    the file says nothing of is not on record.
    """
    if permit.resides_in_town:
        return []
    agent, cite = permit.agent, CITE_APPLICANT
    why = []
    if agent is None:
        why.append("the applicant does not reside in the Town and names no agent")
    else:
        if agent.natural_person is False:
            why.append(f"the agent {agent.name} is not a natural person")
        if agent.county.strip().lower().removesuffix(" county") != "putnam":
            why.append(
                f"the agent {agent.name} is in {agent.county} County; the agent must reside "
                "or have a place of business in Putnam County"
            )
        if permit.application.get("agent_accepts_service") is False:
            why.append(
                f"the agent {agent.name} has not agreed by verified statement to accept "
                "notices and summonses"
            )
    return [condition(permit, "nonresident-agent", cite, w) for w in why]


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
    why = "the insurance falls short: " + "; ".join(short)
    return [condition(permit, "insurance-limits", law.CITE_INSURANCE, why)]


def inspection_authorization(permit: Permit) -> list[PreEventFinding]:
    """Every owner, and tenant where there is one, authorises inspection (permit:D)."""
    out = []
    for prop in permit.properties:
        missing = [] if prop.inspection_authorized else [f"its owner {prop.owner}"]
        if prop.tenant is not None and not prop.tenant_authorized:
            missing.append(f"its tenant {prop.tenant}")
        if missing:
            out.append(
                condition(
                    permit,
                    "inspection-authorization",
                    CITE_INSPECTION,
                    f"there is no written authorization for the Town to inspect property "
                    f"{prop.id} ({prop.address}) at any time from {' or '.join(missing)}",
                )
            )
    return out


def health_approvals(permit: Permit) -> list[PreEventFinding]:
    """Written approvals of every condition of permit:C(1)-(9) (the Health Department's
    and the Board's; one the file says was not given is a breach). Housing's, asked only
    because the windows fall on several dates, is a warning on its own."""
    refused = [(name, item) for name, item, ok in approvals_needed(permit) if ok is False]
    asked = night_only_by_dates(permit)
    missing = [f"{name} ({item})" for name, item in refused if not (asked and item == "C(7)")]
    out = []
    if missing:
        why = "there is no written approval for " + ", ".join(missing)
        out.append(condition(permit, "health-approvals", CITE_HEALTH, why))
    if asked and any(item == "C(7)" for _, item in refused):
        why = "there is no written approval for housing (C(7))"
        out.append(_ask_overnight(permit, "health-approvals", CITE_HEALTH, why))
    return out


def bond_posted(permit: Permit) -> list[PreEventFinding]:
    """A clean-up bond posted, in at least the amount the Board fixed (permit:F).

    The law sets no time for posting it: one posted after the first window opened is a
    warning, not a breach.
    """
    posted, amount = permit.bond_posted_on, permit.bond_amount
    fixed, start = permit.bond_amount_fixed_by_board, first_day(permit)
    if amount <= 0 or posted is None:
        return [breach("bond-posted", law.CITE_CLEAN_UP, "no clean-up bond has been posted")]
    if fixed is not None and amount < fixed:
        return [
            breach(
                "bond-posted",
                law.CITE_CLEAN_UP,
                f"the bond is ${amount:,}; the Town Board fixed ${fixed:,}",
            )
        ]
    if posted > start:
        return [
            warning(
                "bond-posted",
                law.CITE_CLEAN_UP,
                f"the bond was posted {posted.isoformat()}, after the assembly began on "
                f"{start.isoformat()} (the law sets no time for it)",
            )
        ]
    return []


def fee_paid(permit: Permit) -> list[PreEventFinding]:
    """The fee accompanies the application: paid on or before filing (fee)."""
    paid, filed = permit.fee_paid_on, permit.application_filed_on
    if paid is None:
        return [condition(permit, "fee-paid", CITE_FEE, "the application fee has not been paid")]
    if filed is not None and paid > filed:
        return [
            condition(
                permit,
                "fee-paid",
                CITE_FEE,
                f"the fee was paid {paid.isoformat()}, after the application was filed "
                f"{filed.isoformat()}; it must accompany the application",
            )
        ]
    return []


def overnight_housing(permit: Permit) -> list[PreEventFinding]:
    """An assembly that may run into another day declares its housing (permit:B(14), C(7)).

    Windows on several dates that each close by midnight only make the night possible:
    a warning, to ask whether anyone stays overnight.
    """
    if not permit.may_run_overnight or permit.housing_declared:
        return []
    if night_only_by_dates(permit):
        return [
            warning(
                "overnight-housing",
                CITE_OVERNIGHT,
                f"{_several_dates(permit)}, and no housing is declared: {ASK_OVERNIGHT}",
            )
        ]
    if permit.overnight:
        why = "declared overnight"
    elif any(local_midnight_after(w.start, permit.timezone) < w.end for w in permit.windows):
        why = "permitted past a local midnight"
    else:  # pragma: no cover - several dates alone are asked about above
        why = "permitted on more than one day"
    return [
        breach(
            "overnight-housing",
            CITE_OVERNIGHT,
            f"the assembly is {why} and no housing is declared",
        )
    ]


# -- the Town's own duties (warnings) ----------------------------------------------------------


def hearing_notice(permit: Permit) -> list[PreEventFinding]:
    """The hearing's notice is published at least 10 days before it (permit:B)."""
    notice, hearing = permit.hearing_notice_published_on, permit.hearing_on
    if notice is None or hearing is None:
        return []  # not on record: see not_on_record
    days = (hearing - notice).days
    if days >= law.HEARING_NOTICE_DAYS:
        return []
    why = (
        f"notice published {notice.isoformat()}, {days} days before the hearing on "
        f"{hearing.isoformat()}; at least {law.HEARING_NOTICE_DAYS} are required"
    )
    return [warning("hearing-notice", law.CITE_APPLICATION, why)]


def decision_time(permit: Permit) -> list[PreEventFinding]:
    """The Board acts within 30 days of the application's submission (permit:B)."""
    filed, decided = permit.application_filed_on, permit.decided_on
    if filed is None or decided is None:
        return []  # not on record: see not_on_record
    took = (decided - filed).days
    if took <= law.BOARD_DECISION_DAYS:
        return []
    why = (
        f"decided {decided.isoformat()}, {took} days after filing; the Board acts within "
        f"{law.BOARD_DECISION_DAYS}"
    )
    return [warning("decision-time", law.CITE_APPLICATION, why)]


def procedure_order(permit: Permit) -> list[PreEventFinding]:
    """Filing, notice, hearing, decision, assembly: in that order (permit:B)."""
    filed, notice = permit.application_filed_on, permit.hearing_notice_published_on
    hearing, decided, start = permit.hearing_on, permit.decided_on, first_day(permit)
    out = []
    if notice is not None and hearing is not None and notice > hearing:
        out.append(f"the notice was published {notice}, after the hearing on {hearing}")
    if hearing is not None and filed is not None and hearing < filed:
        out.append(f"the hearing on {hearing} was held before the application was filed {filed}")
    if decided is not None and hearing is not None and decided < hearing:
        out.append(f"the Board decided {decided}, before its public hearing on {hearing}")
    if decided is not None and decided > start:
        out.append(f"the Board decided {decided}, after the assembly was to begin on {start}")
    return [warning("procedure-order", law.CITE_APPLICATION, why) for why in out]


def permit_revoked(permit: Permit) -> list[PreEventFinding]:
    """The Board revoked the permit during the event (permit:G): said, so no one relies
    on it. One revoked before the first window is ``permit-not-issued``."""
    if permit.revoked_at is None or permit.revoked_at <= permit.first_start:
        return []
    at = permit.revoked_at.astimezone(permit.timezone).isoformat()
    by = f" by resolution {permit.revocation_resolution}" if permit.revocation_resolution else ""
    return [
        warning(
            "permit-revoked",
            law.CITE_REVOCATION,
            f"the Town Board revoked the permit{by} at {at}: it was issued until then",
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
    not_on_record,
)
"""Every pre-event check: the applicant's and owner's duties, then the Town's."""

CHECKED = (
    "the permit's status and any revocation, the application's filing date and statements, "
    "parking capacity, the medical plan, the non-resident's agent, insurance, inspection "
    "authorization, written approvals, the bond, the fee, overnight housing, the Town's "
    "notice, hearing, decision and their order, and what the Town's file holds"
)
"""What :data:`CHECKS` covers, in words, for a report that finds nothing."""


NO_PERMIT_NEEDED = (
    "NO PERMIT NEEDED: the permit expects at most {n:,} persons at one time; the chapter "
    "regulates assemblies of more than 500 (permit:A), so none of its duties binds this "
    "one, and it covers no assembly over 500"
)
"""What ``kent-ops permit check`` prints, alone, for a permit of 500 or fewer."""


def pre_event_findings(permit: Permit) -> list[PreEventFinding]:
    """Every pre-event finding for ``permit``: breaches first, in the order of the law.

    None for a permit of 500 or fewer at one time: no permit is needed (permit:A).
    """
    if not permit.regulated:
        return []
    found = [finding for check in CHECKS for finding in check(permit)]
    return [f for f in found if f.severity == "breach"] + [
        f for f in found if f.severity != "breach"
    ]
