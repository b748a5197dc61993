"""The report's three charts (matplotlib, headless): attendance, staffing, parking.

Each chart plots the per-minute timeline against what the permit and the ordinance
require, shades the periods the matching breach findings held, and labels its time axis
in the event's zone (matplotlib keeps UTC inside; the locator and formatter are told the
zone, so a daylight-saving change shows as it happened).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from kent_ops.core import ordinance as law  # noqa: E402
from kent_ops.core.assembly import assembly_on  # noqa: E402
from kent_ops.core.permit import Permit  # noqa: E402
from kent_ops.report.findings import Finding  # noqa: E402
from kent_ops.report.timeline import minutes_of  # noqa: E402

__all__ = ["attendance_chart", "parking_chart", "staffing_chart"]

SIZE = (10.0, 4.6)
DPI = 110
MARK_SHARE = 0.004
BREACH_COLOUR = "#d62728"
UNCERTAIN_COLOUR = "#ff7f0e"
REQUIRED_COLOUR = "#222222"
"""What the law or the permit requires: black, dashed, on every chart that has it."""
NURSE_COLOUR = "#1f77b4"
DOCTOR_COLOUR = "#9467bd"

ATTENDANCE_RULES = ("max-at-one-time", "permit-required")
NURSE_RULES = ("nurse-ratio",)
DOCTOR_RULES = ("doctor-on-duty",)
PARKING_RULES = ("parking-ratio",)


def _figure(title: str) -> tuple[Figure, Axes]:
    fig, ax = plt.subplots(figsize=SIZE, dpi=DPI, layout="constrained")
    ax.set_title(title, loc="left", fontsize=12, fontweight="bold")
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def _zone_label(frame: pd.DataFrame, tz: ZoneInfo) -> str:
    local = minutes_of(frame).tz_convert(tz)
    names = [local[0].tzname(), local[-1].tzname()] if len(local) else []
    abbreviations = list(dict.fromkeys(n for n in names if n))
    suffix = f" ({' then '.join(abbreviations)})" if abbreviations else ""
    return f"local time, {tz.key}{suffix}"


def _time_axis(ax: Axes, frame: pd.DataFrame, tz: ZoneInfo) -> None:
    locator = mdates.AutoDateLocator(tz=tz, minticks=4, maxticks=10)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=tz))
    ax.set_xlabel(_zone_label(frame, tz))
    span = _span(frame)
    if span is not None:
        ax.set_xlim(_at(span[0]), _at(span[1]))


def _at(t: datetime) -> float:
    """An instant as its place on a date axis: the number the axis turns a datetime into
    (matplotlib's types take places as numbers)."""
    return float(mdates.date2num(t))


def _step(ax: Axes, frame: pd.DataFrame, column: str, **kwargs: Any) -> None:
    """A per-minute column as steps: each value holds for its whole minute.

    The places stay datetimes, so the axis takes the date units its locator reads.
    """
    x = list(minutes_of(frame).to_pydatetime())
    y = frame[column].tolist()
    span = _span(frame)
    if span is not None:
        x = [*x, span[1]]
        y = [*y, y[-1]]
    ax.step(x, y, where="post", **kwargs)


def _while_on(frame: pd.DataFrame, permit: Permit, required: pd.Series) -> pd.Series:
    """A requirement as it binds: only in minutes the assembly is on, else 0.

    The medical and parking terms hold during the assembly (docs/law.md, "The
    assembly"): set-up crew before the gates open, or drift after the close, require
    nothing. ``timeline.csv`` keeps the ratio figure for every minute, as the live
    status does; the charts draw what the law required.
    """
    start = minutes_of(frame)
    stop = start + pd.Timedelta(minutes=1)
    inside = np.zeros(len(frame), dtype=bool)
    for window in permit.windows:  # any second of the minute inside the window
        inside |= np.asarray(
            (start < pd.Timestamp(window.end)) & (stop > pd.Timestamp(window.start))
        )
    on = np.vectorize(assembly_on)(frame["attendance_max"].to_numpy(), inside)
    return required.where(on.astype(bool), 0)


def _shade(
    ax: Axes,
    findings: Iterable[Finding],
    rules: tuple[str, ...],
    end: datetime | None,
    span: tuple[datetime, datetime] | None,
) -> list[Patch]:
    """Shade each matching breach finding from its start to its end (or the log's end).

    A strip along the top marks each one too, at least :data:`MARK_SHARE` of the axis
    wide, so a ten-minute breach still shows on a three-day chart.
    """
    handles: dict[str, Patch] = {}
    least = (span[1] - span[0]) * MARK_SHARE if span else None
    for f in findings:
        if f.rule not in rules or not f.is_breach:
            continue
        for x in f.parts:  # proven time in red; the rest apart, as not proven
            proven = x.basis == "measured"
            colour = BREACH_COLOUR if proven else UNCERTAIN_COLOUR
            start, stop = x.start, x.stop
            ax.axvspan(_at(start), _at(stop), color=colour, alpha=0.15, linewidth=0)
            mark_stop = max(stop, start + least) if least is not None else stop
            ax.axvspan(_at(start), _at(mark_stop), ymin=0.965, ymax=1.0, color=colour, linewidth=0)
            label = "breach, proven" if proven else "breach not proven (see the report)"
            handles.setdefault(label, Patch(color=colour, alpha=0.5, label=label))
    return list(handles.values())


def _span(frame: pd.DataFrame) -> tuple[datetime, datetime] | None:
    if frame.empty:
        return None
    minutes = minutes_of(frame)
    return (
        minutes[0].to_pydatetime(),
        (minutes[-1] + pd.Timedelta(minutes=1)).to_pydatetime(),
    )


def _no_data(ax: Axes) -> None:
    ax.text(
        0.5,
        0.5,
        "No figures: the evidence log holds no accepted sensor messages",
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="#666666",
    )
    ax.set_xticks([])
    ax.set_yticks([])


def _finish(fig: Figure, ax: Axes | list[Axes], extra: list[Patch], path: Path) -> None:
    handles = [
        h for a in (ax if isinstance(ax, list) else [ax]) for h in a.get_legend_handles_labels()[0]
    ]
    if handles or extra:
        # Below the plot, never over the data.
        fig.legend(
            handles=[*handles, *extra],
            loc="outside lower center",
            ncols=3,
            fontsize=8,
            frameon=False,
        )
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)


