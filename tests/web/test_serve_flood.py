"""``kent-ops serve`` under a flood of idle connections, over TLS, on the loopback.

A real ``kent-ops serve`` with the certificate of ``kent-ops deploy certs``, started
with the open-file limit systemd gives a service that sets none (1,024). From
127.0.0.2, 1,100 connections each finish a TLS handshake, send half a request head and
wait; from 127.0.0.3 a deputy's phone signs in meanwhile (the whole of 127/8 is the
loopback). No broker is needed: signing in starts no app. The flood is bounded and ends
by itself: the server closes what it holds once the head's deadline passes.
docs/security.md, "Idle connections to serve", tells the attack and what answers it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import ssl
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import ClientSession, ClientTimeout, CookieJar, TCPConnector
from field_support import CHEAP, EVENT, stop
from live_support import wait_until, wait_until_async

from kent_ops.broker.mosquitto import free_port
from kent_ops.commands.deploy import make_certs
from kent_ops.web.accounts import make_account, save_accounts
from kent_ops.web.connections import HEAD_S, MOST_PER_ADDRESS

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]

FLOOD = 1_100
FLOODER, PHONE = "127.0.0.2", "127.0.0.3"
SYSTEMD_DEFAULT_FILES = 1_024
"""The soft open-file limit of a systemd service that sets no ``LimitNOFILE``."""
SIGN_IN_BOUND_S = 5.0
"""The phone's sign-in must be answered within this (the request's own timeout)."""
HALF_A_HEAD = b"GET /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow"


def _as_systemd_starts_it() -> None:  # pragma: no cover - runs in the child
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (SYSTEMD_DEFAULT_FILES, hard))


@dataclass
class Served:
    base: str
    process: subprocess.Popen[bytes]
    log: Path
    ca: Path


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    certs = make_certs(tmp_path / "certs", ["127.0.0.1"])
    users = tmp_path / "users.json"
    save_accounts(
        users, {"jsmith": make_account("jsmith", "deputy", "north pw", gate="north", cost=CHEAP)}
    )
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("ab") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "kent_ops", "serve", "--event", EVENT,
             "--listen", f"127.0.0.1:{port}", "--users", str(users),
             "--broker", f"mqtt://127.0.0.1:{free_port()}",
             "--tls-cert", str(certs["server_crt"]), "--tls-key", str(certs["server_key"]),
             "--state-dir", str(tmp_path / "tally")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            preexec_fn=_as_systemd_starts_it,  # only sets a limit: safe between fork and exec
        )  # fmt: skip
    try:
        wait_until(
            lambda: _started(process, log),
            60,
            lambda: f"kent-ops serve to start: {log.read_text()}",
        )
        yield Served(f"https://127.0.0.1:{port}", process, log, certs["ca_crt"])
    finally:
        stop(process)


def _started(process: subprocess.Popen[bytes], log: Path) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"kent-ops serve exited ({process.returncode}): {log.read_text()}")
    return "kent-ops serve:" in log.read_text()


@pytest.fixture
def many_files() -> Iterator[None]:
    """This test's process holds the flood's 1,100 sockets: its own limit must allow them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * FLOOD
    if hard != resource.RLIM_INFINITY and hard < wanted:
        raise AssertionError(
            f"the test needs an open-file limit of {wanted}; the hard one is {hard}"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


class Flood:
    """Connections from one address, each held with half a request head until the server
    closes it."""

    def __init__(self, port: int, ca: Path) -> None:
        self.port = port
        self.context = ssl.create_default_context(cafile=str(ca))
        self.opened = 0
        self.held = 0
        self.most_held = 0
        self.refused = 0
        self.closed_by_server = 0
        self.answered: list[bytes] = []

    @property
    def settled(self) -> bool:
        """Every connection was either refused or held with its half head sent."""
        return self.opened + self.refused >= FLOOD

    @property
    def ended(self) -> int:
        return self.refused + self.closed_by_server

    async def one(self) -> None:
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", self.port, ssl=self.context, local_addr=(FLOODER, 0),
                ssl_handshake_timeout=120,
            )  # fmt: skip
        except (TimeoutError, OSError, ssl.SSLError):
            self.refused += 1  # closed before or during the handshake
            return
        try:
            writer.write(HALF_A_HEAD)
            await writer.drain()
            self.opened += 1
            self.held += 1
            self.most_held = max(self.most_held, self.held)
            while chunk := await reader.read(4096):  # until the server closes it
                self.answered.append(chunk)
        except (OSError, ssl.SSLError):
            pass  # a reset is the server closing too
        self.held -= 1
        self.closed_by_server += 1
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError, asyncio.TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 5)


def low_sockets(pid: int) -> int:
    """How many of the server's socket descriptors are numbered below 1,024: those are
    the ones ``select()`` (paho's network loop) can still wait on."""
    found = 0
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            if int(entry.name) < 1024 and os.readlink(entry).startswith("socket:"):
                found += 1
    return found


async def sign_in(base: str, ca: Path) -> tuple[int, str, bool]:
    """A deputy's phone signs in from another address: status, where it is sent, cookie."""
    context = ssl.create_default_context(cafile=str(ca))
    async with (
        ClientSession(
            cookie_jar=CookieJar(unsafe=True),
            headers={"Origin": base},
            connector=TCPConnector(local_addr=(PHONE, 0), ssl=context),
            timeout=ClientTimeout(total=SIGN_IN_BOUND_S),
        ) as phone,
        phone.post(
            f"{base}/signin", data={"name": "jsmith", "password": "north pw"}, allow_redirects=False
        ) as response,
    ):
        cookie = any(c.key == "kent_ops_session" for c in phone.cookie_jar)
        return response.status, response.headers.get("Location", ""), cookie


async def test_a_thousand_idle_tls_connections_from_one_address_leave_sign_ins_answered(
    served: Served, many_files: None
) -> None:
    port = int(served.base.rsplit(":", 1)[1])
    flood = Flood(port, served.ca)
    tasks = [asyncio.create_task(flood.one()) for _ in range(FLOOD)]
    try:
        # Every connection is held (half a head sent) or was refused; none yet let go.
        await wait_until_async(lambda: flood.settled, 120, "the flood's connections to settle")
        held_at_sign_in = flood.held
        low = low_sockets(served.process.pid)
        status, location, cookie = await sign_in(served.base, served.ca)
        held_at_answer = flood.held

        assert (status, location, cookie) == (303, "/gate", True), "the sign-in was not answered"
        # The cap refused the connections over it, without a TLS handshake's work.
        assert flood.most_held <= MOST_PER_ADDRESS
        assert flood.refused >= FLOOD - MOST_PER_ADDRESS
        # The sign-in was answered while the flood held its connections.
        assert held_at_sign_in >= MOST_PER_ADDRESS // 2
        assert held_at_answer >= MOST_PER_ADDRESS // 2
        # The held connections live above descriptor 1,023: below it stays free for
        # select(), which the gate hubs' MQTT client waits with.
        assert low < 50, f"{low} sockets below descriptor 1,024"

        # The server closes each held connection once the head's deadline passes.
        await wait_until_async(
            lambda: flood.ended >= FLOOD, 6 * HEAD_S + 60, "the server to close the flood"
        )
        assert flood.answered == [], "the server answered half a request head"
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert served.process.poll() is None, "kent-ops serve died under the flood"
    log = served.log.read_text()
    assert "Too many open files" not in log
    assert f"connections from {FLOODER} refused" in log, log[-2000:]
