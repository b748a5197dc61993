"""The dashboards in a web browser (``kent-ops serve``): sign-in, sessions, one app each.

A layer beside the service and the report: it composes the dashboards by running the
``kent-ops dashboard`` and ``kent-ops gate`` commands as processes of their own
(through textual-serve), so it imports neither Textual nor ``dashboards``. Modules:
``accounts`` (the users file), ``throttle`` (slowing guessing), ``sessions``,
``apps`` (which process each person gets), ``seats`` (one app per seat, in turn),
``relay`` (the browser's messages, bounded), ``guard`` (headers, origin check),
``pages`` (HTML), ``server`` (aiohttp).
Nothing is imported here, so ``kent-ops serve users`` loads no web server.
See docs/architecture.md, "Dashboards in a browser".
"""

from __future__ import annotations
