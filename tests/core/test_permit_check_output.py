"""What ``kent-ops permit check`` prints for a permit with no finding: for an organiser.

That it passed, what it checked, and what remains to do on the day, in short lines with
this permit's figures and the law's citations. The exit codes, the findings' lines and
the one line for a permit of 500 or fewer are tests/core/test_precheck.py's.
"""

from __future__ import annotations

import pytest
from cli_support import kent_ops
from core_support import EXAMPLE_PATH

from kent_ops.commands.permit_check import WIDTH

TWO_PATH = EXAMPLE_PATH.parent / "permit-two-properties.toml"

EXAMPLE_DAY = """\
What remains to do on the day:
- More than 500 persons only within the permitted hours: 2027-07-04 10:00 to
  23:30 EDT (permit:A).
- Keep every gate counting, and never more than 4,000 persons at one time; a
  deputy's manual tally counts where a counter fails (permit:B(2)).
- A doctor on site at all times: at least 1 (permit:C(9)).
- A registered nurse for each 500 persons present, rounded up: 8 at 4,000
  (permit:C(9)).
- The 20 security guards declared, on duty (permit:B(8)).
- A parking space for each 4 persons: 1,000 at 4,000; at most 1,100 vehicles
  at one time (permit:C(6)).
- The facilities as the application specified: drinking water, toilets, sewage
  and refuse, and food where it is served (permit:C); the inspectors mark them
  on their checklist.
- Clean-up: the grounds cleared of refuse by the end of 2027-07-09, the fifth
  day after the assembly ends (permit:F).
"""


def test_a_clean_permit_says_it_passed_what_was_checked_and_what_remains_on_the_day(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = kent_ops(capsys, "permit", "check", str(EXAMPLE_PATH))
    assert (done.returncode, done.stderr) == (0, "")
    passed, day = done.stdout.split("\n\n")
    lines = passed.splitlines()
    assert lines[0] == "OK no pre-event findings."
    assert (
        lines[1] == "Checked: the permit's status and any revocation, the application's filing date"
    )
    assert " ".join(line.strip() for line in lines[1:]).endswith(
        "the Town's notice, hearing, decision and their order, and what the Town's file holds."
    )
    assert day == EXAMPLE_DAY
    assert all(len(line) <= WIDTH for line in done.stdout.splitlines())


def test_an_assembly_over_two_days_names_each_end_and_its_housing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = kent_ops(capsys, "permit", "check", str(TWO_PATH))
    assert done.returncode == 0
    said = " ".join(line.strip() for line in done.stdout.splitlines())
    assert "- More than 500 persons only within the permitted hours: 2027-08-14 12:00 to " \
           "2027-08-15 02:00 EDT (permit:A)." in said  # fmt: skip
    assert "- Overnight housing for those who stay (permit:B(14), permit:C(7))." in said
    assert "by the end of 2027-08-20, the fifth day after the assembly ends (permit:F)" in said
