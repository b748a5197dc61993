"""The taps of a deputy's phone: which are well formed, and which were applied already."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kent_ops.web.taps import MOST_TAPS, Tap, TapJournal, parse_taps


def test_only_a_list_of_well_formed_taps_is_taken() -> None:
    ok = [{"id": "a1b2c3d4e5", "d": "in"}, {"id": "f6g7h8i9j0", "d": "out"}]
    assert parse_taps(ok) == [Tap("a1b2c3d4e5", "in"), Tap("f6g7h8i9j0", "out")]
    for bad in (
        None, "taps", [], [ok[0]] * (MOST_TAPS + 1), [{"id": "short", "d": "in"}],
        [{"id": "a1b2c3d4e5", "d": "up"}], [{"id": "a1b2c3/d4e5", "d": "in"}],
        [{"id": 12345678901, "d": "in"}], [ok[0], "in"],
    ):  # fmt: skip
        assert parse_taps(bad) is None, bad


def test_an_applied_tap_is_remembered_across_a_restart_with_its_index(tmp_path: Path) -> None:
    path = tmp_path / "fest.north-manual.taps"
    journal = TapJournal(path)
    assert journal.index("tap-00000001") is None
    journal.record(["tap-00000001", "tap-00000002"], 2, 0)
    journal.record(["tap-00000003"], 2, 1)
    again = TapJournal(path)  # kent-ops serve restarted
    assert again.index("tap-00000001") == again.index("tap-00000002") == 2
    assert again.index("tap-00000003") == 3
    assert again.totals == (2, 1)
    assert path.stat().st_mode & 0o077 == 0


def test_a_tally_behind_its_journal_catches_up_once(tmp_path: Path) -> None:
    """Stopped between the journal and the count: the tally is behind by that batch."""
    journal = TapJournal(tmp_path / "j.taps")
    journal.record(["tap-00000001"], 5, 2)
    assert journal.behind(4, 2) == (1, 0)
    assert journal.behind(5, 2) == (0, 0)
    assert journal.behind(9, 9) == (0, 0)  # ahead (counted by the terminal view): nothing


def test_a_line_cut_short_by_a_crash_is_a_batch_never_counted(tmp_path: Path) -> None:
    path = tmp_path / "j.taps"
    TapJournal(path).record(["tap-00000001"], 1, 0)
    with path.open("a") as f:
        f.write('{"ids": ["tap-00000002"], "in"')  # the crash
    journal = TapJournal(path)
    assert journal.index("tap-00000002") is None
    assert journal.totals == (1, 0)


def test_the_journal_keeps_the_latest_ids_and_stays_small(tmp_path: Path) -> None:
    path = tmp_path / "j.taps"
    journal = TapJournal(path, keep=10)
    for n in range(1, 31):
        journal.record([f"tap-{n:08d}"], n, 0)
    assert journal.index("tap-00000030") == 30
    assert journal.index("tap-00000001") is None  # long delivered: forgotten
    assert len(path.read_text().splitlines()) <= 21
    again = TapJournal(path, keep=10)
    assert again.totals == (30, 0)
    assert again.index("tap-00000025") == 25
    assert all(json.loads(line) for line in path.read_text().splitlines())


@pytest.mark.parametrize("entered", [0, 3])
def test_the_index_is_the_taps_counted_once_the_batch_is(tmp_path: Path, entered: int) -> None:
    journal = TapJournal(tmp_path / "j.taps")
    journal.record(["tap-aaaaaaaa"], entered + 1, 4)
    assert journal.index("tap-aaaaaaaa") == entered + 5
