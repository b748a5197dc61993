"""The service's own alerts, and the sentence a person reads for any alert.

An alert no rule pass raised (``S-`` numbered: the evidence log, the broker session) is
active from its instant, with its first figures as its worst and its rule's sentence;
a finding that is a moment is ended at once. Once an alert has ended, the sentence shown
is its worst figures', not its last (``rules.shown_message``).
"""

from __future__ import annotations

from datetime import UTC

import msgspec
from core_support import local

from kent_ops.core.alerts import raised_outside
from kent_ops.core.rules import message_for, shown_message
from kent_ops.core.wire import Worst

AT = local(21, 15)
LOST = {"records": 5000, "source": "the broker's checkpoint", "accepted": False}
NAMED = {"record": 10000}


def test_an_alert_raised_outside_a_rule_pass_is_active_from_its_instant() -> None:
    alert = raised_outside("S-1", "evidence-rollback", AT, LOST, NAMED)
    assert (alert.id, alert.rule, alert.state, alert.severity) == (
        "S-1", "evidence-rollback", "active", "data",
    )  # fmt: skip
    assert alert.since == alert.raised_at == AT.astimezone(UTC)
    assert alert.ended_at is None
    assert (alert.worst.observed, alert.worst.required) == (LOST, NAMED)
    assert alert.message == message_for("evidence-rollback", None, LOST, NAMED)
    assert alert.message.startswith("the evidence log holds 5,000 records")


def test_a_finding_that_is_a_moment_is_ended_at_once_with_its_subjects_sentence() -> None:
    alert = raised_outside(
        "S-2", "counter-reset", AT, {"seq": 0, "restarts": 1}, {}, subject="south", ended=True
    )
    assert alert.ended_at == AT.astimezone(UTC)
    assert alert.state == "active"
    assert alert.message == "gate counter south restarted at seq 0; its earlier totals were kept"


def test_an_ended_alert_reads_its_worst_figures_and_a_live_one_its_figures_now() -> None:
    now = {"nurses_on_duty": 6, "attendance": 2840}
    live = msgspec.structs.replace(
        raised_outside("A-7", "nurse-ratio", AT, now, {"nurses": 6}),
        worst=Worst(observed={"nurses_on_duty": 4, "attendance": 3100}, required={"nurses": 7}),
    )
    assert shown_message(live) == "6 nurses on duty; 2,840 persons need 6 (permit:C(9))"
    ended = msgspec.structs.replace(live, ended_at=AT.astimezone(UTC))
    assert shown_message(ended) == "4 nurses on duty; 3,100 persons need 7 (permit:C(9))"
    no_worst = msgspec.structs.replace(ended, worst=Worst())
    assert shown_message(no_worst) == live.message
    other = msgspec.structs.replace(ended, rule="no-such-rule", message="kept as written")
    assert shown_message(other) == "kept as written"
