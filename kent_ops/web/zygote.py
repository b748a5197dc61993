"""The web server's side of the apps' fork server (:mod:`kent_ops.commands.zygote`).

:class:`ForkServer` starts the fork server once, on the first app, with the
environment every app gets (less the per-app variables), and makes this server a
child subreaper, so the apps the fork server forks become this server's children.
:meth:`ForkServer.spawn` asks for one app and returns a :class:`ForkedApp`, which
stands in for the :class:`asyncio.subprocess.Process` textual-serve expects: its
standard streams as asyncio streams, ``terminate``, ``kill``, ``wait`` and
``returncode``, the exit seen through a pidfd and collected with ``waitpid``.

The fork server runs ``kent_ops`` code that imports Textual; this module does not
(the web server imports no Textual: an import-linter contract), it only starts the
program by its module name.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import logging
import os
import signal
import socket
import sys
import tempfile
from pathlib import Path

__all__ = ["ForkServer", "ForkedApp"]

log = logging.getLogger("kent-ops.serve")

PR_SET_CHILD_SUBREAPER = 36
ROOM = 4096
"""Bytes of command line and of environment each forked app may show in ``ps``."""
ROOM_VARIABLE = "KENT_OPS_ZYGOTE_ROOM"
START_WAIT_S = 60.0
"""The fork server imports and draws each app once before it is ready."""
REAP_RETRY_S = 0.05
POLL_S = 0.5


class ForkedApp:
    """An app process forked by the fork server and adopted by this one."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        self._exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pidfd: int | None = None

    def _watch(self) -> None:
        """Learn of the exit through a pidfd, then collect it (this server is the parent)."""
        loop = asyncio.get_running_loop()
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except ProcessLookupError:
            self._reap()  # already gone
            return
        except OSError:  # a kernel without pidfds (before Linux 5.3): look now and then
            self._poll()
            return
        loop.add_reader(self._pidfd, self._reap)

    def _poll(self) -> None:
        self._reap_again()
        if self.returncode is None:
            asyncio.get_running_loop().call_later(POLL_S, self._poll)

    def _reap(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            # Exited before this server adopted it: the adoption comes with its parent's
            # exit, a moment later.
            if self._pidfd is not None:
                loop.remove_reader(self._pidfd)
            loop.call_later(REAP_RETRY_S, self._reap_again)
            return
        if pid == 0:
            return
        if self._pidfd is not None:
            loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        self.returncode = os.waitstatus_to_exitcode(status)
        if not self._exited.done():
            self._exited.set_result(self.returncode)

    def _reap_again(self) -> None:
        if self.returncode is None:
            self._reap()

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)

    def send_signal(self, number: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, number)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """One fork server for this web server's apps, started when the first is asked for."""

    def __init__(self) -> None:
        self._process: asyncio.subprocess.Process | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._starting: asyncio.Lock | None = None

    @property
    def socket_path(self) -> str:
        assert self._folder is not None
        return str(Path(self._folder.name) / "apps.sock")

    async def start(self, environment: dict[str, str]) -> None:
        """Start the fork server in ``environment`` unless it runs (idempotent)."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._process is not None and self._process.returncode is None:
                return
            if self._folder is None:
                self._folder = tempfile.TemporaryDirectory(prefix="kent-ops-apps-")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.socket_path)
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
            argv = [sys.executable, "-m", "kent_ops.commands.zygote", self.socket_path,
                    str(os.getpid()), " " * ROOM]  # fmt: skip
            self._process = process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                env={**environment, ROOM_VARIABLE: " " * ROOM},
                cwd="/",
            )
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), START_WAIT_S)
            if line != b"ready\n":
                raise RuntimeError("the apps' fork server did not start")
            log.info("apps' fork server ready (pid %s)", process.pid)

    async def spawn(
        self,
        argv: tuple[str, ...],
        environment: dict[str, str],
        *,
        shared: dict[str, str],
        cwd: str,
        memory_bytes: int,
    ) -> ForkedApp:
        """Fork one app: ``argv`` as a started one would have, in ``environment``.

        ``shared`` is the environment every app has (the fork server starts in it, so
        what Textual reads from it as it is imported holds for every app).
        """
        await self.start(shared)
        stdin_r, stdin_w = os.pipe2(os.O_CLOEXEC)
        stdout_r, stdout_w = os.pipe2(os.O_CLOEXEC)
        stderr_r, stderr_w = os.pipe2(os.O_CLOEXEC)
        request = json.dumps(
            {"argv": list(argv), "env": environment, "cwd": cwd, "memory_bytes": memory_bytes}
        ).encode()
        try:
            pid = await asyncio.to_thread(
                _ask, self.socket_path, request, [stdin_r, stdout_w, stderr_w]
            )
        except BaseException:
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            raise
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):
                os.close(fd)
        app = ForkedApp(pid)
        app._watch()
        app.stdin = await _writer(stdin_w)
        app.stdout = await _reader(stdout_r)
        app.stderr = await _reader(stderr_r)
        return app


def _ask(path: str, request: bytes, fds: list[int]) -> int:
    """Send the request and the app's three streams (``SCM_RIGHTS``); the app's pid back."""
    message = len(request).to_bytes(4, "big") + request
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(START_WAIT_S)
        sock.connect(path)
        sent = socket.send_fds(sock, [message[:65536]], fds)
        sock.sendall(message[sent:])
        answer = b""
        while len(answer) < 4:
            more = sock.recv(4 - len(answer))
            if not more:
                raise RuntimeError("the apps' fork server did not fork the app")
            answer += more
    return int.from_bytes(answer, "big")


async def _reader(fd: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    await loop.connect_read_pipe(lambda: protocol, os.fdopen(fd, "rb", buffering=0))
    return reader


async def _writer(fd: int) -> asyncio.StreamWriter:
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(fd, "wb", buffering=0)
    )
    return asyncio.StreamWriter(transport, protocol, None, loop)