def _thousands(ax: Axes) -> None:
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_ylim(bottom=0)


def attendance_chart(
    frame: pd.DataFrame, permit: Permit, findings: list[Finding], end: datetime | None, path: Path
) -> None:
    """Attendance (highest each minute) against the permitted maximum and the 500 threshold."""
    fig, ax = _figure("Attendance: highest each minute")
    if frame.empty:
        _no_data(ax)
        _finish(fig, ax, [], path)
        return
    _step(ax, frame, "attendance_max", color="#1f77b4", linewidth=1.4, label="attendance")
    ax.axhline(
        permit.max_at_one_time,
        color=REQUIRED_COLOUR,
        linestyle="--",
        linewidth=1.1,
        label=f"permitted at one time ({permit.max_at_one_time:,}, permit:B(2))",
    )
    ax.axhline(
        law.PERMIT_THRESHOLD,
        color="#555555",
        linestyle=":",
        linewidth=1.1,
        label=f"permit needed above {law.PERMIT_THRESHOLD} (permit:A)",
    )
    ax.set_ylabel("persons")
    _thousands(ax)
    top = max(float(frame["attendance_max"].max()), permit.max_at_one_time) * 1.12
    ax.set_ylim(0, top)
    _time_axis(ax, frame, permit.timezone)
    _finish(fig, ax, _shade(ax, findings, ATTENDANCE_RULES, end, _span(frame)), path)


