"""``kent-ops permit check P``: load a permit and print its pre-event findings.

One finding a line, ``BREACH|WARNING <id> (<cite>): <sentence>``; exit 0 if none is a
breach, 1 if any is, 2 if the file is invalid (one line on stderr, every problem in it).

A permit with no finding gets what an organiser needs next, in short lines: that it
passed, what was checked, and what remains to do on the day, with the figures of this
permit and the law's citation for each (the duties the live rules then watch).
"""

from __future__ import annotations

import argparse
import textwrap
from datetime import datetime, timedelta

from kent_ops.core import ordinance as law
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.precheck import CHECKED, NO_PERMIT_NEEDED, pre_event_findings

__all__ = ["cli_check", "clean_report"]

WIDTH = 78
"""A terminal's width, less a margin: no line of the report is longer."""


def cli_check(args: argparse.Namespace) -> int:
    """Print the findings; 0 if no breach, 1 if any. An invalid permit raises (exit 2)."""
    try:
        permit = load_permit(args.permit)
    except OSError as exc:  # the common ones are already a PermitError naming the file
        raise UsageError(f"cannot read {args.permit}: {exc.strerror}") from None
    if not permit.regulated:
        print(NO_PERMIT_NEEDED.format(n=permit.max_at_one_time))
        return 0
    findings = pre_event_findings(permit)
    for finding in findings:
        print(finding.line())
    if not findings:
        print("\n".join(clean_report(permit)))
    return 1 if any(f.severity == "breach" for f in findings) else 0


def clean_report(permit: Permit) -> list[str]:
    """The lines for a permit with no pre-event finding: passed, checked, what remains."""
    checked = textwrap.wrap(
        f"Checked: {CHECKED}.", WIDTH, subsequent_indent="  ", break_on_hyphens=False
    )
    lines = ["OK no pre-event findings.", *checked, "", "What remains to do on the day:"]
    for duty in day_duties(permit):
        lines += textwrap.wrap(
            duty, WIDTH, initial_indent="- ", subsequent_indent="  ", break_on_hyphens=False
        )
    return lines


def day_duties(permit: Permit) -> list[str]:
    """What the organiser must keep doing during the assembly and after it, each with
    this permit's figures and its citation: what the live rules will watch."""
    most = permit.max_at_one_time
    tz = permit.timezone
    hours = "; ".join(_window(w.start.astimezone(tz), w.end.astimezone(tz)) for w in permit.windows)
    last_day = max(w.end.astimezone(tz) for w in permit.windows).date()
    clean_by = last_day + timedelta(days=law.CLEAN_UP_DAYS)
    facilities = "drinking water, toilets, sewage and refuse" + (
        ", and food where it is served" if permit.food_served else ""
    )
    duties = [
        f"More than {law.PERMIT_THRESHOLD} persons only within the permitted hours: "
        f"{hours} ({law.CITE_THRESHOLD}).",
        f"Keep every gate counting, and never more than {most:,} persons at one time; "
        f"a deputy's manual tally counts where a counter fails (permit:B(2)).",
        f"A doctor on site at all times: at least {permit.doctors_min} ({law.CITE_MEDICAL}).",
        f"A registered nurse for each {permit.persons_per_nurse:,} persons present, "
        f"rounded up: {law.nurses_required(most, permit.persons_per_nurse)} at {most:,} "
        f"({law.CITE_MEDICAL}).",
        f"The {permit.security_guards:,} security guards declared, on duty (permit:B(8)).",
        f"A parking space for each {law.PERSONS_PER_CAR_SPACE} persons: "
        f"{law.car_spaces_required(most):,} at {most:,}; at most "
        f"{permit.vehicles_at_one_time:,} vehicles at one time ({law.CITE_PARKING}).",
        f"The facilities as the application specified: {facilities} (permit:C); the "
        "inspectors mark them on their checklist.",
    ]
    if permit.may_run_overnight:
        duties.append("Overnight housing for those who stay (permit:B(14), permit:C(7)).")
    duties.append(
        f"Clean-up: the grounds cleared of refuse by the end of {clean_by:%Y-%m-%d}, the "
        f"{_ordinal(law.CLEAN_UP_DAYS)} day after the assembly ends ({law.CITE_CLEAN_UP})."
    )
    return duties


def _window(start: datetime, end: datetime) -> str:
    """``2027-07-04 10:00 to 23:30 EDT``, the end's date too when it is another day."""
    until = f"{end:%H:%M %Z}" if end.date() == start.date() else f"{end:%Y-%m-%d %H:%M %Z}"
    return f"{start:%Y-%m-%d %H:%M} to {until}"


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}.get(n, f"{n}th")
