"""The dashboards' stylesheets parsed once a process, not once an app.

Textual parses every stylesheet an app uses (its ``.tcss`` and each widget's
``DEFAULT_CSS``) into rules when the app starts, and keeps them in a cache of that
app's own. ``kent-ops serve`` forks each person's dashboard from a fork server that
drew one of each app first: with the parsed rules kept in a cache of the process, a
forked app finds them there instead of parsing again (a tenth of its first screen),
and the rules stay on pages every app shares.

Rules depend on the CSS variables they were parsed with (the theme), so the cache is
keyed by those as well as by Textual's own key; a theme changed in one app never
hands another app rules made for other colours. Textual reuses the same parsed rules
for every widget of an app, so sharing them between apps changes nothing they show.
If a Textual release no longer has the cache this fills, apps parse as before.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet

__all__ = ["share_parsed_css"]

_PARSED: dict[tuple[object, ...], list[RuleSet]] = {}
"""Rules by the variables they were parsed with and Textual's key for the CSS."""


class _ProcessCache:
    """Stands in for a stylesheet's own parse cache (``__getitem__``, ``__setitem__``,
    ``clear``), reading and writing the process's."""

    def __init__(self, stylesheet: Stylesheet) -> None:
        self._stylesheet = stylesheet
        self._variables: dict[str, str] | None = None
        self._theme: tuple[tuple[str, str], ...] = ()

    def _key(self, key: tuple[object, ...]) -> tuple[object, ...]:
        variables = self._stylesheet._variables  # noqa: SLF001 - the theme the rules use
        if variables is not self._variables:
            self._variables, self._theme = variables, tuple(sorted(variables.items()))
        return (self._theme, *key)

    def __getitem__(self, key: tuple[object, ...]) -> list[RuleSet]:
        return _PARSED[self._key(key)]

    def __setitem__(self, key: tuple[object, ...], rules: list[RuleSet]) -> None:
        _PARSED[self._key(key)] = rules

    def clear(self) -> None:
        """Nothing to forget: entries are keyed by the variables they were parsed with."""


def share_parsed_css(app: App[Any]) -> None:
    """Make ``app``'s stylesheet parse through the process's cache (call in ``__init__``)."""
    stylesheet = app.stylesheet
    if hasattr(stylesheet, "_parse_cache") and hasattr(stylesheet, "_variables"):
        stylesheet._parse_cache = _ProcessCache(stylesheet)  # type: ignore[assignment]  # noqa: SLF001 - Textual's cache, filled from the process's
