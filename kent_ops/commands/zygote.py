"""The fork server of ``kent-ops serve``: apps forked from one pre-imported process.

Each person's app used to be a fresh ``python -m kent_ops dashboard`` (or ``gate``):
every one imported Python, Textual, Rich and kent-ops again, about 0.3 s of CPU and
35 MB of memory of its own before drawing anything. This process imports them once,
draws a dashboard (at a terminal's width and a phone's) and a gate view headless (so
the caches their first screens fill, the parsed stylesheets among them, are filled
here), builds the command line's parser, freezes what it holds (``gc.freeze``: the
collector then never writes to those objects, so the pages stay shared), and forks
an app for each request. A forked app shares every page it does not write to with this process and
with every other app; it starts in about half the time.

The web server (:mod:`kent_ops.web.zygote`) starts it with the environment every app
gets, minus the per-app variables, and asks for an app over a Unix socket in a
private directory: one connection per app, carrying the app's command line, its
whole environment (the person's password among it), its working directory and memory
cap as JSON, and its three standard streams as file descriptors (``SCM_RIGHTS``).

This process never reads a request: it accepts the connection and forks, and the
fork reads it, so no person's password ever sits in memory that a later app would
inherit. That fork forks the app and exits, so the app is adopted by the web server,
which is a child subreaper: the app is the server's child, as a started one was, and
the server collects its exit status. The app then does what a started one did (the
same ``kent_ops`` command line, its own environment and directory, its memory cap,
``SIGTERM`` when the server dies) and shows that command line in ``ps``.

Run only by the web server: ``python -m kent_ops.commands.zygote SOCKET SERVER_PID ROOM``
(ROOM: spaces, the room an app's command line is written into).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import os
import resource
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["main"]

PR_SET_PDEATHSIG = 1
ADOPTION_WAIT_S = 5.0
"""How long an app waits to be adopted by the server (its parent fork exits at once)."""
MOST_REQUEST = 1 << 20
"""A request is a command line and an environment: far less than this."""
PHONE = (40, 40)
"""A phone held upright, in cells (docs/architecture.md, "Inspectors on phones")."""


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value)


def _warm() -> argparse.ArgumentParser:
    """Import what apps use and draw each app once, headless, to fill its caches; return
    the command line's parser, built once for every app.

    The dashboard is drawn at a terminal's width and at a phone's (its one-column
    layout has widgets and styles of its own). A failure here only costs the apps
    their warm start: they import what they need.
    """
    import asyncio
    import tempfile

    from kent_ops.commands.cli import build_parser

    async def draw(app: Any, size: tuple[int, int] = (80, 24)) -> None:
        async with app.run_test(size=size, headless=True) as pilot:
            await pilot.pause()

    try:
        import kent_ops.commands.dashboard  # noqa: F401
        import kent_ops.commands.gate  # noqa: F401
        from dashboards.gate.app import make_gate_app
        from dashboards.inspector.app import make_inspector_app

        with tempfile.TemporaryDirectory(prefix="kent-ops-zygote-") as folder:
            asyncio.run(draw(make_inspector_app("warm-up", None, "warm-up")))
            asyncio.run(draw(make_inspector_app("warm-up", None, "warm-up"), PHONE))
            asyncio.run(draw(make_gate_app("warm-up", "warm-up", None, state_dir=folder)))
    except Exception as exc:  # pragma: no cover - a broken app shows when it is opened
        sys.stderr.write(f"kent-ops zygote: the apps were not warmed: {exc}\n")
    return build_parser()


def _receive(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One request: a 4-byte length, JSON, and three file descriptors with the first bytes."""
    data, fds, _, _ = socket.recv_fds(connection, 65536, 3)
    if len(data) < 4 or len(fds) != 3:
        raise ValueError("a request is a length, JSON and three file descriptors")
    size = int.from_bytes(data[:4], "big")
    if size > MOST_REQUEST:
        raise ValueError("request too large")
    body = data[4:]
    while len(body) < size:
        more = connection.recv(size - len(body))
        if not more:
            raise ValueError("request cut short")
        body += more
    return json.loads(body), fds


def _show(argv: list[str], environment: dict[str, str]) -> None:
    """Write the app's command line and environment where ``ps`` (``/proc/PID/cmdline``
    and ``environ``) reads them: this process's own argv and environment memory.

    The fork server was started with room to spare in both (see
    :mod:`kent_ops.web.zygote`), so an operator, or a test, sees each app as it would
    see a started one. What does not fit is left out, whole entries at a time. The C
    library's environment no longer points there (``os.environ`` was replaced).
    """
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    # proc(5): arg_start, arg_end, env_start, env_end are fields 48 to 51.
    arg_start, arg_end, env_start, env_end = (int(f) for f in fields[45:49])
    entries = [f"{name}={value}" for name, value in environment.items()]
    for start, end, items in ((arg_start, arg_end, argv), (env_start, env_end, entries)):
        size = end - start
        data = b""
        for item in items:
            encoded = item.encode("utf-8", "surrogateescape") + b"\0"
            if len(data) + len(encoded) > size:
                break
            data += encoded
        if size > 0:
            ctypes.memmove(start, data + b"\0" * (size - len(data)), size)


def _become_app(
    request: dict[str, Any], fds: list[int], server_pid: int, parser: argparse.ArgumentParser
) -> int:
    """In the app's process: take its streams, environment, cap and name; run it."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    with contextlib.suppress(OSError):
        os.chdir(request["cwd"])
    memory = int(request["memory_bytes"])
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        memory = min(memory, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    deadline = time.monotonic() + ADOPTION_WAIT_S
    while os.getppid() != server_pid and time.monotonic() < deadline:
        time.sleep(0.001)  # the fork that made this process exits at once
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != server_pid:
        return 1  # the server is gone (or never adopted us): nobody to draw for
    argv = [str(a) for a in request["argv"]]
    _show(argv, dict(os.environ))
    from kent_ops.commands.cli import main

    try:
        return main(argv[3:], parser)  # after "python -m kent_ops", as a started app
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 1


def _serve_one(connection: socket.socket, server_pid: int, parser: argparse.ArgumentParser) -> None:
    """In a fork of the fork server: read the request, fork the app, report its pid."""
    try:
        request, fds = _receive(connection)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"kent-ops zygote: bad request: {exc}\n")
        os._exit(1)
    app = os.fork()
    if app == 0:
        connection.close()
        code = 1
        try:
            code = _become_app(request, fds, server_pid, parser)
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    for fd in fds:
        os.close(fd)
    with contextlib.suppress(OSError):
        connection.sendall(app.to_bytes(4, "big"))
    os._exit(0)


def main(argv: list[str]) -> int:
    socket_path, server_pid = argv[0], int(argv[1])  # argv[2]: room for _show
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != server_pid:
        return 1
    parser = _warm()
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            connection, _ = listener.accept()
            with connection:
                child = os.fork()
                if child == 0:
                    listener.close()
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    _serve_one(connection, server_pid, parser)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(socket_path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
