"""``kent-ops permit check P``: load a permit and print its pre-event findings.

One finding a line, ``BREACH|WARNING <id> (<cite>): <sentence>``; exit 0 if none is a
breach, 1 if any is, 2 if the file is invalid (one line on stderr, every problem in it).
"""

from __future__ import annotations

import argparse

from kent_ops.core.errors import UsageError
from kent_ops.core.permit import load_permit
from kent_ops.core.precheck import CHECKED, NO_PERMIT_NEEDED, pre_event_findings

__all__ = ["cli_check"]


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
        print(f"OK no pre-event findings; checked {CHECKED}")
    return 1 if any(f.severity == "breach" for f in findings) else 0
