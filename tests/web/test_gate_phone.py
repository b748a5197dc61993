"""The terminal's gate view on a small screen held upright (43×40 cells, a phone's 390×844
CSS pixels at a 16 px font).

The order fills the screen, the tally's buttons are large enough for a thumb and
count every tap, and the terminal at 80×24 keeps its keys. No broker: the factory
runs standalone on an injected status and command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dashboard_samples as samples
import pytest

from dashboards.common.bigtext import big_word, big_word_size
from dashboards.common.clock import fixed_clock
from dashboards.gate.app import GateApp, make_gate_app
from dashboards.gate.widgets.order_sign import OrderSign, sign_lines

PHONE = (43, 40)
"""What a terminal of 390×844 CSS pixels at a 16 px font holds (phones in a browser get
the gate's page instead: test_gate_page_browser.py)."""
TERMINAL = (80, 24)


def gate(state_dir: Path, *, admit: bool) -> GateApp:
    return make_gate_app(
        "north",
        samples.EVENT,
        None,
        state_dir=state_dir,
        clock=fixed_clock(samples.NOW),
        statuses=[samples.status(admit=admit)],
        command=samples.command(admit=admit),
    )


def test_a_narrow_tall_space_gets_taller_letters_not_wider() -> None:
    lines = sign_lines("ADMIT", 41, 28)
    assert max(len(line) for line in lines) == big_word_size("ADMIT", 1)[0] <= 41
    assert 3 * 2 < len(lines) <= 28  # more than twice the plain scale-1 height
    assert len(lines) == big_word_size("ADMIT", 3)[1]  # stretched three times at most
    assert set("".join(lines)) <= set("█▀▄ ")


def test_the_stretch_keeps_the_letters_shapes() -> None:
    # Thinning scale 3 to one column per pixel gives scale 1's columns, row by row.
    tall = sign_lines("HOLD", big_word_size("HOLD", 1)[0], big_word_size("HOLD", 3)[1])
    wide = big_word("HOLD", 3)
    assert [line[::3] for line in wide] == tall


def test_a_roomy_space_is_unchanged_and_a_cramped_one_gets_plain_words() -> None:
    assert sign_lines("HOLD", 78, 8) == big_word("HOLD", 3)  # no height to spare
    assert sign_lines("NO ORDER", 20, 20) == ["NO ORDER"]


async def test_on_a_phone_the_order_fills_the_screen_and_the_keys_are_large(
    tmp_path: Path,
) -> None:
    app = gate(tmp_path, admit=False)
    async with app.run_test(size=PHONE) as pilot:
        await pilot.pause()
        order = app.screen.query_one("#order").region
        plus = app.screen.query_one("#tally-in").region
        minus = app.screen.query_one("#tally-out").region
        sign = app.screen.query_one("#sign").region
        assert order.height >= 0.6 * PHONE[1]
        assert order.width == PHONE[0]
        # About 21 px a row and 9 px a column: 5 rows and 18 columns are a thumb's target.
        assert plus.height >= 5
        assert minus.height >= 5
        assert plus.width >= 18
        assert minus.width >= 18
        assert plus.y == minus.y
        assert plus.right <= minus.x
        lines = sign_lines("HOLD", sign.width - 2, sign.height)
        assert len(lines) == big_word_size("HOLD", 3)[1] == 8  # tall, not in three rows


async def test_every_tap_counts_even_quick_ones(tmp_path: Path) -> None:
    app = gate(tmp_path, admit=True)
    async with app.run_test(size=PHONE) as pilot:
        for _ in range(3):
            await pilot.click("#tally-in")  # faster than a Button's 0.2 s press effect
        await pilot.click("#tally-out")
        await pilot.pause()
        assert (app.manual.state.in_total, app.manual.state.out_total) == (3, 1)
        assert app.tally.in_total == 3
        assert app.focused is None or app.focused.id not in ("tally-in", "tally-out")


async def test_in_a_terminal_the_keys_still_count_and_the_buttons_fit(tmp_path: Path) -> None:
    app = gate(tmp_path, admit=True)
    async with app.run_test(size=TERMINAL) as pilot:
        await pilot.press("plus", "plus", "minus")
        await pilot.pause()
        assert (app.manual.state.in_total, app.manual.state.out_total) == (2, 1)
        assert app.screen.query_one("#tally-in").region.height == 3
        assert app.screen.query_one("#order").region.height >= 12
        await pilot.click("#tally-in")
        assert app.manual.state.in_total == 3


@pytest.mark.parametrize("admit", [True, False], ids=["admit", "hold"])
def test_phone_snapshot(snap_compare: Any, tmp_path: Path, admit: bool) -> None:
    assert snap_compare(gate(tmp_path, admit=admit), terminal_size=PHONE)


async def test_a_gate_whose_permit_has_no_tally_gets_no_buttons_and_counts_nothing(
    tmp_path: Path,
) -> None:
    app = make_gate_app(
        "south",  # the sample permit has north-manual, no south-manual
        samples.EVENT,
        None,
        state_dir=tmp_path,
        clock=fixed_clock(samples.NOW),
        statuses=[samples.status(admit=True)],
        command=samples.command(admit=True),
    )
    async with app.run_test(size=PHONE) as pilot:
        await pilot.pause()
        assert not app.screen.query_one("#tally-keys").display
        await pilot.press("plus", "minus")
        await pilot.pause()
        assert not app.manual.state.in_use


def moved(current: int) -> dict[str, Any]:
    return {**samples.status_data()["attendance"], "current": current}


async def test_the_sign_is_drawn_again_when_its_word_changes_not_at_each_status(
    tmp_path: Path,
) -> None:
    """Ten statuses a second each move the attendance; the sign's letters stay put."""
    app = make_gate_app(
        "north", samples.EVENT, None, state_dir=tmp_path, clock=fixed_clock(samples.NOW),
        statuses=[samples.status(admit=True)],
    )  # fmt: skip
    drawn: list[str] = []
    async with app.run_test(size=PHONE) as pilot:
        sign = app.screen.query_one(OrderSign)
        original = sign.render

        def counted() -> Any:
            drawn.append(sign.order.word)
            return original()

        sign.render = counted  # type: ignore[method-assign]
        await pilot.pause()
        for current in (3121, 3122, 3123):
            app.show_status(samples.status(admit=True, attendance=moved(current)))
            await pilot.pause()
        assert drawn == []  # the attendance moved, the word did not
        app.show_status(samples.status(admit=False, attendance=moved(4100)))
        await pilot.pause()
        assert drawn == ["HOLD"]
