"""Snapshots of each dialog at 120×40 and 80×24, over a real engine's afternoon.

One class per dialog (Posting's habit). The status and alerts behind them come from an
:class:`~kent_ops.core.engine.Engine` fed by :mod:`engine_samples`, the clock stands
still and cursors do not blink, so a run repeats exactly. The checklist's deficient form
is in ``tests/checklist/test_checklist_snapshots.py``, from a real engine too.
Regenerate with ``pytest tests/dashboards --snapshot-update`` after looking at them.
"""

from __future__ import annotations

from typing import Any

import pytest
from engine_samples import afternoon
from form_support import inspector, keys

pytestmark = pytest.mark.slow  # whole screens drawn and compared with the stored SVGs

SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]

SnapCompare = Any


@pytest.mark.parametrize("size", SIZES)
class TestAckForm:
    def test_form(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        assert snap_compare(inspector(afternoon()), press=["a"], terminal_size=size)

    def test_confirmation(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        press = ["a", *keys("Called the organiser"), "enter"]
        assert snap_compare(inspector(afternoon()), press=press, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
class TestNoteForm:
    def test_form(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        assert snap_compare(inspector(afternoon()), press=["n"], terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
class TestAdjustForm:
    def test_reason_required(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        """The counted figure typed, the reason missing: the field and the error show."""
        press = ["c", *keys("3050"), "enter"]
        assert snap_compare(inspector(afternoon()), press=press, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
class TestPermitForm:
    def test_form(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        app = inspector(afternoon(), clerk="town-clerk")
        assert snap_compare(app, press=["R"], terminal_size=size)

    def test_confirmation(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        app = inspector(afternoon(), clerk="town-clerk")
        press = ["R", *keys("TB-2027-41"), "tab", *keys("no doctor on site"), "enter"]
        assert snap_compare(app, press=press, terminal_size=size)

    def test_revoked_main_screen(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        """After the revocation: the permit's alarm under the header, the key to reinstate."""
        app = inspector(afternoon(revoked=True), clerk="town-clerk")
        assert snap_compare(app, terminal_size=size)
