"""Snapshots of the checklist screen at 120×40 and 80×24, from a real engine's status.

No broker, a clock that stands still, cursors that do not blink: a run repeats
exactly. The chosen item is the deficient one, so its alert shows under the list.
Regenerate with ``pytest tests/checklist --snapshot-update`` after looking at them.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from checklist_support import engine_status, write_permit
from live_support import EVENT, T0

from dashboards.common.clock import fixed_clock
from dashboards.inspector.app import InspectorApp, make_inspector_app
from kent_ops.core.permit import load_permit

pytestmark = pytest.mark.slow  # whole screens drawn and compared with the stored SVGs

SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]

SnapCompare = Any

MARKS = [
    ("insp-1", "C(1)(a)", "ok", "", 600),
    ("insp-1", "C(1)(b)", "ok", "", 660),
    ("insp-1", "C(1)(h)", "deficient", "common cup at water station 2", 720),
    ("insp-2", "C(2)(a)", "ok", "", 780),
    ("insp-2", "C(3)", "n/a", "sewage goes to the county plant", 840),
    ("insp-2", "D", "ok", "", 900),
]


def checklist_app(tmp_path: Path) -> InspectorApp:
    permit = load_permit(write_permit(tmp_path))
    status, alerts = engine_status(permit, MARKS)
    return make_inspector_app(
        EVENT,
        None,
        "insp-1",
        clock=fixed_clock(T0 + timedelta(seconds=905)),
        statuses=[status],
        alerts=alerts,
        blink=False,
    )


@pytest.mark.parametrize("size", SIZES)
class TestChecklistSnapshots:
    def test_checklist(
        self, snap_compare: SnapCompare, size: tuple[int, int], tmp_path: Path
    ) -> None:
        press = ["i", *["down"] * 7]  # C(1)(a) … C(1)(h), the deficient one
        assert snap_compare(checklist_app(tmp_path), press=press, terminal_size=size)

    def test_deficient_form(
        self, snap_compare: SnapCompare, size: tuple[int, int], tmp_path: Path
    ) -> None:
        press = ["i", "down", "d", "space", "enter"]  # an empty note is refused
        assert snap_compare(checklist_app(tmp_path), press=press, terminal_size=size)
