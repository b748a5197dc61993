"""Devices that can only post HTTP: an HTTPS endpoint in front of the adapter's worker.

A device posts its JSON to ``POST /devices/{sensor}`` with ``Authorization: Bearer
TOKEN``, its own token from the tokens file (``sensor = "token"``, a file only its owner
may read; never on a command line). The answer comes once the translation is on the
event's broker: 200, or 503 when it could not be (the device posts again). A body the
adapter cannot read is recorded all the same (its raw record, rejected, with the reason)
and answered 422 with that reason, so whoever set the device up sees why its figures do
not move, and knows that posting it again will not help. A wrong token is 401 and the
body is not read; a sensor with no ``http = true`` source is 404.
"""

from __future__ import annotations

import asyncio
import hmac
import ssl
import threading
import tomllib
from datetime import UTC, datetime
from pathlib import Path

from aiohttp import web

from kent_ops.adapter.service import Adapter, Inbound
from kent_ops.broker.credentials import read_private_file
from kent_ops.core.errors import UsageError
from kent_ops.core.wire import MAX_PAYLOAD_BYTES

__all__ = ["HttpIntake", "read_tokens"]

ANSWER_WAIT_S = 30.0


def read_tokens(path: str | Path, sensors: list[str]) -> dict[str, str]:
    """Each HTTP device's token; every such sensor needs one, and no other may have one."""
    text = read_private_file(path, "tokens file", " (it holds the devices' tokens)")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"tokens file {path}: not TOML ({exc})") from None
    tokens: dict[str, str] = {}
    for sensor, token in data.items():
        if sensor not in sensors:
            raise UsageError(f"tokens file {path}: {sensor!r} is not an HTTP device of the permit")
        if not isinstance(token, str) or len(token) < 16:
            raise UsageError(f"tokens file {path}: {sensor}'s token must be text of 16 or more")
        tokens[sensor] = token
    missing = [s for s in sensors if s not in tokens]
    if missing:
        raise UsageError(f"tokens file {path}: no token for {', '.join(missing)}")
    return tokens


class HttpIntake:
    """The HTTPS endpoint, in a thread with its own event loop."""

    def __init__(
        self,
        adapter: Adapter,
        tokens: dict[str, str],
        host: str,
        port: int,
        tls: ssl.SSLContext | None,
    ) -> None:
        self.adapter = adapter
        self.tokens = tokens
        self.host, self.port, self.tls = host, port, tls
        self._specs = {s.sensor: s for s in adapter.specs if s.http}
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="adapter-http", daemon=True)

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(15) or self._error is not None:
            raise UsageError(f"cannot listen on {self.host}:{self.port}: {self._error}")

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            app = web.Application(client_max_size=MAX_PAYLOAD_BYTES)
            app.router.add_post("/devices/{sensor}", self._post)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, self.host, self.port, ssl_context=self.tls)
            await site.start()
            self._ready.set()
            await self._stop.wait()
            await runner.cleanup()

        try:
            asyncio.run(serve())
        except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
            self._error = exc
            self._ready.set()

    async def _post(self, request: web.Request) -> web.Response:
        sensor = request.match_info["sensor"]
        spec = self._specs.get(sensor)
        if spec is None:
            return web.Response(status=404, text="no such device\n")
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), self.tokens[sensor].encode()):
            return web.Response(status=401, text="wrong token\n")
        payload = await request.read()
        item = Inbound(spec, f"POST {request.path}", payload, datetime.now(UTC))
        self.adapter.submit(item)
        done = await asyncio.get_running_loop().run_in_executor(None, item.done.wait, ANSWER_WAIT_S)
        if done and item.ok and item.unreadable is not None:
            return web.Response(
                status=422,
                text=f"{sensor}'s message was recorded but cannot be read: {item.unreadable}\n",
            )
        if done and item.ok:
            return web.Response(status=200, text="recorded\n")
        return web.Response(status=503, text="not recorded yet; post again\n")
