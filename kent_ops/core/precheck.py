"""Pre-event findings (SPEC 5, "before"): what the permit file itself shows is wrong.

These are the conditions the Town Board must see satisfied before the gates open:
lead times, approvals, insurance, bond, fee, parking capacity and housing. Each finding
names its rule, its citation and the figures behind it, so the clerk can check it
against the paper file.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from kent_ops.core import ordinance as law
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit, PermitError, load_permit

__all__ = ["Finding", "cli_check", "pre_event_findings"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the permit file shows is not as the ordinance requires."""

    rule: str
    cite: str
    message: str
    severity: str = "breach"

    def line(self) -> str:
        return f"{self.severity.upper()} {self.rule} ({self.cite}): {self.message}"


def pre_event_findings(permit: Permit) -> list[Finding]:
    """Every pre-event finding for ``permit``, in the order of the ordinance."""
    out: list[Finding] = []
    tz = permit.timezone
    first_day = permit.first_start.astimezone(tz).date()

    if permit.status != "issued":
        out.append(
            Finding(
                "permit-not-issued",
                "permit:A",
                f"the permit's status is {permit.status!r}; more than "
                f"{law.PERMIT_THRESHOLD} persons may not assemble without an issued permit",
            )
        )
    filed = permit.application_filed_on
    if filed is None:
        out.append(
            Finding("application-lead-time", "permit:B", "no application filing date is recorded")
        )
    else:
        lead = (first_day - filed).days
        if lead < law.APPLICATION_LEAD_DAYS:
            out.append(
                Finding(
                    "application-lead-time",
                    "permit:B",
                    f"filed {filed.isoformat()}, {lead} days before the assembly on "
                    f"{first_day.isoformat()}; at least {law.APPLICATION_LEAD_DAYS} required",
                )
            )
    spaces_needed = law.car_spaces_required(permit.max_at_one_time)
    if permit.spaces_provided < spaces_needed:
        out.append(
            Finding(
                "parking-capacity",
                law.CITE_PARKING,
                f"the lots hold {permit.spaces_provided:,} cars; "
                f"{permit.max_at_one_time:,} persons at one time need {spaces_needed:,}",
            )
        )
    notice, hearing = permit.hearing_notice_published_on, permit.hearing_on
    if notice is None or hearing is None:
        out.append(
            Finding(
                "hearing-notice", "permit:B", "the hearing or its published notice is not recorded"
            )
        )
    elif (hearing - notice).days < law.HEARING_NOTICE_DAYS:
        out.append(
            Finding(
                "hearing-notice",
                "permit:B",
                f"notice published {notice.isoformat()}, {(hearing - notice).days} days before "
                f"the hearing on {hearing.isoformat()}; "
                f"at least {law.HEARING_NOTICE_DAYS} required",
            )
        )
    decided = permit.decided_on
    if filed is not None and decided is not None:
        took = (decided - filed).days
        if took > law.BOARD_DECISION_DAYS:
            out.append(
                Finding(
                    "decision-time",
                    "permit:B",
                    f"decided {decided.isoformat()}, {took} days after filing; the Board acts "
                    f"within {law.BOARD_DECISION_DAYS}",
                )
            )
    elif permit.status == "issued" and decided is None:
        out.append(
            Finding("decision-time", "permit:B", "the permit is issued with no decision date")
        )
    if not permit.resides_in_town:
        agent = permit.agent
        if agent is None:
            out.append(
                Finding(
                    "nonresident-agent",
                    "permit:B(1)",
                    "the applicant does not reside in the Town and names no agent",
                )
            )
        elif agent.county.strip().lower().removesuffix(" county") != "putnam":
            out.append(
                Finding(
                    "nonresident-agent",
                    "permit:B(1)",
                    f"the agent {agent.name} is in {agent.county} County; the agent must reside "
                    "or do business in Putnam County",
                )
            )
    short = []
    if permit.insurance_bodily_injury_per_person < law.INSURANCE_BODILY_INJURY_PER_PERSON:
        short.append(
            f"bodily injury ${permit.insurance_bodily_injury_per_person:,} per person "
            f"(at least ${law.INSURANCE_BODILY_INJURY_PER_PERSON:,})"
        )
    if permit.insurance_bodily_injury_per_occurrence < law.INSURANCE_BODILY_INJURY_PER_OCCURRENCE:
        short.append(
            f"bodily injury ${permit.insurance_bodily_injury_per_occurrence:,} per occurrence "
            f"(at least ${law.INSURANCE_BODILY_INJURY_PER_OCCURRENCE:,})"
        )
    if permit.insurance_property_damage < law.INSURANCE_PROPERTY_DAMAGE:
        short.append(
            f"property damage ${permit.insurance_property_damage:,} "
            f"(at least ${law.INSURANCE_PROPERTY_DAMAGE:,})"
        )
    if permit.insurance_cancellation_notice_days < law.INSURANCE_CANCELLATION_NOTICE_DAYS:
        short.append(
            f"cancellable on {permit.insurance_cancellation_notice_days} days' notice "
            f"(at least {law.INSURANCE_CANCELLATION_NOTICE_DAYS})"
        )
    if short:
        out.append(Finding("insurance-limits", law.CITE_INSURANCE, "; ".join(short)))
    if not permit.inspection_authorized:
        out.append(
            Finding(
                "inspection-authorization",
                "permit:D",
                "no written authorization for the Town to inspect the property at any time",
            )
        )
    missing = [
        name
        for name, ok in (
            ("water (C(1))", permit.water_approved),
            ("toilets (C(2))", permit.toilets_approved),
            ("sewage (C(3))", permit.sewage_approved),
            ("food (C(5))", permit.food_approved or not permit.food_served),
        )
        if not ok
    ]
    if missing:
        out.append(
            Finding(
                "health-approvals",
                "permit:C(1)-(5)",
                "no written approval for " + ", ".join(missing),
            )
        )
    if permit.bond_amount <= 0 or permit.bond_posted_on is None:
        out.append(Finding("bond-posted", law.CITE_CLEAN_UP, "no clean-up bond has been posted"))
    elif permit.bond_posted_on > first_day:
        out.append(
            Finding(
                "bond-posted",
                law.CITE_CLEAN_UP,
                f"the bond was posted {permit.bond_posted_on.isoformat()}, "
                "after the assembly began",
            )
        )
    if permit.fee_paid_on is None:
        out.append(Finding("fee-paid", "fee", "the application fee has not been paid"))
    elif filed is not None and permit.fee_paid_on > filed:
        out.append(
            Finding(
                "fee-paid",
                "fee",
                f"the fee was paid {permit.fee_paid_on.isoformat()}, after the application was "
                f"filed {filed.isoformat()}; it must accompany the application",
            )
        )
    spans_midnight = any(
        w.start.astimezone(tz).date() != (w.end.astimezone(tz)).date()
        and w.end.astimezone(tz).time() != w.end.astimezone(tz).time().min
        for w in permit.windows
    )
    if (permit.overnight or spans_midnight) and not permit.housing_declared:
        why = "declared overnight" if permit.overnight else "a permitted window runs past midnight"
        out.append(
            Finding(
                "overnight-housing",
                "permit:B(14), permit:C(7)",
                f"the assembly is {why} and no housing is declared",
            )
        )
    return out


def cli_check(args: argparse.Namespace) -> int:
    """``kent-ops permit check P``: 0 if no breach, 1 if any, 2 if the file is invalid."""
    try:
        permit = load_permit(args.permit)
    except PermitError as exc:
        lines = "\n".join(f"  {p}" for p in exc.problems)
        sys.stderr.write(f"kent-ops: {exc.source} is not a valid permit:\n{lines}\n")
        raise SystemExit(2) from None
    except OSError as exc:
        raise UsageError(f"cannot read {args.permit}: {exc.strerror}") from None
    findings = pre_event_findings(permit)
    header = f"{permit.event_name} — permit {permit.number or '(none)'} ({permit.status})"
    print(header)
    if not findings:
        print("OK no pre-event findings")
        return 0
    for finding in findings:
        print(finding.line())
    return 1 if any(f.severity == "breach" for f in findings) else 0
