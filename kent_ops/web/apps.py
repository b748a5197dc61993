"""Each signed-in person's app: a ``kent-ops dashboard`` or ``kent-ops gate`` process.

textual-serve runs one Textual app process per browser tab and relays the terminal
between them over a websocket (:class:`textual_serve.app_service.AppService`). Here
that process is the ordinary command line, chosen by the person's role, so a browser
gets exactly the app a terminal gets, and a crash or a hang in one person's app
cannot take down the server or anyone else's.

The broker password goes to the process in its environment (``KENT_OPS_BROKER_PASSWORD``,
read by :mod:`kent_ops.broker.credentials`), never on its command line, which every
local user can read with ``ps``. The process is started without a shell, dies with the
server (``PR_SET_PDEATHSIG``), and is ended when its tab closes: asked to quit first,
then terminated, then killed. Its memory is capped (``RLIMIT_DATA``, ``serve
--app-memory-mb``): an app that runs away fails alone, with a MemoryError, and the
host and everyone else's apps keep theirs.

By default (``serve --app-start fork``) the process is not started but forked from
a fork server that has imported everything once (:mod:`kent_ops.web.zygote`): the
same command line, environment, directory, cap and death signal, in half the time
and with the imported code's memory shared by every app. ``--app-start exec``
starts each as its own ``python -m kent_ops``, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import resource
import signal
import sys
from asyncio.subprocess import Process
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import SimpleNamespace

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from kent_ops.broker.client import BrokerAddress
from kent_ops.broker.credentials import ENV_PASSWORD, ENV_URL
from kent_ops.web.accounts import Account
from kent_ops.web.zygote import ForkedApp, ForkServer

__all__ = [
    "APP_MEMORY_MB",
    "APP_STARTS",
    "AppConfig",
    "Launch",
    "PersonApp",
    "launch_for",
    "prepare_apps",
    "shared_environment",
]

log = logging.getLogger("kent-ops.serve")

QUIT_WAIT_S = 5.0
"""How long an app may take to quit (the gate view says its tally is offline) before SIGTERM."""
APP_MEMORY_MB = 512
"""Each app's heap, at most: ten times what the dashboard uses at the largest terminal."""
APP_STARTS = ("fork", "exec")
"""How app processes begin: forked from the fork server, or started each on its own."""
PER_APP = ("COLUMNS", "ROWS", ENV_PASSWORD)
"""The variables of an app's environment that are its own; the rest every app shares."""
FORK_SERVER = ForkServer()
"""This server's apps' fork server, started with the first forked app."""


@dataclass(frozen=True, slots=True)
class AppConfig:
    """What every app of this server shares: the event, the broker, the files."""

    event_id: str
    broker: BrokerAddress
    ca_file: str | None = None
    state_dir: str | None = None
    keys: str | None = None
    clerk_option: str = "--clerk"
    """How ``kent-ops dashboard`` is told it is a clerk's (``--inspector`` before it had one)."""
    python: str = sys.executable
    memory_mb: int = APP_MEMORY_MB
    """Each app process's data (heap) limit in MiB (``RLIMIT_DATA``)."""
    start: str = "fork"
    """``fork`` (from the fork server; Linux) or ``exec`` (a fresh interpreter each)."""


@dataclass(frozen=True, slots=True)
class Launch:
    """One app process to start: its argv (no secret in it) and its broker user."""

    argv: tuple[str, ...]
    broker_user: str
    seat: str
    fork: bool = False
    """Fork it from the fork server rather than start it."""


def launch_for(account: Account, config: AppConfig) -> Launch:
    """The command line of ``account``'s app: the role decides which app, and whose."""
    broker = replace(config.broker, username=account.broker_user, password=None)
    argv = [config.python, "-m", "kent_ops"]
    if account.role == "deputy":
        assert account.gate is not None
        argv += ["gate", account.gate, "--event", config.event_id, "--broker", broker.url]
        if config.state_dir:
            argv += ["--state-dir", config.state_dir]
        if config.keys:
            argv += ["--keys", config.keys]
    else:
        who = "--inspector" if account.role == "inspector" else config.clerk_option
        argv += ["dashboard", "--event", config.event_id, who, account.name]
        argv += ["--broker", broker.url]
    if config.ca_file:
        argv += ["--ca-file", config.ca_file]
    fork = config.start == "fork" and sys.platform == "linux"
    return Launch(tuple(argv), account.broker_user, account.seat, fork=fork)


