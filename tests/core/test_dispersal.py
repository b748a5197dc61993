"""Going home is no offence: the crowd's time to disperse, and what ends it, to the second.

After a window ends or a revocation takes effect, more than 500 persons present is the
warning ``dispersing`` for ``permit.dispersal_minutes`` (60 by default) as long as nobody
is admitted; ``permit-required`` holds from the first admission, or from the end of the
allowance with more than 500 still there (docs/law.md, "Dispersal"). The example
permit's window runs 10:00-23:30 on 4 July 2027 in Kent.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from core_support import QUICK, US, WINDOW_END, Driver, local, permit_variant, when
from wire_support import clerk_permit

from kent_ops.core.engine import Engine
from kent_ops.core.permit import parse_permit
from kent_ops.core.rules import message_for

MINUTE = timedelta(minutes=60 // 60)


def staffed(changes: dict[str, Any] | None = None) -> Driver:
    d = Driver(permit_variant({**QUICK, **(changes or {})}))
    d.staff(local(9, 50), doctors=1, nurses=10, security=20)
    return d


def leaving(d: Driver, start: int, until: datetime, per_minute: int = 100) -> None:
    """``start`` persons at 23:29:59, ``per_minute`` leaving each minute from 23:30."""
    d.present(start, WINDOW_END - timedelta(seconds=1))
    n, t = start, WINDOW_END
    while t <= until and n > 0:
        n = max(n - per_minute, 0)
        d.present(n, t)
        t += MINUTE


LAW = ("dispersing", "permit-required")


def rules(d: Driver, names: tuple[str, ...] = LAW) -> list[tuple[str, Any, Any]]:
    """(rule, since, ended_at) of each alert of ``names``, in id order."""
    return [
        (a["rule"], when(a["since"]), when(a["ended_at"])) for a in d.alerts() if a["rule"] in names
    ]


def test_a_crowd_leaving_after_the_window_is_dispersing_never_without_a_permit() -> None:
    d = staffed()
    leaving(d, 3000, local(0, 10, day=5))
    d.tick(local(1, day=5))
    assert d.alerts("permit-required") == []
    (warning,) = d.alerts("dispersing")
    assert warning["severity"] == "warning"
    assert warning["cite"] == "permit:A"
    assert when(warning["since"]) == WINDOW_END
    # 3,000 at 23:29:59; 2,900 at 23:30 ... 500 at 23:54: no longer more than 500.
    assert when(warning["ended_at"]) == local(23, 54)
    worst = warning["worst"]
    assert message_for("dispersing", None, worst["observed"], worst["required"]) == (
        "3,000 persons leaving after the permitted hours ended at 23:30; more than 500 may "
        "remain until 00:30, and no one may be admitted (permit:A)"
    )


def test_the_gates_hold_from_the_window_end_and_say_why() -> None:
    d = staffed()
    d.present(3000, WINDOW_END - US)
    assert d.engine.commands()["north"].admit is True
    d.tick(WINDOW_END)
    command = d.engine.commands()["north"]
    assert command.admit is False
    assert command.reason == "HOLD: the permitted hours ended at 23:30: admit no one (permit:A)"
    d.present(499, local(23, 50))
    assert d.engine.commands()["north"].admit is True


@pytest.mark.parametrize("second", [0, 1])
def test_one_admission_after_the_end_ends_the_allowance(second: int) -> None:
    d = staffed()
    d.present(3000, WINDOW_END - timedelta(seconds=1))
    admitted = WINDOW_END + timedelta(seconds=second)
    d.gate("south", admitted, 1, 0)  # one person in through the south gate
    (alert,) = d.alerts("permit-required")
    assert when(alert["since"]) == admitted
    assert alert["observed"] == {
        "attendance": 3001,
        "permit_issued": True,
        "inside_window": False,
        "ended_at": "2027-07-04T23:30:00-04:00",
        "ended_by": "window",
        "dispersal": "admitted",
        "admitted_at": admitted.isoformat(),
    }
    assert alert["message"].startswith(
        f"3,001 persons present and someone was admitted at 23:30{':01' if second else ''}, "
        "after the permitted hours ended at 23:30"
    )
    (warning,) = d.alerts("dispersing")
    assert when(warning["ended_at"]) == admitted


def test_an_entry_in_the_windows_last_second_is_no_admission_after_it() -> None:
    d = staffed()
    d.present(3000, WINDOW_END - timedelta(seconds=2))
    d.gate("south", WINDOW_END - US, 1, 0)
    d.tick(WINDOW_END + timedelta(minutes=59))
    assert d.alerts("permit-required") == []


def test_the_allowances_last_second_with_501_present() -> None:
    d = staffed()
    d.present(501, local(23))
    end = WINDOW_END + timedelta(minutes=60)
    d.tick(end - US)
    assert d.holds("dispersing")
    assert not d.holds("permit-required")
    d.tick(end)
    assert not d.holds("dispersing")
    (alert,) = d.alerts("permit-required")
    assert when(alert["since"]) == end
    assert alert["observed"]["dispersal"] == "allowance over"
    assert alert["observed"]["allowance_until"] == "2027-07-05T00:30:00-04:00"
    assert alert["message"] == (
        "501 persons present after the permitted hours ended at 23:30, and the time allowed "
        "to disperse ended at 00:30 (permit:A, penalties:A)"
    )


def test_500_present_when_the_allowance_ends_is_no_breach() -> None:
    d = staffed()
    d.present(500, local(23))
    d.tick(WINDOW_END + timedelta(hours=2))
    assert rules(d) == []


def test_the_board_sets_the_allowance_in_the_permit() -> None:
    d = staffed({"permit.dispersal_minutes": 20})
    d.present(900, local(23))
    d.tick(WINDOW_END + timedelta(minutes=21))
    assert rules(d) == [
        ("dispersing", WINDOW_END, WINDOW_END + timedelta(minutes=20)),
        ("permit-required", WINDOW_END + timedelta(minutes=20), None),
    ]


def test_no_allowance_when_the_board_gives_none() -> None:
    d = staffed({"permit.dispersal_minutes": 0})
    d.present(900, local(23))
    d.tick(WINDOW_END + MINUTE)
    assert rules(d) == [("permit-required", WINDOW_END, None)]


def test_a_revocation_during_the_allowance_does_not_start_a_new_one() -> None:
    d = staffed()
    d.present(900, local(23))
    effective = local(23, 50)
    body = clerk_permit(local(23, 45), "revoked", effective, "TB-2027-50", "unsafe crowd")
    assert d.feed(d.topics.clerk_permit("clerk-1"), body, local(23, 45)).accepted
    d.tick(local(0, 31, day=5))
    assert rules(d) == [
        ("dispersing", WINDOW_END, local(0, 30, day=5)),
        ("permit-required", local(0, 30, day=5), None),
    ]
    (alert,) = d.alerts("permit-required")
    assert alert["observed"]["ended_by"] == "window"


def test_a_window_that_opens_again_ends_the_allowance() -> None:
    windows = [
        {"start": local(10), "end": local(14)},
        {"start": local(14, 30), "end": local(23, 30)},
    ]
    d = staffed({"windows": windows})
    d.present(900, local(13))
    d.tick(local(15))
    assert rules(d) == [("dispersing", local(14), local(14, 30))]
    d.gate("south", local(15), 10, 0)  # admitted inside the second window: lawful
    d.tick(local(16))
    assert d.alerts("permit-required") == []


def test_a_walk_between_two_properties_admits_no_one() -> None:
    text = permit_variant(QUICK)  # noqa: F841 - the example's single property
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    two = (root / "examples" / "permit-two-properties.toml").read_text()
    start, stop = two.index("[[windows]]"), two.index("[limits]")
    two = (
        two[:start]
        + "[[windows]]\nstart = 2027-08-14T10:00:00-04:00\nend = 2027-08-14T23:30:00-04:00\n\n"
        + two[stop:]
        + "\n[alerting]\npending_s = 0\nclear_s = 0\nstale_after_s = 864000\n"
    )
    d = Driver(parse_permit(two))
    ny = local(10).tzinfo
    end = datetime(2027, 8, 14, 23, 30, tzinfo=ny)
    d.staff(datetime(2027, 8, 14, 9, 50, tzinfo=ny), doctors=1, nurses=10, security=30)
    d.gate("north", end - timedelta(hours=1), 900, 0)
    d.gate("field-to-meadow", end + timedelta(minutes=5), 300, 0)  # field to meadow
    d.tick(end + timedelta(minutes=30))
    assert [a["rule"] for a in d.alerts() if a["severity"] != "data"] == ["dispersing"]


def test_a_revocation_in_the_file_applies_from_its_instant_whatever_the_status_says() -> None:
    d = Driver(
        permit_variant(
            {
                **QUICK,
                "permit.status": "revoked",
                "permit.revoked_at": local(15),
                "permit.revocation_resolution": "TB-2027-40",
            }
        )
    )
    d.staff(local(9, 50), doctors=1, nurses=10, security=20)
    d.present(1000, local(10, 1))
    d.tick(local(15) - US)
    assert rules(d) == []
    assert d.status()["permit"]["status"] == "issued"
    d.tick(local(15))
    assert rules(d) == [("dispersing", local(15), None)]
    assert d.status()["permit"]["status"] == "revoked"
    d.tick(local(16))
    assert rules(d)[-1] == ("permit-required", local(16), None)


def test_a_permit_revoked_without_an_instant_covers_nothing() -> None:
    d = Driver(permit_variant({**QUICK, "permit.status": "revoked"}))
    d.staff(local(9, 50), doctors=1, nurses=10, security=20)
    d.present(1000, local(10, 1))
    assert rules(d) == [("permit-required", local(10, 1), None)]


def test_snapshot_mid_allowance_restores_the_entries_it_watches() -> None:
    d = staffed()
    d.present(900, local(23))
    d.tick(local(23, 40))
    restored = Engine.restore(d.permit, d.engine.snapshot(), "sensor")
    d.engine = restored
    d.gate("south", local(23, 41), 1, 0)
    (alert,) = d.alerts("permit-required")
    assert when(alert["since"]) == local(23, 41)
    assert alert["observed"]["dispersal"] == "admitted"


# -- what the chapter regulates -------------------------------------------------------------


def small(changes: dict[str, Any] | None = None) -> Driver:
    limits = {"limits.max_at_one_time": 500, "alerting.hold_at": 500, "alerting.resume_below": 495}
    return Driver(permit_variant({**QUICK, **limits, **(changes or {})}))


def test_no_duty_binds_an_assembly_of_500_or_fewer() -> None:
    d = small(
        {"limits.max_at_one_time": 400, "alerting.hold_at": 400, "alerting.resume_below": 390}
    )
    d.present(12, local(12))  # nobody on duty
    d.inspector("insp-1", "inspection", local(12, 1), item="C(2)(a)", result="deficient",
                note="toilets overflowing")  # fmt: skip
    d.tick(local(13))
    assert [a["rule"] for a in d.alerts()] == []
    assert d.status()["assembly"]["on"] is False


def test_500_and_501_in_a_permit_for_500() -> None:
    d = small()
    d.present(500, local(12))
    assert rules(d) == []
    d.present(501, local(12, 1))
    assert rules(d) == [("permit-required", local(12, 1), None)]
    (alert,) = d.alerts("permit-required")
    assert alert["message"] == (
        "501 persons present; a permit for at most 500 covers no assembly of more than 500 "
        "(permit:A, penalties:A)"
    )
    assert d.status()["assembly"]["on"] is False
    assert d.engine.commands()["north"].admit is False


def test_a_mark_on_the_clean_up_before_the_end_is_never_a_breach() -> None:
    d = staffed()
    d.present(1000, local(10, 1))
    result = d.inspector("insp-1", "inspection", local(10, 5), item="F", result="deficient",
                         note="litter near stage")  # fmt: skip
    assert result.accepted
    d.tick(local(11))
    assert d.alerts("facility-deficient") == []
    assert d.status()["checklist"]["F"]["result"] == "deficient"


def test_people_going_out_and_back_in_are_entries_not_persons() -> None:
    d = staffed({"limits.max_collective": 5000})
    d.gate("north", local(11), 3000, 0)
    d.gate("north", local(12), 5100, 2100)  # 2,100 out and back: still 3,000 present
    (alert,) = d.alerts("max-collective")
    assert alert["severity"] == "warning"
    assert alert["observed"] == {"entries": 5100}
    assert d.alerts("max-at-one-time") == []
