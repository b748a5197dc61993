"""The per-minute timeline (``timeline.csv``) from the per-second samples, with pandas.

Minutes are cut in UTC, where every minute is a minute, and only then shown in the
event's zone: a day with a daylight-saving change keeps its true length (the November
day in New York has 1,500 rows). Each row describes the whole minute, including the
figure carried in from before it:

- ``attendance_max``: the highest attendance at any moment of the minute;
- ``entries``: entries counted by the end of the minute;
- ``doctors_on_duty``/``nurses_on_duty``: the fewest on duty at any moment of it;
- ``nurses_required``/``spaces_required``: what ``attendance_max`` requires;
- ``spaces_provided``: the permit's lots; ``vehicles``: the most cars in the lots;
- ``uncertain``: 1 when some figure of the minute rested, for any part of it, on a
  sensor in doubt or on attendance clamped at 0 (the engine's doubt spans, core/doubt.py);
- for an assembly over several properties, ``attendance_{property}``: the most persons on
  each property at any moment of the minute.
"""

from __future__ import annotations

import csv
from array import array
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from kent_ops.core import ordinance as law
from kent_ops.core.doubt import DoubtSpan
from kent_ops.core.permit import Permit
from kent_ops.report.collect import (
    ATTENDANCE_AT_START,
    STAFF_AT_START,
    VEHICLES_AT_START,
    Samples,
)
from kent_ops.report.findings import Finding

__all__ = [
    "COLUMNS",
    "breach_minutes",
    "columns_of",
    "minute_table",
    "minutes_of",
    "write_timeline_csv",
]

COLUMNS = (
    "minute",
    "attendance_max",
    "entries",
    "doctors_on_duty",
    "nurses_on_duty",
    "nurses_required",
    "spaces_provided",
    "spaces_required",
    "vehicles",
    "uncertain",
)
"""The columns of every timeline; an assembly over several properties adds one
``attendance_{property}`` column each after them (:func:`columns_of`)."""


def columns_of(frame: pd.DataFrame) -> list[str]:
    """The timeline's columns in order, ``minute`` first."""
    extra = [c for c in frame.columns if c.startswith("attendance_") and c != "attendance_max"]
    return [*COLUMNS, *extra]


def _series(values: array[int], index: pd.DatetimeIndex) -> pd.Series:
    return pd.Series(np.frombuffer(values, dtype=np.int64), index=index)


def minutes_of(frame: pd.DataFrame) -> pd.DatetimeIndex:
    """A timeline's index, its minutes in UTC (a frame's index is typed as any index)."""
    minutes = frame.index
    if not isinstance(minutes, pd.DatetimeIndex):
        raise TypeError("a timeline is indexed by its minutes")
    return minutes


