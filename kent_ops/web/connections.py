"""How ``kent-ops serve`` takes connections: a cap per address, deadlines, and room.

Phones reach the server over the event's Wi-Fi, many of them behind one router, and
anyone on that network can open connections and then say nothing. Left alone, about
a thousand such connections from one address (each a TLS handshake and half a request
head) filled the process's 1,024 files: the server could accept nobody else, and
nothing ever timed them out (docs/security.md, "Idle connections to serve"). So:

- the open-file limit is raised to the hard limit at start (:func:`raise_open_file_limit`;
  the systemd unit sets ``LimitNOFILE``);
- the server accepts connections itself (:class:`GuardedSite`): one that would take its
  address over :data:`MOST_PER_ADDRESS`, or all connections over what the file limit
  leaves room for, is reset at once, before any TLS work;
- each connection it keeps is moved to a descriptor above 1,023, so the low ones stay
  free for what can only wait on those: ``select()``, which paho's network loop (the
  gate hubs' broker links) uses;
- a TLS handshake must end within :data:`HANDSHAKE_S`, and a request's head must
  arrive within :data:`HEAD_S` of the handshake or of the previous response: aiohttp's
  keep-alive timer, which only a whole head stops (a head sent a byte at a time does
  not), closes the connection otherwise.

A websocket, once open, is not held to these deadlines: its heartbeat watches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import socket
import ssl
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.web_runner import GracefulExit

from kent_ops.core.errors import KentOpsError
from kent_ops.web.files import LOW_FILES, SPARE_FILES, moved_up, raise_open_file_limit

__all__ = [
    "HANDSHAKE_S",
    "HEAD_S",
    "MOST_PER_ADDRESS",
    "ConnectionLimits",
    "GuardedSite",
    "address_key",
    "limits_for",
    "make_runner",
    "raise_open_file_limit",
    "run_app",
]

log = logging.getLogger("kent-ops.serve")

MOST_PER_ADDRESS = 1_000
"""Connections one client address may hold at once.

