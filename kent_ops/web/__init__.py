"""The dashboards in a web browser (``kent-ops serve``): sign-in, sessions, one app each.

A layer beside the service and the report. An inspector's or clerk's full dashboard is
the ``kent-ops dashboard`` command run as a process of its own (through textual-serve);
on a phone they get a page of the server's own instead, fed by the event's inspectors'
hub, which draws the core's inspector view (:mod:`kent_ops.core.inspector_view`) and
publishes each person's actions with their own broker account; a deputy's gate view is
a small page fed by its gate's hub in the server, which draws the core's gate view
(:mod:`kent_ops.core.gate_view`) and counts on the gate's tally device, injected by the
command line. So this package imports neither Textual nor ``dashboards`` nor
``sensors``. Modules: ``accounts`` (the users file), ``throttle`` (slowing guessing),
``sessions``, ``apps`` (which process each person gets), ``seats`` (one app per seat,
in turn), ``relay`` (the browser's messages, bounded), ``guard`` (headers, origin
check), ``pages`` (HTML), ``deputies``, ``gate_hub``, ``gate_link``, ``phone`` and
``taps`` (the deputies' phones, one hub per gate), ``inspectors``, ``inspector_hub``,
``inspector_link``, ``person_link`` and ``page_actions`` (the inspectors' phones, one
hub for the event), ``server`` (aiohttp).
Nothing is imported here, so ``kent-ops serve users`` loads no web server.
See docs/architecture.md, "Dashboards in a browser".
"""

from __future__ import annotations
