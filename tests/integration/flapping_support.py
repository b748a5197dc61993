"""The radio link between a remote property and the command post, as a relay that flaps.

A real TCP relay (asyncio, on its own thread) between the property's bridge and the
command post's TLS listener. It forwards byte for byte, or, for a number of connection
attempts, accepts each and drops it in the middle of the TLS handshake, as a link that
flaps or a half-open relay on the way does: alternately at once (before the client has
said anything) and right after reading the client's ClientHello.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import threading

from live_support import wait_until

from kent_ops.broker.mosquitto import free_port

__all__ = ["FlappingRelay"]

_HELLO_WAIT_S = 5.0


class FlappingRelay:
    """Forwards to ``upstream``; :meth:`flap` drops the live connection and the next ones."""

    def __init__(self) -> None:
        self.port = free_port()
        self.upstream: tuple[str, int] | None = None
        self.accepted = 0
        self.dropped_at_once = 0
        self.dropped_after_hello = 0
        self._to_drop = 0
        self._open: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def dropped(self) -> int:
        return self.dropped_at_once + self.dropped_after_hello

    def start(self, upstream_port: int) -> int:
        """Relay to ``127.0.0.1:upstream_port``; returns the port to dial instead."""
        self.upstream = ("127.0.0.1", upstream_port)
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", self.port)
            )
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="flapping-relay", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise AssertionError("the relay did not start")
        return self.port

    def flap(self, attempts: int) -> None:
        """Cut the connection that is up, and drop the next ``attempts`` mid-handshake."""

        def go() -> None:
            self._to_drop = attempts
            for writer in list(self._open):
                writer.close()

        self._loop.call_soon_threadsafe(go)

    def wait_dropped(self, count: int, timeout: float) -> bool:
        try:
            wait_until(lambda: self.dropped >= count, timeout, f"{count} drops", every=0.1)
        except AssertionError:
            return False
        return True

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self._to_drop > 0:
            self._to_drop -= 1
            await self._drop(reader, writer, after_hello=self.dropped % 2 == 1)
            return
        assert self.upstream is not None
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        self._open |= {writer, up_writer}
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            self._open -= {writer, up_writer}

    async def _drop(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, after_hello: bool
    ) -> None:
        """Accept, then close: at once, or once the TLS ClientHello record is read."""
        if after_hello:
            with contextlib.suppress(asyncio.IncompleteReadError, TimeoutError, OSError):
                head = await asyncio.wait_for(reader.readexactly(5), _HELLO_WAIT_S)
                (length,) = struct.unpack("!H", head[3:5])
                await asyncio.wait_for(reader.readexactly(length), _HELLO_WAIT_S)
            self.dropped_after_hello += 1
        else:
            self.dropped_at_once += 1
        writer.close()

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    def stop(self) -> None:
        if self._thread is None:
            return

        def go() -> None:
            for writer in list(self._open):
                writer.close()
            if self._server is not None:
                self._server.close()
            self._loop.stop()

        self._loop.call_soon_threadsafe(go)
        self._thread.join(5)
        self._thread = None
