"""What a dashboard does once rather than at every start, and that it shows the same.

``kent-ops serve`` forks dozens of dashboards at once (docs/architecture.md,
"Inspectors on phones"); these are the pieces that make a start cheaper: parsed
stylesheets kept by the process, a footer composed again only when its keys change,
and a browser's page that starts without focus and takes it where a terminal would.
"""

from __future__ import annotations

import dashboard_samples as samples
from textual.app import App
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from dashboards.common.clock import fixed_clock
from dashboards.common.widgets.keys_footer import KeysFooter
from dashboards.inspector.app import InspectorApp, make_inspector_app
from dashboards.inspector.widgets.alert_list import AlertList


def inspector() -> InspectorApp:
    return make_inspector_app(
        samples.EVENT,
        None,
        "insp-2",
        clock=fixed_clock(samples.NOW),
        statuses=[*samples.history()[:-1], samples.status()],
        alerts=samples.alerts(),
        blink=False,
    )


async def test_a_second_dashboard_uses_the_rules_the_first_parsed() -> None:
    first, second = inspector(), inspector()
    async with first.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rules = first.stylesheet.rules
    async with second.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        again = second.stylesheet.rules
    assert len(again) == len(rules) > 0
    assert all(a is b for a, b in zip(again, rules, strict=True))


async def test_other_css_variables_get_rules_of_their_own() -> None:
    first, second = inspector(), inspector()
    async with first.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rules = set(map(id, first.stylesheet.rules))
    second.stylesheet.set_variables({**second.get_css_variables(), "primary": "#123456"})
    async with second.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert rules.isdisjoint(map(id, second.stylesheet.rules))


async def test_the_footer_keeps_its_keys_while_the_focus_moves() -> None:
    app = inspector()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        footer = app.screen.query_one(KeysFooter)
        keys = list(footer.query(FooterKey))
        assert [k.key for k in keys][:4] == ["a", "n", "c", "i"]
        await pilot.press("tab")
        await pilot.press("tab")
        await pilot.pause()
        assert list(footer.query(FooterKey)) == keys  # the same widgets, not made again
        assert not any(k.has_class("-compact") for k in keys if k.key != "ctrl+p")


async def test_the_footer_shows_what_textuals_footer_shows() -> None:
    app = inspector()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        ours = [(k.key, k.description, k.classes) for k in app.screen.query(FooterKey)]
        screen = app.screen
        await screen.query_one(KeysFooter).remove()
        await screen.mount(Footer())
        screen.refresh_bindings()  # as a focus change would: Textual's footer composes
        await pilot.pause()
        await pilot.pause()
        theirs = [(k.key, k.description, k.classes) for k in screen.query(FooterKey)]
    assert ours == theirs


async def test_a_page_without_focus_focuses_the_alerts_when_it_gets_it() -> None:
    app = inspector()
    app.set_reactive(App.app_focus, False)  # as the web driver starts a page
    async with app.run_test(size=(43, 40)) as pilot:
        await pilot.pause()
        assert app.screen.focused is None
        app.app_focus = True
        await pilot.pause()
        assert isinstance(app.screen.focused, AlertList)
        assert app.screen.query_one("#narrow-column").scroll_y == 0  # attendance first
