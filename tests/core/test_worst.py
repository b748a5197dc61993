"""An alert's worst figure, in fixed examples: the highest attendance reached, wherever.

The engine skips rule passes while attendance moves between two thresholds (nothing but
numbers can change there), so the highest figure is often one no rule pass saw: reached
while the condition was still pending, or between two passes after it was raised. Each
example here writes the attendances and instants down, with the worst they must give.

Two registered nurses cover 1,000 persons (permit:C(9), one per 500); from 1,001 to
1,500 persons a third is needed, so the nurse-ratio condition holds with a shortfall of
one throughout and the worst figure is the one with the most persons.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from core_support import QUICK, Driver, local, permit_variant, when

PENDING = {**QUICK, "alerting.pending_s": 10, "alerting.clear_s": 30}


def staffed() -> Driver:
    d = Driver(permit_variant(PENDING))
    d.staff(local(12), doctors=1, nurses=2, security=20)
    d.present(900, local(12))
    return d


def worst(alert: dict[str, Any]) -> tuple[int, int, int]:
    """(persons, nurses on duty, nurses required) of the alert's worst figure."""
    w = alert["worst"]
    return w["observed"]["attendance"], w["observed"]["nurses_on_duty"], w["required"]["nurses"]


def published(d: Driver) -> dict[str, dict[str, Any]]:
    """The alerts as the service publishes them (what the evidence log records)."""
    return {a.id: msgspec.to_builtins(a) for a in d.engine.collect_changes().alerts}


def at(second: int) -> datetime:
    return local(12, 0, second)


def test_a_peak_reached_while_pending_between_passes_is_the_worst_after_the_raise() -> None:
    d = staffed()
    d.present(1100, at(1))  # crosses 1,000: the condition starts, pending for 10 s
    assert [when(p["since"]) for p in d.pending("nurse-ratio")] == [at(1)]
    for second, persons in ((2, 1300), (3, 1450), (4, 1250)):  # between two thresholds
        d.present(persons, at(second))
    assert d.alerts("nurse-ratio") == []  # still pending
    d.tick(at(11))  # raised at 12:00:11
    (alert,) = d.alerts("nurse-ratio")
    assert when(alert["since"]) == at(1)
    assert when(alert["raised_at"]) == at(11)
    assert worst(alert) == (1450, 2, 3)
    (sent,) = published(d).values()
    assert worst(sent) == (1450, 2, 3)
    for second, persons in ((12, 1150), (13, 1020)):  # attendance falls, still in breach
        d.present(persons, at(second))
    d.tick(at(20))
    (alert,) = d.alerts("nurse-ratio")
    assert alert["ended_at"] is None
    assert worst(alert) == (1450, 2, 3)
    assert d.status()["attendance"]["peak"] == 1450


def test_a_peak_reached_while_pending_and_seen_by_a_rule_pass_is_the_worst() -> None:
    """A badge scan makes the engine evaluate at the peak; the figure then falls."""
    d = staffed()
    d.present(1100, at(1))
    d.present(1480, at(2))
    d.badge(at(3), "S-0099", "security", "on")  # a rule pass at 1,480 persons
    d.present(1040, at(4))
    d.badge(at(5), "S-0099", "security", "off")  # another, at 1,040
    d.tick(at(11))
    (alert,) = d.alerts("nurse-ratio")
    assert worst(alert) == (1480, 2, 3)
    assert alert["observed"]["attendance"] == 1040


def test_a_peak_before_the_situation_changed_keeps_its_own_figures() -> None:
    """The peak is judged with the staff on duty when it was reached, not with later staff."""
    d = staffed()
    d.present(1100, at(1))
    d.tick(at(11))  # raised at 1,100
    d.present(1490, at(12))  # the highest, between two passes
    d.present(1200, at(13))
    d.badge(at(14), "RN-0099", "nurse", "on")  # a third nurse: the breach ends here
    (alert,) = d.alerts("nurse-ratio")
    assert when(alert["ended_at"]) == at(14)
    assert worst(alert) == (1490, 2, 3)
    (sent,) = published(d).values()
    assert worst(sent) == (1490, 2, 3)


def test_a_peak_after_the_raise_between_passes_is_the_worst_however_often_one_looks() -> None:
    def run(looking: bool) -> dict[str, Any]:
        d = staffed()
        d.present(1100, at(1))
        d.tick(at(11))
        for second, persons in ((12, 1200), (13, 1390), (14, 1310), (15, 1005)):
            d.present(persons, at(second))
            if looking:
                d.alerts()
                published(d)
        d.present(990, at(16))  # below 1,001: the breach ends, a rule pass
        d.tick(at(50))  # and clears 30 s later
        (alert,) = d.alerts("nurse-ratio")
        return alert

    quiet, busy = run(False), run(True)
    assert worst(quiet) == worst(busy) == (1390, 2, 3)
    assert quiet == busy
    assert quiet["state"] == "cleared"
    assert when(quiet["ended_at"]) == at(16)