def shared_environment() -> dict[str, str]:
    """The environment every app gets (textual-serve's, without this server's broker
    login), less each app's own variables: the fork server runs in it."""
    base = AppService._build_environment(SimpleNamespace(debug=False), 80, 24)  # type: ignore[arg-type]
    return {k: v for k, v in base.items() if k not in (*PER_APP, ENV_URL)}


async def prepare_apps(config: AppConfig) -> None:
    """Start the fork server now, if apps are forked, so the first person waits for
    their app alone and not for the imports too. A failure is logged; the first app
    tries again."""
    if config.start == "fork" and sys.platform == "linux":
        try:
            await FORK_SERVER.start(shared_environment())
        except Exception as exc:
            log.warning("the apps' fork server did not start: %s", exc)


def _in_child(memory_bytes: int) -> None:  # pragma: no cover - runs in the child
    """In the child, before the app: cap its memory, and SIGTERM it when the server dies.

    ``RLIMIT_DATA`` counts what the process has written to (its heap, ``mmap``-ed
    memory), not address space it only reserved, so the cap is near what it uses.
    """
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        memory_bytes = min(memory_bytes, hard)  # never above what the server itself may have
    resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class PersonApp(AppService):
    """textual-serve's app service, running one person's app with their broker password."""

    def __init__(
        self,
        launch: Launch,
        password: str,
        *,
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
        download_manager: DownloadManager,
        memory_mb: int = APP_MEMORY_MB,
    ) -> None:
        super().__init__(
            " ".join(launch.argv),  # shown in textual-serve's own logs only; never run by a shell
            write_bytes=write_bytes,
            write_str=write_str,
            close=close,
            download_manager=download_manager,
        )
        self.launch = launch
        self.memory_bytes = memory_mb * 2**20
        self._password = password
        self._stopping: asyncio.Future[None] | None = None
        self._process: Process | ForkedApp | None = None  # type: ignore[assignment]

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        # The server's own broker settings are not this person's: drop them, then give
        # the app its user's password (the URL with the user name is on its argv).
        for name in (ENV_URL, ENV_PASSWORD):
            environment.pop(name, None)
        environment[ENV_PASSWORD] = self._password
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        environment = self._build_environment(width=width, height=height)
        self._password = ""
        if self.launch.fork:
            shared = {k: v for k, v in environment.items() if k not in PER_APP}
            forked = await FORK_SERVER.spawn(
                self.launch.argv,
                environment,
                shared=shared,
                cwd=str(Path.home()) if Path.home().is_dir() else "/",
                memory_bytes=self.memory_bytes,
            )
            self._process = forked
            assert forked.stdin is not None
            self._stdin = forked.stdin
            log.info("app forked: %s for %s (pid %s)", self.launch.argv[3],
                     self.launch.broker_user, forked.pid)  # fmt: skip
            return forked  # type: ignore[return-value]  # a Process as textual-serve uses one
        self._process = process = await asyncio.create_subprocess_exec(
            *self.launch.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            cwd=Path.home() if Path.home().is_dir() else "/",
            preexec_fn=partial(_in_child, self.memory_bytes) if os.name == "posix" else None,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        log.info("app started: %s for %s (pid %s)", self.launch.argv[3], self.launch.broker_user,
                 process.pid)  # fmt: skip
        return process

    async def stop(self) -> None:
        """Ask the app to quit; past :data:`QUIT_WAIT_S`, terminate it, then kill it.

        Whoever calls it, and however often, it runs once, and each caller returns only
        when the process has exited: the next app of the seat starts after that.
        """
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        process, task = self._process, self._task
        if task is None or process is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(super().stop(), QUIT_WAIT_S)
        for ending in (process.terminate, process.kill):
            if process.returncode is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                ending()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), QUIT_WAIT_S)
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._task = None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), QUIT_WAIT_S)
        log.info("app ended: %s for %s (pid %s, exit %s)", self.launch.argv[3],
                 self.launch.broker_user, process.pid, process.returncode)  # fmt: skip
