"""The connection layer of ``kent-ops serve``, over real sockets on the loopback, in process.

A small aiohttp application behind :class:`GuardedSite` with short deadlines and a cap
of three connections an address, over TLS with a certificate of ``kent-ops deploy
certs``: connections over the cap are reset before any TLS byte, a handshake never
begun and a request head sent a byte at a time are closed, an open websocket is not,
and the counts come back when connections close. Other addresses are 127.0.0.2 and
127.0.0.3 (the whole of 127/8 is the loopback). The flood against a real
``kent-ops serve`` is tests/web/test_serve_flood.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest
from aiohttp import ClientSession, ClientTimeout, TCPConnector, WSMsgType, web

from kent_ops.commands.deploy import make_certs
from kent_ops.web.connections import (
    ConnectionLimits,
    GuardedSite,
    address_key,
    limits_for,
    make_runner,
)
from kent_ops.web.files import LOW_FILES, moved_up, raise_open_file_limit

pytestmark = pytest.mark.timeout(60)

LIMITS = ConnectionLimits(total=50, above=0, per_address=3, handshake_s=0.5, head_s=0.5)
T = TypeVar("T")
PATIENCE_S = 20.0
"""The most a test waits for the server to act (it acts after about half a second)."""


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_certs(tmp_path_factory.mktemp("certs"), ["127.0.0.1"])


@dataclass
class Site:
    port: int
    client_tls: ssl.SSLContext

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.port}"


async def _echo(request: web.Request) -> web.StreamResponse:
    websocket = web.WebSocketResponse()
    await websocket.prepare(request)
    async for message in websocket:
        if message.type == WSMsgType.TEXT:
            await websocket.send_str(message.data)
    return websocket


async def _hello(request: web.Request) -> web.Response:
    return web.Response(text="hello")


@contextlib.asynccontextmanager
async def guarded(certs: dict[str, Path], limits: ConnectionLimits) -> AsyncIterator[Site]:
    """The small application behind a :class:`GuardedSite` with ``limits``, over TLS."""
    app = web.Application()
    app.add_routes([web.get("/", _hello), web.get("/ws", _echo)])
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(certs["server_crt"], certs["server_key"])
    runner = make_runner(app, limits, shutdown_timeout=1, signals=False)
    await runner.setup()
    site = GuardedSite(runner, "127.0.0.1", 0, limits=limits, ssl_context=server_tls)
    await site.start()
    try:
        yield Site(site.port, ssl.create_default_context(cafile=str(certs["ca_crt"])))
    finally:
        await runner.cleanup()


@pytest.fixture
async def site(certs: dict[str, Path]) -> AsyncIterator[Site]:
    async with guarded(certs, LIMITS) as s:
        yield s


async def _tcp(site: Site, address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A bare TCP connection from ``address``: not one TLS byte sent."""
    return await asyncio.open_connection("127.0.0.1", site.port, local_addr=(address, 0))


