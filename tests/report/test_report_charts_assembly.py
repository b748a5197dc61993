"""The charts draw a requirement only while the assembly is on (docs/law.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from report_support import write_permit

from kent_ops.core.permit import load_permit
from kent_ops.report.charts import _while_on


def test_a_requirement_binds_only_in_the_minutes_the_assembly_is_on(tmp_path: Path) -> None:
    permit = load_permit(write_permit(tmp_path))
    window = permit.windows[0]
    minute = pd.Timedelta(minutes=1)
    start = pd.Timestamp(window.start).tz_convert("UTC")
    end = pd.Timestamp(window.end).tz_convert("UTC")
    index = pd.DatetimeIndex(
        [start - 2 * minute, start - minute, start, end - minute, end, end + minute]
    )
    attendance = [20, 600, 20, 20, 3, 0]  # crew; a crowd early; on; last minute; drift
    frame = pd.DataFrame({"attendance_max": attendance}, index=index)
    required = pd.Series([9, 9, 9, 9, 9, 9], index=index)
    assert _while_on(frame, permit, required).tolist() == [0, 9, 9, 9, 0, 0]