A festival's phones behind one router share its address. Take 150 deputies' phones
there: each holds its gate page's websocket, may hold a second one for a few seconds
after its link dropped (until the server's heartbeat finds it dead), and opens at most
four more while a page loads (the page, its script, its style, its icon), which stay
open for :data:`HEAD_S` afterwards. That is 150 × 6 = 900 at the very worst moment, all
150 reloading at once; a dashboard's page loads more files but inspectors are few.
1,000 is above it, and an attacker's thousand connections from one address stay far
from the file limit, which is tens of thousands once raised.
"""
HANDSHAKE_S = 10.0
"""A TLS handshake must end within this: a phone on a poor link needs a few round trips
(a lost packet is sent again after 1 s, then 2, then 4)."""
HEAD_S = 10.0
"""A request's head must arrive within this of the handshake or of the previous
response (the same allowance as the handshake); an idle keep-alive connection closes
after it too, and the browser opens a new one when it needs it."""
CLOSE_S = 5.0
"""How long a closing TLS connection waits for the other end's goodbye."""
BACKLOG = 1_024
"""Connections the kernel queues before they are accepted: 150 phones reconnecting at
once must not be dropped there."""
ACCEPTS_A_TURN = 128
"""Connections accepted at one wake-up before the loop serves the others again."""
PAUSE_S = 1.0
"""How long accepting pauses when the system itself is out of descriptors."""
_RESET = struct.pack("ii", 1, 0)
"""``SO_LINGER`` on with a zero wait: ``close()`` resets the connection, keeping no state."""


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """What the server admits and for how long it waits."""

    total: int
    """Connections at once from everywhere: what the open-file limit leaves room for."""
    above: int = LOW_FILES
    """Connections are moved to descriptors from this one on (0: left where accepted)."""
    per_address: int = MOST_PER_ADDRESS
    handshake_s: float = HANDSHAKE_S
    head_s: float = HEAD_S
    close_s: float = CLOSE_S


def limits_for(files: int) -> ConnectionLimits:
    """The connections a process with ``files`` descriptors can hold, and where.

    With room enough, connections take the descriptors from 1,024 up and everything
    else keeps the 1,024 below; with less (a limit that could not be raised), half the
    descriptors go to connections, where they are accepted.
    """
    if files >= 2 * LOW_FILES:
        return ConnectionLimits(total=files - LOW_FILES - SPARE_FILES, above=LOW_FILES)
    return ConnectionLimits(total=max(1, files // 2), above=0)


def address_key(host: str) -> str:
    """The key a client's connections are counted under: its IPv4 address, or its IPv6
    /64 (a single device may use any address of its network's /64)."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class _Tracked(asyncio.Protocol):
    """aiohttp's protocol for one connection, telling when the connection is gone."""

    __slots__ = ("_done", "_inner")

    def __init__(self, inner: asyncio.Protocol, done: Callable[[], None]) -> None:
        self._inner = inner
        self._done = done

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            self._inner.connection_lost(exc)
        finally:
            self._done()


class _Counts:
    """Connections held, from everywhere and per address; refusals said once per spell."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.total = 0
        self.by_address: dict[str, int] = {}
        self.refused: dict[str, int] = {}
        """Addresses refused since they reached the cap, and how many times."""
        self.full = 0
        """Connections refused since the total reached its cap."""

    def admit(self, key: str) -> bool:
        held = self.by_address.get(key, 0)
        if held >= self.limits.per_address:
            if key not in self.refused:
                log.warning(
                    "connections from %s refused: it holds %d, the most one address may",
                    key, held,
                )  # fmt: skip
            self.refused[key] = self.refused.get(key, 0) + 1
            return False
        if self.total >= self.limits.total:
            if not self.full:
                log.warning(
                    "connections refused: %d are open, all the open-file limit has room for "
                    "(raise LimitNOFILE)", self.total,
                )  # fmt: skip
            self.full += 1
            return False
        self.by_address[key] = held + 1
        self.total += 1
        return True

    def release(self, key: str) -> None:
        self.total -= 1
        held = self.by_address[key] - 1
        if held:
            self.by_address[key] = held
        else:
            del self.by_address[key]
        if key in self.refused and held < self.limits.per_address:
            log.warning(
                "%s holds fewer connections than the most again; refused meanwhile: %d",
                key, self.refused.pop(key),
            )  # fmt: skip
        if self.full and self.total < self.limits.total:
            log.warning("the server has room again; connections refused meanwhile: %d", self.full)
            self.full = 0


class _Admission:
    """One admitted connection's place in the counts, given back exactly once."""

    __slots__ = ("_counts", "_key", "_released")

    def __init__(self, counts: _Counts, key: str) -> None:
        self._counts = counts
        self._key = key
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._counts.release(self._key)


def _listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host:port`` (each address it names), non-blocking."""
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise KentOpsError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(BACKLOG)
            sock.setblocking(False)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise KentOpsError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sockets


def _reset(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
    conn.close()


class GuardedSite(web.BaseSite):
    """aiohttp's TCP site, accepting each connection itself to apply the limits."""

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        *,
        limits: ConnectionLimits,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=BACKLOG)
        self._host = host
        self._port = port
        self._counts = _Counts(limits)
        self._listening: list[socket.socket] = []
        self._opening: set[asyncio.Task[None]] = set()

    @property
    def name(self) -> str:
        scheme = "https" if self._ssl_context else "http"
        return f"{scheme}://{self._host}:{self._port}"

    @property
    def limits(self) -> ConnectionLimits:
        return self._counts.limits

    @property
    def port(self) -> int:
        """The port it listens on (the one the kernel chose, for port 0)."""
        if self._listening:
            return int(self._listening[0].getsockname()[1])
        return self._port

    async def start(self) -> None:
        await super().start()
        self._listening = _listen(self._host, self._port)
        loop = asyncio.get_running_loop()
        for sock in self._listening:
            loop.add_reader(sock.fileno(), self._accept, sock)

    async def stop(self) -> None:
        loop = asyncio.get_running_loop()
        for sock in self._listening:
            loop.remove_reader(sock.fileno())
            sock.close()
        self._listening = []
        for task in self._opening:
            task.cancel()
        await asyncio.gather(*self._opening, return_exceptions=True)
        await super().stop()

    def _accept(self, listening: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(ACCEPTS_A_TURN):
            try:
                conn, peer = listening.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    log.warning("a connection could not be accepted: %s", exc.strerror)
                    return
                log.warning("accepting paused for %g s: %s", PAUSE_S, exc.strerror)
                loop.remove_reader(listening.fileno())
                loop.call_later(PAUSE_S, self._resume, listening)
                return
            key = address_key(str(peer[0]))
            if not self._counts.admit(key):
                _reset(conn)
                continue
            conn = moved_up(conn, self.limits.above)
            conn.setblocking(False)
            admission = _Admission(self._counts, key)
            task = loop.create_task(self._open(conn, admission))
            self._opening.add(task)
            task.add_done_callback(self._opening.discard)

    def _resume(self, listening: socket.socket) -> None:
        if listening in self._listening:
            asyncio.get_running_loop().add_reader(listening.fileno(), self._accept, listening)

    async def _open(self, conn: socket.socket, admission: _Admission) -> None:
        """Hand the connection to aiohttp, after its TLS handshake (within the deadline)."""
        server = self._runner.server
        assert server is not None

        def protocol() -> asyncio.Protocol:
            return _Tracked(server(), admission.release)

        timeouts: dict[str, Any] = {}
        if self._ssl_context is not None:
            timeouts = {
                "ssl_handshake_timeout": self.limits.handshake_s,
                "ssl_shutdown_timeout": self.limits.close_s,
            }
        loop = asyncio.get_running_loop()
        try:
            await loop.connect_accepted_socket(protocol, conn, ssl=self._ssl_context, **timeouts)
        except (TimeoutError, OSError, ssl.SSLError):
            # No handshake, or one too slow: aiohttp never saw the connection.
            admission.release()
            conn.close()
        except BaseException:
            admission.release()
            conn.close()
            raise


def run_app(
    app: web.Application,
    host: str,
    port: int,
    *,
    ssl_context: ssl.SSLContext | None = None,
    shutdown_timeout: float = 10.0,
    listening: Callable[[], None] | None = None,
) -> None:
    """:func:`aiohttp.web.run_app` with the site of this module: serve until SIGINT or
    SIGTERM, then shut down as aiohttp does (requests finish, cleanup runs).

    ``listening`` is called in the server's event loop once it accepts connections.
    """
    limits = limits_for(raise_open_file_limit())
    loop = asyncio.new_event_loop()
    main = loop.create_task(
        _serve(app, _Where(host, port, ssl_context), limits, shutdown_timeout, listening)
    )
    try:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(main)
    except (GracefulExit, KeyboardInterrupt):
        pass
    finally:
        try:
            if not main.done():
                main.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    loop.run_until_complete(main)
        finally:
            _cancel_rest(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            asyncio.set_event_loop(None)
            loop.close()


@dataclass(frozen=True, slots=True)
class _Where:
    host: str
    port: int
    ssl_context: ssl.SSLContext | None


def make_runner(
    app: web.Application,
    limits: ConnectionLimits,
    *,
    shutdown_timeout: float = 10.0,
    signals: bool = True,
) -> web.AppRunner:
    """aiohttp's runner for ``app``, its keep-alive timer set to the head's deadline;
    with ``signals``, SIGINT and SIGTERM stop it."""
    return web.AppRunner(
        app,
        handle_signals=signals,
        keepalive_timeout=limits.head_s,
        shutdown_timeout=shutdown_timeout,
    )


async def _serve(
    app: web.Application,
    where: _Where,
    limits: ConnectionLimits,
    shutdown_timeout: float,
    listening: Callable[[], None] | None,
) -> None:
    runner = make_runner(app, limits, shutdown_timeout=shutdown_timeout)
    await runner.setup()
    try:
        site = GuardedSite(
            runner, where.host, where.port, limits=limits, ssl_context=where.ssl_context
        )
        await site.start()
        _said(limits)
        if listening is not None:
            listening()
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def _said(limits: ConnectionLimits) -> None:
    log.info(
        "up to %d connections at once, %d from one address; a handshake and a request's "
        "head each within %g s",
        limits.total, limits.per_address, limits.head_s,
    )  # fmt: skip
    if not limits.above:
        log.warning(
            "the open-file limit leaves room for %d connections only: raise LimitNOFILE",
            limits.total,
        )


def _cancel_rest(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is still running once the server stopped, and let it end."""
    rest = asyncio.all_tasks(loop)
    for task in rest:
        task.cancel()
    if rest:
        loop.run_until_complete(asyncio.gather(*rest, return_exceptions=True))