async def _tls(site: Site, address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(
        "127.0.0.1", site.port, ssl=site.client_tls, local_addr=(address, 0)
    )


async def _closed_by_server(reader: asyncio.StreamReader) -> bool:
    """Read until the server closes the connection: True once it has (EOF or a reset)."""
    try:
        async with asyncio.timeout(PATIENCE_S):
            while await reader.read(4096):
                pass
    except (ConnectionError, ssl.SSLError):
        return True
    except TimeoutError:
        return False
    return True


async def _refused(site: Site, address: str) -> bool:
    """A bare TCP connection from ``address`` is reset or closed at once by the server."""
    try:
        reader, writer = await _tcp(site, address)
    except ConnectionError:
        return True  # reset before the connection was even reported open
    closed = await _closed_by_server(reader)
    writer.close()
    return closed


async def _get(site: Site, address: str) -> str:
    async with (
        ClientSession(
            connector=TCPConnector(local_addr=(address, 0), ssl=site.client_tls),
            timeout=ClientTimeout(total=PATIENCE_S),
        ) as client,
        client.get(site.base + "/") as response,
    ):
        return await response.text()


async def test_connections_over_the_cap_are_reset_before_any_tls_and_others_served(
    site: Site,
) -> None:
    held = [await _tcp(site, "127.0.0.2") for _ in range(LIMITS.per_address)]
    # Refused at accept: reset without a byte of TLS from either side.
    assert await _refused(site, "127.0.0.2")
    # Another address is served meanwhile.
    assert await _get(site, "127.0.0.3") == "hello"
    # One of the three goes: its place comes back, and the address is served again.
    held[0][1].close()
    await held[0][1].wait_closed()

    async def served_again() -> str | None:
        with contextlib.suppress(OSError, ssl.SSLError, TimeoutError):
            return await _get(site, "127.0.0.2")
        return None

    assert await _eventually(served_again) == "hello"
    for _, w in held[1:]:
        w.close()


async def _eventually(attempt: Callable[[], Awaitable[T | None]]) -> T | None:
    """Try ``attempt`` until it answers something (bounded): a place comes back as soon
    as the server has seen its connection close."""
    for _ in range(int(PATIENCE_S / 0.1)):
        if (result := await attempt()) is not None:
            return result
        await asyncio.sleep(0.1)
    return None


async def test_connections_over_the_room_the_file_limit_leaves_are_reset_from_anywhere(
    certs: dict[str, Path],
) -> None:
    full = ConnectionLimits(total=2, above=0, per_address=100, handshake_s=5, head_s=5)
    async with guarded(certs, full) as site:
        held = [await _tcp(site, "127.0.0.2"), await _tcp(site, "127.0.0.3")]
        assert await _refused(site, "127.0.0.4")
        assert await _refused(site, "127.0.0.2")
        held[0][1].close()

        async def served() -> str | None:
            with contextlib.suppress(OSError, ssl.SSLError, TimeoutError):
                return await _get(site, "127.0.0.4")
            return None

        assert await _eventually(served) == "hello"
        held[1][1].close()


async def test_handshakes_never_begun_are_closed_and_their_places_given_back(
    site: Site,
) -> None:
    silent = [await _tcp(site, "127.0.0.2") for _ in range(LIMITS.per_address)]
    for reader, writer in silent:
        assert await _closed_by_server(reader)
        writer.close()

    async def served() -> str | None:
        with contextlib.suppress(OSError, ssl.SSLError, TimeoutError):
            return await _get(site, "127.0.0.2")
        return None

    assert await _eventually(served) == "hello"


async def test_a_head_sent_a_byte_at_a_time_is_closed_before_it_ends(site: Site) -> None:
    reader, writer = await _tls(site, "127.0.0.2")
    head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Slow: " + b"a" * 200 + b"\r\n\r\n"
    closed = asyncio.create_task(_closed_by_server(reader))
    sent = 0
    with contextlib.suppress(ConnectionError, ssl.SSLError):
        for byte in head:  # a byte every 0.1 s: the whole head would take 24 s
            if closed.done():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            sent += 1
            await asyncio.sleep(0.1)
    assert await closed
    assert sent < len(head), "the server waited for the whole head"
    writer.close()


async def test_a_second_request_head_dribbled_on_a_kept_connection_is_closed(
    site: Site,
) -> None:
    reader, writer = await _tls(site, "127.0.0.2")
    writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    await writer.drain()
    answer = await asyncio.wait_for(reader.readuntil(b"hello"), PATIENCE_S)
    assert answer.startswith(b"HTTP/1.1 200")
    closed = asyncio.create_task(_closed_by_server(reader))
    with contextlib.suppress(ConnectionError, ssl.SSLError):
        for byte in b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X: " + b"b" * 200:
            if closed.done():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.1)
    assert closed.done(), "the server waited for the whole second head"
    assert closed.result()
    writer.close()


async def test_an_open_websocket_is_not_held_to_the_head_deadline(site: Site) -> None:
    async with (
        ClientSession(
            connector=TCPConnector(local_addr=("127.0.0.2", 0), ssl=site.client_tls),
            timeout=ClientTimeout(total=PATIENCE_S),
        ) as client,
        client.ws_connect(site.base + "/ws") as websocket,
    ):
        await asyncio.sleep(6 * LIMITS.head_s)  # idle far past the head's deadline
        await websocket.send_str("still here")
        message = await websocket.receive(PATIENCE_S)
        assert (message.type, message.data) == (WSMsgType.TEXT, "still here")


def test_an_address_is_counted_by_itself_or_by_its_ipv6_64() -> None:
    assert address_key("192.0.2.7") == "192.0.2.7"
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:2:bbbb::9") == address_key("2001:db8:1:2:aaaa::1")
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("fe80::1%eth0") == "fe80::/64"


def test_the_connections_leave_the_low_descriptors_and_room_for_the_rest() -> None:
    roomy = limits_for(65_536)
    assert roomy.above == LOW_FILES
    assert roomy.total < 65_536 - LOW_FILES
    assert roomy.total > 60_000
    tight = limits_for(1_024)  # a limit that could not be raised
    assert (tight.above, tight.total) == (0, 512)


def test_a_connection_is_moved_above_the_descriptors_select_can_wait_on() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert soft > 2 * LOW_FILES, "the test process needs an open-file limit over 2,048"
    left, right = socket.socketpair()
    moved = moved_up(left, LOW_FILES)
    try:
        assert moved.fileno() >= LOW_FILES
        assert left.fileno() == -1  # the low descriptor is given back
        moved.sendall(b"x")
        assert right.recv(1) == b"x"
        assert not moved.get_inheritable()
    finally:
        moved.close()
        right.close()


@pytest.fixture
def systemd_default_limit() -> Iterator[tuple[int, int]]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1_024, soft), hard))
    try:
        yield soft, hard
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_open_file_limit_is_raised_to_the_hard_one(
    systemd_default_limit: tuple[int, int],
) -> None:
    _, hard = systemd_default_limit
    expected = hard if hard != resource.RLIM_INFINITY else 1 << 20
    assert raise_open_file_limit() == expected
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == expected


def test_the_systemd_unit_gives_serve_room_for_connections() -> None:
    unit = Path(__file__).resolve().parents[2] / "deploy" / "kent-ops-serve.service"
    lines = [line.strip() for line in unit.read_text().splitlines()]
    files = int(next(line for line in lines if line.startswith("LimitNOFILE=")).split("=")[1])
    limits = limits_for(files)
    assert limits.above == LOW_FILES
    assert limits.total >= 50 * limits.per_address
