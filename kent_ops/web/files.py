"""Open files for ``kent-ops serve``: the limit raised at start, connections kept high.

systemd starts a service with a soft limit of 1,024 open files unless its unit says
otherwise, and a thousand idle connections fill that (docs/security.md, "Idle
connections to serve"); and ``select()``, which paho's network loop uses for the gate
hubs' broker links, can wait only on descriptors below 1,024. So the limit is raised to
the hard one, and each connection kept is moved to a descriptor from 1,024 up.
"""

from __future__ import annotations

import fcntl
import logging
import resource
import socket

__all__ = ["LOW_FILES", "SPARE_FILES", "moved_up", "raise_open_file_limit"]

log = logging.getLogger("kent-ops.serve")

LOW_FILES = 1_024
"""Descriptors below this are what ``select()`` can wait on (``FD_SETSIZE``)."""
SPARE_FILES = 64
"""Room kept for the descriptor ``accept()`` opens before a connection is moved up."""


def raise_open_file_limit() -> int:
    """Raise this process's soft open-file limit to its hard one; return the soft one now.

    systemd starts a service with a soft limit of 1,024 unless its unit says otherwise;
    the hard limit is what the administrator allows.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return soft if soft != resource.RLIM_INFINITY else wanted
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError) as exc:
        log.warning("open-file limit left at %d: %s", soft, exc)
        return soft
    return wanted


def moved_up(conn: socket.socket, above: int) -> socket.socket:
    """``conn`` on a descriptor numbered ``above`` or higher (as it was if none is free)."""
    if not above or conn.fileno() >= above:
        return conn
    try:
        high = fcntl.fcntl(conn.fileno(), fcntl.F_DUPFD_CLOEXEC, above)
    except OSError:
        return conn
    moved = socket.socket(conn.family, conn.type, conn.proto, fileno=high)
    conn.close()
    return moved
