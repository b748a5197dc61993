"""``kent-ops serve``'s web server: sign in, then exactly your own app in the browser.

Routes: ``/signin`` (the form and its POST), ``/signout``, ``/`` (sends a signed-in
person to their app), ``/dashboard`` (textual-serve's page for an inspector's or a
clerk's dashboard) with ``/ws/dashboard`` (the websocket that drives its app process,
textual-serve's protocol) and ``/static`` (textual-serve's front end); ``/gate`` (a
deputy's gate view, a small page of our own) with ``/ws/gate`` (its gate's hub,
:mod:`kent_ops.web.deputies`), ``/inspector`` (an inspector's or the Clerk's page on a
phone) with ``/ws/inspector`` (the event's one hub, :mod:`kent_ops.web.inspectors`).

Security, in short: HTTPS with the event's certificate; a random session token in an
``HttpOnly``, ``SameSite=Strict`` (and ``Secure`` over HTTPS) cookie, the session on
the server only; a POST or a websocket from another origin is refused, and every
response carries a Content-Security-Policy and its kin (:mod:`kent_ops.web.guard`);
a failed sign-in makes the next one from that address wait, doubling each time, but
never keeps a name out from elsewhere (:mod:`kent_ops.web.throttle`); a session ends
after ``--session-minutes``, closing its apps and pages. One dashboard app runs per
seat (a person's), handed over one at a time (:mod:`kent_ops.web.seats`): opening it
again elsewhere closes the older one first. A gate's deputies are not seated: each
phone is a websocket to the gate's one hub, and one tally counts for all of them. What
a browser sends is bounded (:mod:`kent_ops.web.relay`) and each app's memory is capped
(:mod:`kent_ops.web.apps`). docs/security.md says which attack each of these answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import textual_serve
from aiohttp import WSCloseCode, web, web_response
from textual_serve.download_manager import DownloadManager

from kent_ops.web import pages
from kent_ops.web.accounts import Account, load_accounts, verify_sign_in
from kent_ops.web.apps import AppConfig, Launch, PersonApp, launch_for
from kent_ops.web.connections import run_app
from kent_ops.web.deputies import GateHubs, run_phone
from kent_ops.web.gate_hub import GateSettings
from kent_ops.web.guard import SERVER, from_this_site, script_hash, security_headers
from kent_ops.web.inspector_hub import InspectorSettings
from kent_ops.web.inspectors import InspectorPages, landing
from kent_ops.web.phone import Phone
from kent_ops.web.relay import MOST_MESSAGE, relay, size_from_query
from kent_ops.web.seats import Seats
from kent_ops.web.sessions import Session, Sessions
from kent_ops.web.throttle import SignInThrottle

__all__ = ["COOKIE", "ServeSettings", "WebServer"]

log = logging.getLogger("kent-ops.serve")
COOKIE = "kent_ops_session"
STATIC = Path(textual_serve.__file__).resolve().parent / "static"
ASSETS = Path(__file__).resolve().parent / "static"
_APPS = ("dashboard", "gate", "inspector")
_SCRIPTS = tuple(script_hash(s) for s in pages.INLINE_SCRIPTS)
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
_CLOSE_WAIT_S = 5.0
SIGNED_OUT = 4001
"""The close code that tells a deputy's page its sign-in ended (it stops reconnecting)."""


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """Everything the server is started with."""

    apps: AppConfig
    users_file: Path
    session_s: float = 720 * 60
    tls: bool = False
    sweep_s: float = 1.0
    gates: GateSettings = field(default_factory=GateSettings)
    """The deputies' gate hubs: the tally factory and where the tallies are kept."""
    inspectors: InspectorSettings = field(default_factory=InspectorSettings)
    """The inspectors' page hub (one for the event)."""


@dataclass(slots=True)
class _Running:
    """An app process and the websocket it draws on."""

    token: str
    app: PersonApp
    websocket: web.WebSocketResponse
    ended: str = ""


