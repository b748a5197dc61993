"""Snapshots of every screen at 120×40 and 80×24, from a fixed status and a fixed clock;
the inspector's main screen also on phones held upright (40×70, 48×80).

No broker: the factories take ``broker=None`` and the statuses to show, the clock
stands still, cursors do not blink, so a run repeats exactly and any change of layout
shows up in review. Regenerate with ``pytest tests/dashboards --snapshot-update``
after looking at the new pictures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dashboard_samples as samples
import pytest

from dashboards.common.clock import fixed_clock
from dashboards.gate.app import GateApp, make_gate_app
from dashboards.inspector.app import InspectorApp, make_inspector_app

pytestmark = pytest.mark.slow  # whole screens drawn and compared with the stored SVGs

SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]
PHONES = [pytest.param((40, 70), id="40x70"), pytest.param((48, 80), id="48x80")]

SnapCompare = Any


def inspector() -> InspectorApp:
    return make_inspector_app(
        samples.EVENT,
        None,
        "insp-2",
        clock=fixed_clock(samples.NOW),
        statuses=samples.history(),
        alerts=samples.alerts(),
        blink=False,
    )


def gate(state_dir: Path, admit: bool, hold_in_s: int | None = None) -> GateApp:
    command = samples.command(admit=admit)
    attendance = {
        **samples.status_data()["attendance"],
        "current": command.attendance,
        "hold_in_s": hold_in_s,
    }
    return make_gate_app(
        "north",
        samples.EVENT,
        None,
        state_dir=state_dir,
        clock=fixed_clock(samples.NOW),
        statuses=[samples.status(admit=admit, attendance=attendance)],
        command=command,
    )


@pytest.mark.parametrize("size", SIZES)
class TestInspectorSnapshots:
    def test_main(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        assert snap_compare(inspector(), terminal_size=size)

    def test_alert_detail(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        assert snap_compare(inspector(), press=["enter"], terminal_size=size)

    def test_help(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        assert snap_compare(inspector(), press=["question_mark"], terminal_size=size)


@pytest.mark.parametrize("size", PHONES)
class TestInspectorPhoneSnapshots:
    def test_main(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        assert snap_compare(inspector(), terminal_size=size)

    def test_alert_detail(self, snap_compare: SnapCompare, size: tuple[int, int]) -> None:
        assert snap_compare(inspector(), press=["enter"], terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
class TestGateSnapshots:
    def test_admit(self, snap_compare: SnapCompare, size: tuple[int, int], tmp_path: Path) -> None:
        assert snap_compare(gate(tmp_path, admit=True), terminal_size=size)

    def test_hold(self, snap_compare: SnapCompare, size: tuple[int, int], tmp_path: Path) -> None:
        assert snap_compare(gate(tmp_path, admit=False), terminal_size=size)

    def test_admit_with_a_hold_coming(
        self, snap_compare: SnapCompare, size: tuple[int, int], tmp_path: Path
    ) -> None:
        """The words "HOLD in about 12 min" under the attendance, on the green sign."""
        assert snap_compare(gate(tmp_path, admit=True, hold_in_s=715), terminal_size=size)
