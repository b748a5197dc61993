"""When the permit covers the assembly, what ended its cover, and why a gate holds.

The permit covers more than 500 persons while it is issued and the time is inside a
permitted window (permit:A); after a window ends or a revocation, the crowd has its
time to disperse from that instant (docs/law.md, "Dispersal"). ``why_uncovered`` is the
reason every deputy is told when the gates hold from 500 on, word for word.
"""

from __future__ import annotations

from core_support import NY, local, permit_variant

from kent_ops.core.coverage import CoverEnd, cover_end, local_clock, why_uncovered
from kent_ops.core.permit.status import PermitStatus
from kent_ops.core.timeutil import to_us

TWO_WINDOWS = [
    {"start": local(10), "end": local(13)},
    {"start": local(15), "end": local(23, 30)},
]


Windows = tuple[tuple[int, int], ...]


def _status(changes: dict[str, object] | None = None) -> tuple[PermitStatus, Windows]:
    permit = permit_variant({"windows": TWO_WINDOWS, **(changes or {})})
    windows = tuple((to_us(w.start), to_us(w.end)) for w in permit.windows)
    return PermitStatus(permit), windows


def test_the_cover_end_is_the_last_window_to_end_not_the_first() -> None:
    status, windows = _status()
    assert cover_end(windows, status, to_us(local(14))) == CoverEnd(to_us(local(13)), "window")
    assert cover_end(windows, status, to_us(local(23, 45))) == CoverEnd(
        to_us(local(23, 30)), "window"
    )
    assert cover_end(windows, status, to_us(local(16))) is None  # covered again


def test_a_gate_is_told_when_the_permitted_hours_begin_and_on_which_day() -> None:
    status, windows = _status()
    t = to_us(local(9))
    assert why_uncovered(windows, status, t, NY, True) == "the permitted hours begin at 10:00"
    late = to_us(local(23, 50, day=3))  # the evening before: the date is said
    assert (
        why_uncovered(windows, status, late, NY, True)
        == "the permitted hours begin at 10:00 on 2027-07-04"
    )


def test_a_gate_is_told_the_permit_is_not_issued() -> None:
    status, windows = _status({"permit.status": "pending"})
    t = to_us(local(12))
    assert why_uncovered(windows, status, t, NY, True) == "the permit is pending, not issued"


def test_a_revocation_is_named_with_its_day_when_it_was_not_today() -> None:
    revoked = {"permit.revoked_at": local(9), "permit.revocation_resolution": "2027-41"}
    status, windows = _status(revoked)
    # The revocation came before the first window: no cover ever ended, the change is said.
    assert (
        why_uncovered(windows, status, to_us(local(12)), NY, True)
        == "the permit was revoked at 09:00"
    )
    assert (
        why_uncovered(windows, status, to_us(local(1, day=5)), NY, True)
        == "the permit was revoked at 09:00 on 2027-07-04"
    )


def test_a_permit_for_500_or_fewer_covers_no_assembly_over_500() -> None:
    status, windows = _status()
    assert (
        why_uncovered(windows, status, to_us(local(12)), NY, False)
        == "a permit for 500 or fewer persons covers no assembly over 500"
    )


def test_a_clock_shows_seconds_only_when_there_are_some() -> None:
    assert local_clock(to_us(local(23, 30)), NY) == "23:30"
    assert local_clock(to_us(local(23, 30, 15)), NY) == "23:30:15"