@dataclass
class WebServer:
    """The aiohttp application, its sessions and the apps running for them."""

    settings: ServeSettings
    throttle: SignInThrottle = field(default_factory=SignInThrottle)
    clock: Callable[[], float] = time.monotonic
    seats: Seats = field(default_factory=Seats)
    accounts: dict[str, Account] = field(default_factory=dict)
    running: dict[str, _Running] = field(default_factory=dict)
    phones: set[Phone] = field(default_factory=set)
    _users_mtime: float | None = None

    def __post_init__(self) -> None:
        self.sessions = Sessions(self.settings.session_s, clock=self.clock)
        self.downloads = DownloadManager()
        self.gates = GateHubs(self.settings.apps, self.settings.gates)
        self.inspectors = InspectorPages(self.settings.apps, self.settings.inspectors)
        # scrypt has threads of its own, one a core: fifty people signing in at once
        # must not hold up the gate hubs' file work queued behind them.
        self.hashing = ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="sign-in")
        self.reload_accounts()

    # accounts and sessions ------------------------------------------------------------

    def reload_accounts(self) -> None:
        """Read the users file again if it changed: ``users add``/``remove`` need no restart."""
        try:
            mtime = self.settings.users_file.stat().st_mtime_ns
        except OSError:
            mtime = None
        if mtime == self._users_mtime:
            return
        self.accounts = load_accounts(self.settings.users_file)
        self._users_mtime = mtime

    def _session(self, request: web.Request) -> Session | None:
        return self.sessions.get(request.cookies.get(COOKIE))

    async def _sweep(self) -> None:
        """End expired sessions and those of removed accounts, closing their apps."""
        while True:
            await asyncio.sleep(self.settings.sweep_s)
            try:
                self.reload_accounts()
            except Exception as exc:  # a half-edited file: keep the accounts we have
                log.warning("users file not reloaded: %s", exc)
            for session in self.sessions.sweep(set(self.accounts)):
                log.info("session ended for %s (expired or removed)", session.account)
                await self._close_apps(session.token, "your sign-in ran out")

    async def _close_apps(self, token: str, why: str) -> None:
        for running in [r for r in self.running.values() if r.token == token]:
            running.ended = why
            await _close(running.websocket, why)
        for phone in [p for p in self.phones if p.token == token]:
            phone.ended = why
            await _close(phone.websocket, why, code=SIGNED_OUT)

    # the web application ------------------------------------------------------------

    def make_app(self) -> web.Application:
        # aiohttp's own answers to malformed requests (400s) never reach the hook
        # below; they take their Server header from here, so it names no version.
        web_response.SERVER_SOFTWARE = SERVER
        app = web.Application(client_max_size=16 * 1024, middlewares=[self._only_from_here])
        app.add_routes(
            [
                web.get("/", self.handle_root),
                web.get("/signin", self.handle_sign_in_form),
                web.post("/signin", self.handle_sign_in),
                web.post("/signout", self.handle_sign_out),
                web.get("/dashboard", self.handle_app_page),
                web.get("/gate", self.handle_app_page),
                web.get("/inspector", self.handle_inspector_page),
                web.get("/ws/{app}", self.handle_websocket),
                web.static("/static", STATIC),
                web.static("/assets", ASSETS),
            ]
        )
        app.on_response_prepare.append(self._headers)
        app.cleanup_ctx.append(self._background)
        return app

    async def _headers(self, request: web.Request, response: web.StreamResponse) -> None:
        headers = security_headers(request, tls=self.settings.tls, scripts=_SCRIPTS)
        response.headers["Server"] = headers.pop("Server")
        for name, value in headers.items():
            response.headers.setdefault(name, value)

    @web.middleware
    async def _only_from_here(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Refuse a state-changing request that a page of another site made (login CSRF)."""
        if request.method not in _SAFE_METHODS and not from_this_site(
            request, tls=self.settings.tls
        ):
            log.warning(
                "refused %s %s from %s: Origin %r, not this site", request.method, request.path,
                request.remote, request.headers.get("Origin", request.headers.get("Referer")),
            )  # fmt: skip
            page = pages.message_page(
                "Refused",
                "This form was sent from a page of another site. Open kent-ops here and "
                "sign in again.",
                link=("/signin", "Sign in"),
            )
            return _html(page, status=403)
        return await handler(request)

    async def _background(self, app: web.Application) -> AsyncIterator[None]:
        sweeper = asyncio.create_task(self._sweep(), name="session-sweep")
        yield
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        await asyncio.gather(*(r.app.stop() for r in list(self.running.values())))
        await self.gates.close_all()
        await self.inspectors.close_all()
        self.hashing.shutdown(wait=False, cancel_futures=True)

    async def handle_root(self, request: web.Request) -> web.StreamResponse:
        session = self._session(request)
        account = self.accounts.get(session.account) if session else None
        if session is None or account is None:
            return _redirect("/signin")
        return _redirect(landing(account.app, phone=session.phone))

    async def handle_sign_in_form(self, request: web.Request) -> web.Response:
        if (session := self._session(request)) and session.account in self.accounts:
            return _redirect("/")
        return _html(pages.sign_in_page(self.settings.apps.event_id))

    async def handle_sign_in(self, request: web.Request) -> web.Response:
        form = await request.post()
        name, password = str(form.get("name", "")).strip(), str(form.get("password", ""))
        address = request.remote or "unknown"
        keys = self.throttle.keys(name, address)
        if not self.throttle.begin(keys):
            waiting = self.throttle.wait_s(keys)
            wait = max(1, round(waiting))
            log.warning("sign-in refused for %r from %s: too many failures", name, address)
            error = (
                f"Too many failed sign-ins: try again in {wait} s."
                if waiting > 0
                else "A sign-in for this name is being checked already: try again."
            )
            page = pages.sign_in_page(self.settings.apps.event_id, error=error, name=name)
            return _html(page, status=429, headers={"Retry-After": str(wait)})
        account: Account | None = None
        try:
            self.reload_accounts()
            loop = asyncio.get_running_loop()
            account = await loop.run_in_executor(
                self.hashing, verify_sign_in, self.accounts, name, password
            )
        finally:
            self.throttle.end(keys, ok=account is not None)
        if account is None:
            log.warning("sign-in failed for %r from %s", name, address)
            page = pages.sign_in_page(
                self.settings.apps.event_id, error="Wrong name or password.", name=name
            )
            return _html(page, status=401)
        phone = pages.on_a_phone(form.get("width"))
        session = self.sessions.open(account.name, address, password, phone=phone)
        log.info("signed in: %s (%s) from %s", account.name, account.describe(), address)
        for old in self.sessions.crowded(account.name):
            log.info("oldest session of %s ended: too many at once", old.account)
            await self._close_apps(old.token, "signed in too often elsewhere")
        response = _redirect(landing(account.app, phone=phone))
        response.set_cookie(
            COOKIE,
            session.token,
            max_age=int(self.settings.session_s),
            path="/",
            secure=self.settings.tls,
            httponly=True,
            samesite="Strict",
        )
        return response

    async def handle_sign_out(self, request: web.Request) -> web.Response:
        token = request.cookies.get(COOKIE)
        if token and (session := self.sessions.close(token)) is not None:
            log.info("signed out: %s", session.account)
            await self._close_apps(token, "signed out")
        response = _html(pages.message_page("Signed out", "You are signed out.",
                                            link=("/signin", "Sign in")))  # fmt: skip
        response.del_cookie(COOKIE, path="/")
        return response

    def _allowed(self, request: web.Request, app_name: str) -> tuple[Session, Account]:
        """The session and account that may open ``app_name``; else an HTTP refusal."""
        session = self._session(request)
        account = self.accounts.get(session.account) if session else None
        if session is None or account is None:
            raise web.HTTPSeeOther("/signin")
        if (app_name if app_name != "inspector" else "dashboard") != account.app:
            log.warning("refused: %s (%s) asked for %s", account.name, account.role, app_name)
            raise web.HTTPForbidden(
                text=pages.message_page(
                    "Not for your account",
                    f"You are signed in as {account.name}, {account.describe()}: "
                    f"your app is the {'gate view' if account.app == 'gate' else 'dashboard'}.",
                    link=("/", "Open my app"),
                ),
                content_type="text/html",
            )
        return session, account

    async def handle_app_page(self, request: web.Request) -> web.Response:
        app_name = request.path.strip("/")
        _, account = self._allowed(request, app_name)
        scheme = "wss" if self.settings.tls else "ws"
        if account.role == "deputy":
            assert account.gate is not None
            page = pages.gate_page(
                event_id=self.settings.apps.event_id,
                gate=account.gate,
                account=account.name,
                websocket_url=f"{scheme}://{request.host}/ws/gate",
            )
            return _html(page)
        try:
            font_size = min(32, max(8, int(request.query.get("fontsize", "16"))))
        except ValueError:
            font_size = 16
        title = f"Gate {account.gate}" if account.role == "deputy" else f"{account.name} dashboard"
        page = pages.app_page(
            title=title,
            websocket_url=f"{scheme}://{request.host}/ws/{app_name}",
            font_size=font_size,
            keyboard=app_name != "gate",
        )
        return _html(page)

    def _same_origin(self, request: web.Request) -> bool:
        return "Origin" in request.headers and from_this_site(request, tls=self.settings.tls)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        app_name = request.match_info["app"]
        if app_name not in _APPS:
            raise web.HTTPNotFound()
        if not self._same_origin(request):
            raise web.HTTPForbidden(text="websocket from another origin")
        if self._session(request) is None:
            raise web.HTTPUnauthorized(text="sign in first")
        session, account = self._allowed(request, app_name)
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=MOST_MESSAGE)
        await websocket.prepare(request)
        if app_name == "gate":
            return await self._phone(websocket, session, account)
        if app_name == "inspector":
            return await self._inspector_page(websocket, session, account)
        launch = launch_for(account, self.settings.apps)
        ticket = self.seats.ticket(launch.seat)
        running: _Running | None = None
        try:
            async with self.seats.turn(launch.seat, ticket) as mine:
                if not mine or websocket.closed or self.sessions.get(session.token) is None:
                    log.info(
                        "%s's %s not started: opened again or ended meanwhile",
                        account.name,
                        app_name,
                    )
                    await _close(websocket, "opened elsewhere")
                    return websocket
                await self._hand_over(launch.seat)
                running = self._start(session, launch, websocket)
                await running.app.start(*size_from_query(request.query))
            await relay(websocket, running.app)
        finally:
            if running is not None:
                await running.app.stop()
                if self.running.get(launch.seat) is running:
                    del self.running[launch.seat]
                why = running.ended or "tab closed"
                log.info("%s's %s closed: %s", account.name, app_name, why)
        return websocket

    async def _phone(
        self, websocket: web.WebSocketResponse, session: Session, account: Account
    ) -> web.WebSocketResponse:
        """A deputy's page: a websocket to the gate's hub, as long as the page is open."""
        assert account.gate is not None
        phone = Phone(websocket, session.token, account.name)
        self.phones.add(phone)
        hub = None
        try:
            hub = await self.gates.join(account.gate, phone, session.password)
            if self.sessions.get(session.token) is not None:
                await run_phone(websocket, hub, phone)
        finally:
            self.phones.discard(phone)
            if hub is not None:
                self.gates.leave(hub, phone)
            await phone.stop()
            log.info("%s's gate view closed: %s", account.name, phone.ended or "page closed")
        return websocket

    # the inspectors' and the Clerk's page: one hub for the event --------------------------

    async def handle_inspector_page(self, request: web.Request) -> web.Response:
        _, account = self._allowed(request, "inspector")
        socket = f"{'wss' if self.settings.tls else 'ws'}://{request.host}/ws/inspector"
        return _html(pages.inspector_page(event_id=self.settings.apps.event_id,
                     account=account.name, role=account.role, websocket_url=socket))  # fmt: skip

    async def _inspector_page(
        self, websocket: web.WebSocketResponse, session: Session, account: Account
    ) -> web.WebSocketResponse:
        page = Phone(websocket, session.token, account.name)
        self.phones.add(page)  # a sign-out closes it as it closes a deputy's page
        try:
            await self.inspectors.serve(websocket, page, account, session, self.sessions)
        finally:
            self.phones.discard(page)
        return websocket

    async def _hand_over(self, seat: str) -> None:
        """End the seat's running app, and wait until its process has exited."""
        previous = self.running.pop(seat, None)
        if previous is not None:
            previous.ended = "opened elsewhere"
            await _close(previous.websocket, "opened elsewhere")
            await previous.app.stop()

    def _start(
        self, session: Session, launch: Launch, websocket: web.WebSocketResponse
    ) -> _Running:
        """The seat's new app, registered before it starts, so a sweep can find it."""
        app = PersonApp(
            launch,
            session.password,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=_closer(websocket),
            download_manager=self.downloads,
            memory_mb=self.settings.apps.memory_mb,
        )
        running = _Running(session.token, app, websocket)
        self.running[launch.seat] = running
        return running


async def _close(
    websocket: web.WebSocketResponse, why: str, *, code: int = WSCloseCode.GOING_AWAY
) -> None:
    """Close a websocket, waiting for its browser a few seconds at most."""
    with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
        await asyncio.wait_for(websocket.close(code=code, message=why.encode()), _CLOSE_WAIT_S)


def _closer(websocket: web.WebSocketResponse) -> Callable[[], Awaitable[None]]:
    """``websocket.close`` as textual-serve calls it, answering nothing (aiohttp's answers
    whether it closed now)."""

    async def close() -> None:
        await websocket.close()

    return close


def _redirect(location: str) -> web.Response:
    return web.Response(status=303, headers={"Location": location})


def _html(text: str, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", headers=headers)


def serve_forever(
    settings: ServeSettings,
    host: str,
    port: int,
    *,
    ssl_context: ssl.SSLContext | None = None,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Run the server until SIGINT or SIGTERM; then end every app and return.

    Connections are taken by :mod:`kent_ops.web.connections` (a cap per address, a
    deadline for the TLS handshake and for each request's head); ``announce`` gets the
    URL once the server listens.
    """
    server = WebServer(settings)
    app = server.make_app()
    url = f"{'https' if settings.tls else 'http'}://{_url_host(host)}:{port}/"
    run_app(
        app,
        host,
        port,
        ssl_context=ssl_context,
        shutdown_timeout=10,
        listening=(lambda: announce(url)) if announce is not None else None,
    )


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