def minute_table(
    samples: Samples,
    permit: Permit,
    end: datetime | None,
    doubts: list[DoubtSpan] | None = None,
) -> pd.DataFrame:
    """One row per minute from the first sample to the log's end; index in UTC.

    ``doubts`` are the engine's spans of figures in doubt (``uncertain``). Returns an
    empty frame (with the columns but ``minute``) when nothing was sampled.
    """
    columns = list(COLUMNS[1:]) + [f"attendance_{p}" for p in samples.property_max]
    if len(samples) == 0:
        return pd.DataFrame(
            {c: pd.Series(dtype="int64") for c in columns},
            index=pd.DatetimeIndex([], tz="UTC", name="minute"),
        )
    index = pd.to_datetime(np.frombuffer(samples.second, dtype=np.int64), unit="s", utc=True)
    first = index[0].floor("1min")
    last = index[-1]
    if end is not None:
        last = max(last, pd.Timestamp(end).tz_convert("UTC"))
    minutes = pd.date_range(first, last.floor("1min"), freq="1min", name="minute")

    def per_minute(values: array[int], how: str) -> pd.Series:
        resampled = _series(values, index).resample("1min")
        out = (
            resampled.max()
            if how == "max"
            else resampled.min()
            if how == "min"
            else (resampled.last())
        )
        return out.reindex(minutes)

    at_start = per_minute(samples.changed_at_start, "max").fillna(0).astype("int64")

    def whole_minute(extreme: array[int], last_values: array[int], how: str, bit: int) -> pd.Series:
        """The extreme within each minute, counting the value carried in from before it
        unless the figure changed exactly at the minute's start."""
        held = per_minute(last_values, "last").ffill()
        carried = held.shift(1).where((at_start & bit) == 0)
        inside = per_minute(extreme, how)
        both = pd.concat([inside, carried], axis=1)
        combined = both.max(axis=1) if how == "max" else both.min(axis=1)
        return combined.ffill().fillna(0).astype("int64")

    attendance = whole_minute(
        samples.attendance_max, samples.attendance_last, "max", ATTENDANCE_AT_START
    )
    present = attendance.clip(lower=0)
    ppn = permit.persons_per_nurse
    frame = pd.DataFrame(
        {
            "attendance_max": attendance,
            "entries": per_minute(samples.entries_last, "last").ffill().fillna(0).astype("int64"),
            "doctors_on_duty": whole_minute(
                samples.doctors_min, samples.doctors_last, "min", STAFF_AT_START
            ),
            "nurses_on_duty": whole_minute(
                samples.nurses_min, samples.nurses_last, "min", STAFF_AT_START
            ),
            "nurses_required": (-(-present // ppn)).astype("int64"),
            "spaces_provided": pd.Series(permit.spaces_provided, index=minutes, dtype="int64"),
            "spaces_required": (-(-present // law.PERSONS_PER_CAR_SPACE)).astype("int64"),
            "vehicles": whole_minute(
                samples.vehicles_max, samples.vehicles_last, "max", VEHICLES_AT_START
            ),
            "uncertain": _uncertain(minutes, doubts or []),
        },
        index=minutes,
    )
    for prop, most in samples.property_max.items():
        frame[f"attendance_{prop}"] = whole_minute(
            most, samples.property_last[prop], "max", ATTENDANCE_AT_START
        )
    return frame


def _uncertain(minutes: pd.DatetimeIndex, spans: list[DoubtSpan]) -> pd.Series:
    """1 for each minute that some doubt span overlaps, for any part of it."""
    starts = minutes.as_unit("us").asi8  # microseconds, as the engine keeps instants
    stops = starts + 60_000_000
    marked = np.zeros(len(starts), dtype=np.int64)
    for span in spans:
        until = span.end if span.end is not None else np.iinfo(np.int64).max
        marked |= ((starts < until) & (stops > span.start)).astype(np.int64)
    return pd.Series(marked, index=minutes, dtype="int64")


def write_timeline_csv(frame: pd.DataFrame, tz: ZoneInfo, path: Path) -> None:
    """``timeline.csv``: :func:`columns_of`, minutes in the event's zone with their offset."""
    local = minutes_of(frame).tz_convert(tz)
    columns = columns_of(frame)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(columns)
        values = frame[columns[1:]].to_numpy(dtype=np.int64).tolist()
        for minute, row in zip(local, values, strict=True):
            writer.writerow([minute.isoformat(), *row])


def breach_minutes(
    findings: list[Finding], frame: pd.DataFrame, end: datetime | None
) -> dict[str, int]:
    """For each breach rule, how many minutes of the timeline some finding of it touched."""
    out: dict[str, int] = {}
    if frame.empty:
        return out
    starts = minutes_of(frame)
    stops = starts + pd.Timedelta(minutes=1)
    for rule in sorted({f.rule for f in findings if f.is_breach}):
        touched = np.zeros(len(starts), dtype=bool)
        for f in findings:
            if f.rule != rule:
                continue
            f_end = f.end or end or f.start
            touched |= (starts < pd.Timestamp(f_end)) & (stops > pd.Timestamp(f.start))
        out[rule] = int(touched.sum())
    return out