def staffing_chart(
    frame: pd.DataFrame, permit: Permit, findings: list[Finding], end: datetime | None, path: Path
) -> None:
    """Nurses (top) and doctors (bottom) on duty, the fewest each minute, against required.

    Two panels sharing the time axis: a handful of doctors beside dozens of nurses would
    otherwise be a flat line at the bottom.
    """
    title = "Medical staff on duty (fewest each minute) and required (permit:C(9))"
    if frame.empty:
        fig, ax = _figure(title)
        _no_data(ax)
        _finish(fig, ax, [], path)
        return
    fig, (nurses, doctors) = plt.subplots(
        2, 1, figsize=SIZE, dpi=DPI, layout="constrained", sharex=True,
        gridspec_kw={"height_ratios": [3, 1.2]},
    )  # fmt: skip
    nurses.set_title(title, loc="left", fontsize=12, fontweight="bold")
    for ax in (nurses, doctors):
        ax.grid(True, color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True, nbins=5))
    frame = frame.assign(
        nurses_required=_while_on(frame, permit, frame["nurses_required"]),
        doctors_required=_while_on(
            frame, permit, pd.Series(permit.doctors_min, index=minutes_of(frame), dtype="int64")
        ),
    )
    _step(
        nurses, frame, "nurses_required", color=REQUIRED_COLOUR, linestyle="--",
        linewidth=1.6, zorder=3,
        label=f"nurses required (1 per {permit.persons_per_nurse:,}, during the assembly)",
    )  # fmt: skip
    _step(
        nurses, frame, "nurses_on_duty", color=NURSE_COLOUR, linewidth=2.2, zorder=2,
        label="nurses on duty",
    )  # fmt: skip
    nurses.set_ylabel("nurses")
    top = max(float(frame[["nurses_on_duty", "nurses_required"]].max().max()), 1.0)
    nurses.set_ylim(0, top * 1.15 + 0.5)
    _step(
        doctors, frame, "doctors_required", color=REQUIRED_COLOUR, linestyle="--",
        linewidth=1.6, zorder=3,
        label=f"doctors required ({permit.doctors_min}, during the assembly)",
    )  # fmt: skip
    _step(
        doctors, frame, "doctors_on_duty", color=DOCTOR_COLOUR, linewidth=2.2, zorder=2,
        label="doctors on duty",
    )  # fmt: skip
    doctors.set_ylabel("doctors")
    top = max(float(frame["doctors_on_duty"].max()), float(permit.doctors_min), 1.0)
    doctors.set_ylim(0, top + 1)
    _time_axis(doctors, frame, permit.timezone)
    span = _span(frame)
    marks = _shade(nurses, findings, NURSE_RULES, end, span)
    marks += [
        m for m in _shade(doctors, findings, DOCTOR_RULES, end, span)
        if m.get_label() not in {h.get_label() for h in marks}
    ]  # fmt: skip
    _finish(fig, [nurses, doctors], marks, path)


def parking_chart(
    frame: pd.DataFrame, permit: Permit, findings: list[Finding], end: datetime | None, path: Path
) -> None:
    """Car spaces provided against those attendance requires, and the cars in the lots."""
    fig, ax = _figure("Parking: spaces provided and required (permit:C(6)), cars in the lots")
    if frame.empty:
        _no_data(ax)
        _finish(fig, ax, [], path)
        return
    ax.axhline(
        permit.spaces_provided,
        color="#1f77b4",
        linewidth=1.4,
        label=f"spaces provided ({permit.spaces_provided:,})",
    )
    frame = frame.assign(spaces_required=_while_on(frame, permit, frame["spaces_required"]))
    _step(
        ax,
        frame,
        "spaces_required",
        color=REQUIRED_COLOUR,
        linestyle="--",
        linewidth=1.1,
        label="spaces required (1 per 4 persons, during the assembly)",
    )
    _step(ax, frame, "vehicles", color="#7f7f7f", linewidth=1.2, label="cars in the lots")
    ax.set_ylabel("car spaces / cars")
    _thousands(ax)
    top = max(
        float(frame[["spaces_required", "vehicles"]].max().max()), float(permit.spaces_provided)
    )
    ax.set_ylim(0, top * 1.15 + 1)
    _time_axis(ax, frame, permit.timezone)
    _finish(fig, ax, _shade(ax, findings, PARKING_RULES, end, _span(frame)), path)
