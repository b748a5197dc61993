"""Building the inspector from a real engine's afternoon, and looking at its dialogs.

Shared by the Pilot tests of the forms and their snapshots: the same app, the same keys.
"""

from __future__ import annotations

from engine_samples import EVENT, EngineDay
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Select

from dashboards.common.clock import fixed_clock
from dashboards.inspector.app import InspectorApp, make_inspector_app

KEY_NAMES = {" ": "space", "-": "minus", ".": "full_stop", ":": "colon", "/": "slash"}


def keys(text: str) -> list[str]:
    """The key presses that type ``text``."""
    return [KEY_NAMES.get(ch, ch) for ch in text]


def inspector(day: EngineDay, *, clerk: str | None = None) -> InspectorApp:
    """The dashboard as the command line builds it, standalone, on the engine's afternoon."""
    return make_inspector_app(
        EVENT,
        None,
        "insp-2",
        clerk=clerk,
        clock=fixed_clock(day.now),
        statuses=[day.status],
        alerts=day.alerts,
        blink=False,
    )


FIELDS = "Label, Input, Select, Button, Static, .form-what"
"""What a person reads or fills in: labels, fields, buttons, the lines of text."""


def _part_of_another(widget: Widget, dialog: Widget) -> bool:
    """A piece of a field (a Select's inner line) or of the part that scrolls (what a
    confirmation will send): judged as its whole, not on its own."""
    node = widget.parent
    while node is not None and node is not dialog:
        if isinstance(node, Select) or (isinstance(node, Widget) and node.has_class("form-what")):
            return True
        node = node.parent
    return False


def hidden_fields(screen: Screen[object]) -> list[str]:
    """Every part of the dialog a person cannot see whole: outside the screen, cut off by
    the dialog's edge, or squeezed to nothing. Empty when everything shows."""
    dialog = screen.query_one(".form")
    seen = screen.region
    problems = []
    parts = [w for w in dialog.query(FIELDS) if not _part_of_another(w, dialog)]
    assert parts, "the dialog shows nothing"
    for widget in parts:
        region = widget.region
        name = f"{type(widget).__name__}#{widget.id or ''}.{'.'.join(widget.classes)}"
        if region.width <= 0 or region.height <= 0:
            problems.append(f"{name} has no room ({region})")
        elif not seen.contains_region(region):
            problems.append(f"{name} at {region} is outside the screen {seen}")
        elif not dialog.region.contains_region(region):
            problems.append(f"{name} at {region} is cut off by the dialog {dialog.region}")
    return problems
