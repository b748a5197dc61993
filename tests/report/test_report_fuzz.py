"""Text from the wire never breaks the report: markup, escapes and 10 KB strings are data.

Notes, acknowledgement comments, checklist notes, adjustment reasons, badge ids and the
Clerk's resolution and reason arrive from anyone with a broker account. Whatever they
hold, the report is written, its page and CSVs carry no control character, and HTML in
them is shown as text, never run.
"""

from __future__ import annotations

import csv
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from report_support import TOPICS, ScriptedLog, write_permit
from wire_support import clerk_permit

from kent_ops.report.build import build_report

pytestmark = pytest.mark.slow

T0 = datetime(2027, 7, 4, 14, 0, tzinfo=UTC)  # 10:00 in Kent: the window opens
CONTROL = {chr(c) for c in range(32) if chr(c) not in "\t\n\r"} | {"\x7f"}

nasty = st.one_of(
    st.text(min_size=1, max_size=60),
    st.sampled_from(
        [
            "[/x]",
            "[b]bold[/b] [link=http://x]l[/link]",
            "\x1b[31mred\x1b[0m\x07",
            "<script>alert(1)</script>",
            "&amp; &lt; ]]> {{ }} %s %(x)s",
            "\u202etxet desrever",
            "x" * 10_000,
        ]
    ),
).filter(lambda s: s.strip() != "")


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(note=nasty, comment=nasty, reason=nasty, badge=nasty, resolution=nasty)
def test_any_text_from_the_wire_makes_a_report_that_shows_it_as_text(
    note: str, comment: str, reason: str, badge: str, resolution: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        permit = write_permit(folder, pending_s=0, clear_s=5)
        evidence = folder / "evidence.sqlite"
        log = ScriptedLog(evidence, permit, T0)
        log.badge(1, badge[:200], "doctor")
        log.gate("north", 2, 1200)  # 1,200 persons, no nurse: a breach to comment on
        log.tick(3)
        log.inspector("insp-1", "note", 4, text=note[:4000], alert="A-0001")
        log.inspector("insp-1", "ack", 5, alert="A-0001", comment=comment)
        log.inspector("insp-1", "adjust", 6, attendance=1100, reason=reason)
        log.inspector("insp-1", "inspection", 7, item="C(1)(h)", result="deficient", note=note)
        log.send(
            TOPICS.clerk_permit("clerk-1"),
            clerk_permit(log.at(8), "revoked", log.at(8), resolution, reason),
            8,
        )
        log.tick(20)
        log.close(30)
        out = folder / "report"
        build_report(permit, evidence, out)
        page = (out / "index.html").read_text(encoding="utf-8")
        assert not CONTROL & set(page)
        assert "<script>alert(1)</script>" not in page
        for name in ("findings.csv", "timeline.csv"):
            with (out / name).open(encoding="utf-8", newline="") as f:
                for row in csv.reader(f):
                    assert not CONTROL & set("".join(row))