def test_a_larger_shortfall_outranks_a_larger_crowd() -> None:
    """Worst is the largest shortfall first, then the most persons."""
    d = staffed()
    d.present(1100, at(1))
    d.tick(at(11))
    d.badge(at(12), d.on_duty["nurse"][0], "nurse", "off")  # one nurse left
    d.present(1400, at(13))  # 3 needed, 2 short
    d.badge(at(14), "RN-0099", "nurse", "on")  # two again
    d.present(1450, at(15))  # 3 needed, 1 short: more persons, a smaller shortfall
    (alert,) = d.alerts("nurse-ratio")
    assert worst(alert) == (1400, 1, 3)
    d.present(1600, at(16))  # 4 needed, 2 short, and more persons than at 1,400
    (alert,) = d.alerts("nurse-ratio")
    assert worst(alert) == (1600, 2, 4)


def test_a_peak_that_a_rule_pass_saw_while_pending_is_the_worst() -> None:
    """Deputies hold at 1,450: crossing it is a rule pass, so the pass itself sees the peak."""
    d = Driver(permit_variant({**PENDING, "alerting.hold_at": 1450, "alerting.resume_below": 1400}))
    d.staff(local(12), doctors=1, nurses=2, security=20)
    d.present(900, local(12))
    d.present(1100, at(1))
    d.present(1480, at(2))  # HOLD: a rule pass at the peak
    assert d.status()["admit"] is False
    d.present(1040, at(3))  # ADMIT again: another pass, below the peak
    assert d.status()["admit"] is True
    d.tick(at(11))
    (alert,) = d.alerts("nurse-ratio")
    assert when(alert["raised_at"]) == at(11)
    assert worst(alert) == (1480, 2, 3)
    assert alert["observed"]["attendance"] == 1040


def test_the_published_alert_carries_the_highest_figure_up_to_its_publication() -> None:
    """What the service logs and publishes includes figures no rule pass has seen yet."""
    d = staffed()
    d.present(1100, at(1))
    d.present(1450, at(2))
    d.tick(at(11))  # raised; not yet collected
    d.present(1490, at(12))  # higher still, between two passes
    d.present(1200, at(13))
    (sent,) = published(d).values()
    assert sent["state"] == "active"
    assert worst(sent) == (1490, 2, 3)
    assert worst(sent) == worst(d.alerts("nurse-ratio")[0])


def test_a_peak_is_judged_at_the_instant_it_was_reached() -> None:
    """A peak between two rule passes counts as it stood then.

    The nurses' duty binds above 500 persons: 1,000 with one nurse need 2 (pending, then
    raised); 1,300 for five seconds just before the window closes need 3, and are the
    worst figure though no rule pass saw them; the crowd above 500 keeps the assembly on
    past 23:30, and the breach ends only when 500 or fewer remain.
    """
    d = Driver(permit_variant(PENDING))
    d.staff(local(23), doctors=1, nurses=1, security=20)
    d.present(1_000, local(23))  # one nurse for 1,000 persons: pending
    d.tick(local(23, 0, 11))  # raised
    d.present(1_300, local(23, 29, 50))  # the highest, between two passes
    d.present(1_150, local(23, 29, 55))
    d.present(400, local(23, 31))  # 500 or fewer: the duty no longer binds
    d.tick(local(23, 32))
    (alert,) = d.alerts("nurse-ratio")
    assert when(alert["ended_at"]) == local(23, 31)
    assert worst(alert) == (1_300, 1, 3)


def test_the_fewest_guards_on_duty_is_the_worst_security_figure() -> None:
    """20 guards declared (permit:B(8)): 15 on duty is worse than 18 or 17."""
    d = Driver(permit_variant(QUICK))
    d.staff(local(9, 50), doctors=1, nurses=2, security=18)  # before the window opens
    d.present(900, local(12))
    d.staff(local(12, 1), security=15)
    d.staff(local(12, 2), security=17)
    (alert,) = d.alerts("security-staffing")
    assert alert["observed"]["security_on_duty"] == 17
    assert alert["worst"]["observed"]["security_on_duty"] == 15


def test_the_largest_shortfall_of_the_applications_doctors_is_the_worst() -> None:
    """The application specifies 3 doctors; the law's one is met throughout."""
    d = Driver(permit_variant({**QUICK, "staffing.doctors_min": 3}))
    d.staff(local(12), doctors=2, nurses=2, security=20)
    d.present(900, local(12))
    d.staff(local(12, 1), doctors=1)
    d.staff(local(12, 2), doctors=2)
    (alert,) = d.alerts("application-staffing")
    assert alert["observed"]["doctors_on_duty"] == 2
    assert alert["worst"]["observed"]["doctors_on_duty"] == 1
