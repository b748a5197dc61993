"""The TLS leg of a remote property's bridge: a small relay beside its Mosquitto.

Debian 12's Mosquitto (2.0.11) hangs for good when its own TLS bridge connection is
closed by the far end before the TLS handshake is under way (a radio link that flaps,
a half-open relay): the failed handshake closes the socket without taking it out of
Mosquitto's socket table, the next attempt puts the bridge in twice, and the broker
spins in its keepalive check at 100 % CPU, serving none of its own sensors and deaf
to SIGTERM (docs/security.md, "A flapping bridge link"). Its plain-TCP bridge never
takes that path. So the property's broker bridges in plain MQTT to this relay on the
loopback, and this relay alone speaks TLS over the link: it checks the command post's
certificate against its CA and its name, TLS 1.2 at least, and pipes the bytes.

The relay holds no message: everything waiting for the command post stays in the
broker's persistent queue, so the relay can fail, restart or be killed at any moment
and lose nothing (the bridge resends what the command post did not acknowledge).

It imports nothing outside Python's standard library, so ``kent-ops deploy bridge``
copies this very file to the property's machine, where only Debian's ``python3`` runs
it (README, "Several properties")::

    python3 kent-ops-link.py --listen 127.0.0.1:18883 --to broker.local:8883 \\
        --cafile /etc/mosquitto/kent-ops/command-post-ca.crt
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import ssl
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

__all__ = [
    "CONNECT_TIMEOUT_S",
    "DEFAULT_LINK_PORT",
    "MAX_CONNECTIONS",
    "LinkSettings",
    "main",
    "serve",
    "tls_context",
]

DEFAULT_LINK_PORT = 18883
"""The relay's loopback port, where the property's bridge connects."""
CONNECT_TIMEOUT_S = 15.0
"""Reaching the command post and finishing the TLS handshake: a stalled link gives up
after this, so the bridge sees the connection close and tries again later."""
MAX_CONNECTIONS = 4
"""The bridge needs one; a few more let a reconnection overlap a dying connection."""
_CHUNK = 65536
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class LinkSettings:
    """Where the relay listens (loopback) and the command post's TLS listener."""

    listen_host: str
    listen_port: int
    host: str
    port: int
    cafile: Path


def tls_context(cafile: Path) -> ssl.SSLContext:
    """A client context that trusts only the command post's CA and checks its name."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(cafile))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    return context


def _say(text: str) -> None:
    """One line on stderr (the journal, under systemd)."""
    sys.stderr.write(f"kent-ops link: {text}\n")
    sys.stderr.flush()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy bytes one way until either side ends."""
    with contextlib.suppress(OSError, ssl.SSLError, asyncio.IncompleteReadError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()


def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, RuntimeError):
        writer.close()


class _Relay:
    """Accepts the bridge on the loopback and carries each connection over TLS."""

    def __init__(self, settings: LinkSettings, context: ssl.SSLContext) -> None:
        self.settings = settings
        self.context = context
        self.open = 0
        self.writers: set[asyncio.StreamWriter] = set()

    async def handle(self, local_r: asyncio.StreamReader, local_w: asyncio.StreamWriter) -> None:
        s = self.settings
        if self.open >= MAX_CONNECTIONS:
            _close(local_w)
            return
        self.open += 1
        self.writers.add(local_w)
        try:
            try:
                remote_r, remote_w = await asyncio.wait_for(
                    asyncio.open_connection(
                        s.host, s.port, ssl=self.context, server_hostname=s.host
                    ),
                    CONNECT_TIMEOUT_S,
                )
            except (OSError, ssl.SSLError, TimeoutError) as exc:
                _say(f"cannot reach the command post at {s.host}:{s.port}: {_reason(exc)}")
                return
            _say(f"connected to the command post at {s.host}:{s.port} over TLS")
            self.writers.add(remote_w)
            try:
                await self._carry(local_r, local_w, remote_r, remote_w)
            finally:
                self.writers.discard(remote_w)
            _say("the connection to the command post ended; the bridge will open another")
        finally:
            self.open -= 1
            self.writers.discard(local_w)
            _close(local_w)

    def close_all(self) -> None:
        """End every connection: the bridge reconnects when the relay is back."""
        for writer in list(self.writers):
            _close(writer)

    async def _carry(
        self,
        local_r: asyncio.StreamReader,
        local_w: asyncio.StreamWriter,
        remote_r: asyncio.StreamReader,
        remote_w: asyncio.StreamWriter,
    ) -> None:
        """Both ways until one side ends; then both ends close, as one MQTT connection."""
        ways = [
            asyncio.ensure_future(_pipe(local_r, remote_w)),
            asyncio.ensure_future(_pipe(remote_r, local_w)),
        ]
        try:
            await asyncio.wait(ways, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for way in ways:
                way.cancel()
            _close(remote_w)
            _close(local_w)
            await asyncio.gather(*ways, return_exceptions=True)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer within {CONNECT_TIMEOUT_S:g} s"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"its certificate is refused ({exc.verify_message})"
    text = str(exc).strip()
    if not text and isinstance(exc, ConnectionError):
        return "the connection closed during the TLS handshake"
    return text or type(exc).__name__


async def serve(settings: LinkSettings, stop: asyncio.Event | None = None) -> None:
    """Relay until ``stop`` is set (or SIGTERM / SIGINT when run as a program)."""
    relay = _Relay(settings, tls_context(settings.cafile))
    server = await asyncio.start_server(
        relay.handle, settings.listen_host, settings.listen_port, reuse_address=True
    )
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop.set)
    _say(
        f"listening on {settings.listen_host}:{settings.listen_port} for the bridge; "
        f"the command post is {settings.host}:{settings.port}"
    )
    async with server:
        await stop.wait()
        relay.close_all()  # or Python 3.12's Server.wait_closed waits for the bridge


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} must be HOST:PORT")
    return host.strip("[]"), int(port)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        _say(f"error: {message}")
        raise SystemExit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kent-ops-link",
        description="Carry a remote property's Mosquitto bridge to the command post over TLS.",
        epilog="Example: kent-ops-link --listen 127.0.0.1:18883 --to broker.local:8883 "
        "--cafile /etc/mosquitto/kent-ops/command-post-ca.crt",
    )
    p.add_argument(
        "--listen",
        type=_address,
        default=("127.0.0.1", DEFAULT_LINK_PORT),
        metavar="HOST:PORT",
        help=f"where the bridge connects, loopback (default 127.0.0.1:{DEFAULT_LINK_PORT})",
    )
    p.add_argument(
        "--to",
        type=_address,
        required=True,
        metavar="HOST:PORT",
        help="the command post's TLS listener, by the name in its certificate",
    )
    p.add_argument(
        "--cafile", required=True, metavar="FILE", help="the command post's CA certificate"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the relay; a bad argument or CA file is one sentence and exit 2."""
    args = _parser().parse_args(argv)
    (listen_host, listen_port), (host, port) = args.listen, args.to
    settings = LinkSettings(listen_host, listen_port, host, port, Path(args.cafile))
    try:
        tls_context(settings.cafile)
    except (OSError, ssl.SSLError) as exc:
        _say(f"cannot use {args.cafile} as the command post's CA certificate: {_reason(exc)}")
        return EXIT_USAGE
    try:
        asyncio.run(serve(settings))
    except OSError as exc:
        _say(f"cannot listen on {listen_host}:{listen_port}: {exc.strerror or exc}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        pass
    _say("stopped")
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
