"""The Town Clerk's form: revoke the permit, or reinstate it, for the Town Board (permit:G).

Only a dashboard started with ``--clerk`` offers it. The Clerk chooses the new status,
names the Board's resolution (required: it is the authority for the change), gives the
grounds and the moment it takes effect: now, or a time in the event's zone. A change is
never backdated (docs/law.md, "Revocation and reinstatement"): a time more than a
minute ago is refused here, before anything is sent, as the aggregator would refuse it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Label, Select, Static

from dashboards.common.format import clean, local_clock
from dashboards.inspector.screens.forms import Form, field_input
from kent_ops.core import wire
from kent_ops.core.permit import BACKDATE_LIMIT_S

__all__ = ["PermitChange", "PermitForm", "parse_effective"]

NOW_WORDS = ("", "now")


@dataclass(frozen=True, slots=True)
class PermitChange:
    """What the Clerk entered: the new status, the resolution, the grounds, and when."""

    status: str
    """``revoked``, or ``issued`` to reinstate."""
    resolution: str
    reason: str
    effective_at: datetime | None
    """None: the moment the Clerk confirms."""


def _local(text: str, zone: tzinfo, today: date) -> datetime:
    """``14:30``, ``14:30:15``, ``2027-07-04 14:30`` or ISO 8601 with an offset."""
    try:
        clock = time.fromisoformat(text)
    except ValueError:
        pass
    else:
        return datetime.combine(today, clock.replace(tzinfo=None), tzinfo=zone)
    moment = datetime.fromisoformat(text)  # ValueError names nothing useful: caught below
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=zone)


def parse_effective(text: str, now: datetime, zone: tzinfo) -> datetime | None:
    """When the change takes effect: None for now, else an aware time.

    A time without a date is today's in the event's zone; one without an offset is the
    event's local time.

    Raises:
        ValueError: not a time, or more than a minute before ``now`` (one sentence).
    """
    entered = text.strip()
    if entered.lower() in NOW_WORDS:
        return None
    try:
        when = _local(entered, zone, now.astimezone(zone).date())
    except ValueError:
        raise ValueError(
            f"“{clean(entered, limit=30)}” is not a time: write now, 14:30 or 2027-07-04 14:30."
        ) from None
    if when < now - timedelta(seconds=BACKDATE_LIMIT_S):
        raise ValueError(
            f"{local_clock(when, zone)} is more than a minute ago: a change of the permit "
            "is never backdated."
        )
    return when


def _standing(permit: wire.PermitState | None, zone: tzinfo) -> Text:
    """One line on the permit as the status has it now."""
    if permit is None:
        return Text("The aggregator has not said the permit's status yet.", style="dim")
    text = Text()
    text.append(f"Permit {clean(permit.number) or '(no number)'} is ")
    state = clean(permit.status) or "unknown"
    text.append(state, style="bold green" if state == "issued" else "bold red")
    if permit.since is not None:
        text.append(f" since {local_clock(permit.since, zone)}")
    if permit.resolution:
        text.append(f" (resolution {clean(permit.resolution)})")
    text.append(".")
    return text


class PermitForm(Form):
    """Status, resolution (required), reason and effective time of the Clerk's change."""

    def __init__(
        self,
        permit: wire.PermitState | None,
        clock: Callable[[], datetime],
        zone: tzinfo,
        *,
        blink: bool = True,
    ) -> None:
        super().__init__("Revoke or reinstate the permit (permit:G)", blink=blink, id="permit-form")
        self.permit, self.clock, self.zone = permit, clock, zone

    def fields(self) -> ComposeResult:
        yield Static(_standing(self.permit, self.zone), classes="form-context")
        revoked = self.permit is not None and self.permit.status == "revoked"
        with Horizontal(classes="form-row"):
            yield Label("Status", classes="form-label")
            yield Select(
                [("revoke the permit", "revoked"), ("reinstate the permit", "issued")],
                value="issued" if revoked else "revoked",
                allow_blank=False,
                compact=True,
                id="permit-status",
            )
        with Horizontal(classes="form-row"):
            yield Label("Resolution (required)", classes="form-label")
            yield field_input(
                self.blink, id="permit-resolution", placeholder="e.g. TB-2027-41", compact=True
            )
        with Horizontal(classes="form-row"):
            yield Label("Reason", classes="form-label")
            yield field_input(
                self.blink, id="permit-reason", placeholder="e.g. no doctor on site", compact=True
            )
        with Horizontal(classes="form-row"):
            yield Label("Effective at", classes="form-label")
            yield field_input(self.blink, id="permit-effective", value="now", compact=True)
        zone_name = self.clock().astimezone(self.zone).strftime("%Z")
        yield Static(
            Text(f"now, or the event's local time ({zone_name}): 14:30 · 2027-07-04 14:30"),
            classes="form-context form-note",
        )

    def on_mount(self) -> None:
        self.query_one("#permit-resolution", Input).focus()

    @on(Input.Submitted)
    def _submit(self) -> None:
        status = self.query_one("#permit-status", Select).value
        resolution = self.query_one("#permit-resolution", Input).value.strip()
        reason = self.query_one("#permit-reason", Input).value.strip()
        if not resolution:
            self.query_one("#permit-resolution", Input).focus()
            self.error("Name the Town Board's resolution: it is the authority for the change.")
            return
        try:
            effective = parse_effective(
                self.query_one("#permit-effective", Input).value, self.clock(), self.zone
            )
        except ValueError as exc:
            self.query_one("#permit-effective", Input).focus()
            self.error(str(exc))
            return
        self.dismiss(PermitChange(str(status), resolution, reason, effective))
