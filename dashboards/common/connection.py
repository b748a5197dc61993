"""Is what the screen shows current? The connection state and the banner's sentence.

Written once in the core (:mod:`kent_ops.core.connection`), because the deputy's page
in a browser (``kent-ops serve``) says the same as the terminal dashboards; re-exported
here for the dashboards.
"""

from __future__ import annotations

from kent_ops.core.connection import (
    NO_AGGREGATOR_AFTER_S,
    STALE_AFTER_S,
    ConnectionState,
    LinkState,
    connection_problem,
    unheard,
)

__all__ = [
    "NO_AGGREGATOR_AFTER_S",
    "STALE_AFTER_S",
    "ConnectionState",
    "LinkState",
    "connection_problem",
    "unheard",
]
