"""Every dialog shows every field, at 80×24 and at 120×40: the tests look, not type blind.

A person found the adjust form's required Reason pushed off screen (its attendance input
shared an id with the attendance panel and took the panel's height), while the tests
typed into the fields by id and passed. These open each form and confirmation the way a
person does, from a real engine's afternoon (:mod:`engine_samples`), make each say what
is wrong, and check that every label, field, message and button lies inside the screen
and inside the dialog.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from engine_samples import afternoon
from form_support import hidden_fields, inspector, keys
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Button, Input, Select, Static

from dashboards.inspector.screens.forms import (
    AckForm,
    AdjustForm,
    ConfirmScreen,
    DeficientForm,
    NoteForm,
)
from dashboards.inspector.screens.main import MainScreen
from dashboards.inspector.screens.permit_form import PermitForm, parse_effective
from kent_ops.core import wire
from kent_ops.core.inspector_actions import CLERK_PERMIT, encode_action
from kent_ops.core.wire import Topics

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]  # every dialog drawn at two sizes

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


def shown(widget: Static) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


async def see_everything(pilot: Pilot[Any], form: type) -> None:
    """The dialog is up, and every part of it is on screen."""
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, form), screen
    assert hidden_fields(screen) == []
    focused = pilot.app.focused
    assert focused is not None
    assert screen.region.contains_region(focused.region)


def error_line(pilot: Pilot[Any]) -> str:
    return shown(pilot.app.screen.query_one(".form-error", Static)).strip()


@pytest.mark.parametrize("size", SIZES)
async def test_the_adjust_form_shows_its_required_reason_and_what_is_wrong(
    size: tuple[int, int],
) -> None:
    app = inspector(afternoon())
    async with app.run_test(size=size) as pilot:
        await pilot.press("c")
        await see_everything(pilot, AdjustForm)
        reason = app.screen.query_one("#adjust-reason", Input)
        assert reason.outer_size.height == 3  # a field, not a tall box pushing the rest out
        await pilot.press(*keys("3050"), "enter")
        await see_everything(pilot, AdjustForm)
        assert error_line(pilot) == "An adjustment needs a reason."
        assert app.focused is reason
        await pilot.press(*keys("sweep count"), "enter")
        await see_everything(pilot, ConfirmScreen)
        assert "set attendance to 3,050: “sweep count”" in shown(
            app.screen.query_one("#confirm-what", Static)
        )


@pytest.mark.parametrize("size", SIZES)
async def test_the_ack_form_and_its_confirmation_show_everything(size: tuple[int, int]) -> None:
    day = afternoon()
    app = inspector(day)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("a")
        await see_everything(pilot, AckForm)
        await pilot.press("enter")
        await see_everything(pilot, AckForm)
        assert error_line(pilot) == "An acknowledgement needs a comment."
        await pilot.press(*keys("Called the organiser"), "enter")
        await see_everything(pilot, ConfirmScreen)


@pytest.mark.parametrize("size", SIZES)
async def test_the_note_form_shows_everything_and_a_long_note_keeps_the_buttons(
    size: tuple[int, int],
) -> None:
    app = inspector(afternoon())
    async with app.run_test(size=size) as pilot:
        await pilot.press("n")
        await see_everything(pilot, NoteForm)
        await pilot.press("enter")
        await see_everything(pilot, NoteForm)
        assert error_line(pilot) == "The note is empty."
        app.screen.query_one("#note-text", Input).value = "water " * 600  # 3,600 characters
        await pilot.press("enter")
        await see_everything(pilot, ConfirmScreen)
        assert app.screen.query_one("#confirm-send", Button).region.height > 0


@pytest.mark.parametrize("size", SIZES)
async def test_the_deficient_form_shows_everything(size: tuple[int, int]) -> None:
    app = inspector(afternoon())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.start_inspection("C(1)(a)", "deficient")
        await see_everything(pilot, DeficientForm)
        await pilot.press("enter")
        await see_everything(pilot, DeficientForm)
        assert error_line(pilot) == "A deficient mark needs a note saying what was found."
        await pilot.press(*keys("no water"), "enter")
        await see_everything(pilot, ConfirmScreen)


@pytest.mark.parametrize("size", SIZES)
async def test_the_clerks_form_shows_everything_and_names_the_resolution(
    size: tuple[int, int],
) -> None:
    day = afternoon()
    app = inspector(day, clerk="town-clerk")
    async with app.run_test(size=size) as pilot:
        await pilot.press("R")
        await see_everything(pilot, PermitForm)
        assert app.screen.query_one("#permit-status", Select).value == "revoked"
        assert "Permit MG-2027-003 is issued." in shown(app.screen.query_one(".form-context"))
        await pilot.press("enter")
        await see_everything(pilot, PermitForm)
        assert error_line(pilot).startswith("Name the Town Board's resolution")
        effective = app.screen.query_one("#permit-effective", Input)
        effective.value = (day.now - timedelta(minutes=5)).strftime("%H:%M")
        await pilot.press(*keys("TB-2027-41"), "enter")
        await see_everything(pilot, PermitForm)
        assert "is more than a minute ago" in error_line(pilot)
        effective.value = "now"
        await pilot.press("enter")
        await see_everything(pilot, ConfirmScreen)
        title = shown(app.screen.query_one(".form-title", Static)).strip()
        assert title == "Revoke permit MG-2027-003 from 14:00:37 (now) by resolution TB-2027-41?"
        await pilot.press("y")
        await pilot.pause()
    (action,) = app.actions
    assert action.kind == CLERK_PERMIT
    assert action.state == "unsent"  # standalone: no broker
    assert action.topic == Topics("kent-summer-fest-2027").clerk_permit("town-clerk")
    assert list(json.loads(encode_action(action.payload))) == [
        "ts",
        "status",
        "effective_at",
        "resolution",
        "reason",
    ]
    assert isinstance(action.payload, wire.ClerkPermit)
    assert action.payload.status == "revoked"
    assert action.payload.resolution == "TB-2027-41"


async def test_without_clerk_there_is_no_permit_key() -> None:
    app = inspector(afternoon())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        keys_now = {b.binding.key for b in app.screen.active_bindings.values()}
        assert "R" not in keys_now  # neither on the footer nor answering the key
        assert "c" in keys_now
    clerk = inspector(afternoon(), clerk="town-clerk")
    async with clerk.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "R" in {b.binding.key for b in clerk.screen.active_bindings.values()}


def test_the_effective_time_is_now_a_local_time_or_refused() -> None:
    day = afternoon()
    zone = day.now.tzinfo
    assert zone is not None
    assert parse_effective(" now ", day.now, zone) is None
    assert parse_effective("", day.now, zone) is None
    at = parse_effective("14:30", day.now, zone)
    assert at is not None
    assert at.isoformat() == "2027-07-04T14:30:00-04:00"
    later = parse_effective("2027-07-05 09:00", day.now, zone)
    assert later is not None
    assert later.isoformat() == "2027-07-05T09:00:00-04:00"
    utc = parse_effective("2027-07-04T19:00:00Z", day.now, zone)
    assert utc is not None
    assert utc.isoformat() == "2027-07-04T19:00:00+00:00"
    within = parse_effective("13:59:40", day.now, zone)  # 57 s ago: clocks differ a little
    assert within is not None
    with pytest.raises(ValueError, match="more than a minute ago"):
        parse_effective("13:58", day.now, zone)
    with pytest.raises(ValueError, match="is not a time"):
        parse_effective("half past two", day.now, zone)
