"""The web server over real HTTP, in process, without starting any app.

Sign-in, the cookie's flags, refusals (wrong password, too many failures, another
role's app, a websocket or a form post from another origin), the headers every
response carries, and which process each role would get: argv without the password,
the password in the environment only. Requests from another address come from
127.0.0.2 (the whole of 127/8 is the loopback).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession, CookieJar, TCPConnector, WSServerHandshakeError
from aiohttp.test_utils import TestServer
from yarl import URL

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.credentials import ENV_PASSWORD, ENV_URL
from kent_ops.web.accounts import KdfCost, make_account, save_accounts
from kent_ops.web.apps import AppConfig, PersonApp, launch_for
from kent_ops.web.server import COOKIE, ServeSettings, WebServer
from kent_ops.web.throttle import SignInThrottle

CHEAP = KdfCost(n=2**10, r=8, p=1)
EVENT = "kent-summer-fest-2027"
CONFIG = AppConfig(EVENT, parse_broker_url("mqtts://broker.local:8883"), ca_file="/etc/ca.crt")


class Clock:
    """The throttle's clock, moved by the test: waits pass without sleeping."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def users(tmp_path: Path) -> Path:
    path = tmp_path / "users.json"
    save_accounts(
        path,
        {
            "insp-1": make_account("insp-1", "inspector", "insp pw", cost=CHEAP),
            "jsmith": make_account("jsmith", "deputy", "north pw", gate="north", cost=CHEAP),
        },
    )
    return path


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def server(users: Path, clock: Clock) -> AsyncIterator[tuple[TestServer, WebServer]]:
    web = WebServer(
        ServeSettings(apps=CONFIG, users_file=users, session_s=600),
        throttle=SignInThrottle(first_s=30, clock=clock),
    )
    test_server = TestServer(web.make_app(), host="127.0.0.1")
    await test_server.start_server()
    yield test_server, web
    await test_server.close()


def _client(base: str, *, address: str = "127.0.0.1", origin: str | None = None) -> ClientSession:
    """A browser-like client: it keeps cookies from an IP address and says where its
    posts come from (``Origin``), from ``address``."""
    return ClientSession(
        cookie_jar=CookieJar(unsafe=True),
        headers={"Origin": origin or base},
        connector=TCPConnector(local_addr=(address, 0)),
    )


def _base(test_server: TestServer) -> str:
    return str(test_server.make_url("")).rstrip("/")


async def _sign_in(client: ClientSession, base: str, name: str, password: str) -> int:
    async with client.post(
        f"{base}/signin", data={"name": name, "password": password}, allow_redirects=False
    ) as response:
        return response.status


async def test_signing_in_sets_a_private_cookie_and_sends_each_to_their_app(
    server: tuple[TestServer, WebServer],
) -> None:
    test_server, _ = server
    base = _base(test_server)
    async with _client(base) as client:
        async with client.get(f"{base}/", allow_redirects=False) as response:
            assert (response.status, response.headers["Location"]) == (303, "/signin")
        async with client.post(
            f"{base}/signin", data={"name": "insp-1", "password": "insp pw"}, allow_redirects=False
        ) as response:
            assert (response.status, response.headers["Location"]) == (303, "/dashboard")
            cookie = response.headers["Set-Cookie"]
        assert re.search(r"HttpOnly", cookie)
        assert "SameSite=Strict" in cookie
        assert "Max-Age=600" in cookie
        async with client.get(f"{base}/dashboard") as response:
            page = await response.text()
            assert response.status == 200
            assert response.headers["Cache-Control"] == "no-store"
        assert f'data-session-websocket-url="ws://{test_server.host}:' in page
        assert "/static/js/textual.js" in page
        async with client.get(f"{base}/gate", allow_redirects=False) as response:
            assert response.status == 403  # an inspector has no gate view
            assert "your app is the dashboard" in await response.text()
        async with client.post(f"{base}/signout", allow_redirects=False) as response:
            assert response.status == 200
        async with client.get(f"{base}/dashboard", allow_redirects=False) as response:
            assert (response.status, response.headers["Location"]) == (303, "/signin")


async def test_a_wrong_password_is_refused_and_the_next_try_must_wait(
    server: tuple[TestServer, WebServer],
) -> None:
    test_server, web = server
    base = _base(test_server)
    async with _client(base) as client:
        assert await _sign_in(client, base, "jsmith", "guess") == 401
        assert await _sign_in(client, base, "jsmith", "north pw") == 429  # even the right one
        async with client.post(
            f"{base}/signin", data={"name": "insp-1", "password": "x"}
        ) as response:
            assert response.status == 429  # this address waits too
            assert int(response.headers["Retry-After"]) > 0
            assert "try again in" in await response.text()
        assert COOKIE not in {c.key for c in client.cookie_jar}
    assert web.throttle.failures(("name", "jsmith", "127.0.0.1")) == 1
    assert len(web.sessions) == 0


async def test_websockets_need_a_session_and_the_same_origin(
    server: tuple[TestServer, WebServer],
) -> None:
    test_server, _ = server
    base = _base(test_server)
    ws_url = base.replace("http", "ws") + "/ws/gate"
    host = test_server.make_url("").host
    async with _client(base) as client:
        with pytest.raises(WSServerHandshakeError) as refused:
            await client.ws_connect(ws_url, origin=f"http://{host}:{test_server.port}")
        assert refused.value.status == 401
        assert await _sign_in(client, base, "jsmith", "north pw") == 303
        with pytest.raises(WSServerHandshakeError) as foreign:
            await client.ws_connect(ws_url, origin="https://evil.example")
        assert foreign.value.status == 403
        with pytest.raises(WSServerHandshakeError) as other_app:
            await client.ws_connect(
                ws_url.replace("/gate", "/dashboard"), origin=f"http://{host}:{test_server.port}"
            )
        assert other_app.value.status in (303, 403)


async def test_a_sign_in_posted_by_another_site_is_refused(
    server: tuple[TestServer, WebServer],
) -> None:
    """Login CSRF: a page elsewhere posts the form with its author's name and password."""
    test_server, web = server
    base = _base(test_server)
    attacker = {"name": "jsmith", "password": "north pw"}
    for origin in ("https://evil.example", "null", f"http://127.0.0.1:{test_server.port + 1}"):
        async with (
            _client(base, origin=origin) as victim,
            victim.post(f"{base}/signin", data=attacker, allow_redirects=False) as r,
        ):
            assert r.status == 403
            assert "another site" in await r.text()
            assert "Set-Cookie" not in r.headers
    async with ClientSession() as bare:  # neither Origin nor Referer: refused too
        async with bare.post(f"{base}/signin", data=attacker, allow_redirects=False) as r:
            assert r.status == 403
        referer = {"Referer": f"{base}/signin"}  # a browser that sends no Origin
        async with bare.post(
            f"{base}/signin", data=attacker, headers=referer, allow_redirects=False
        ) as r:
            assert r.status == 303
    assert len(web.sessions) == 1  # the one sign-in from this site's own page
    async with _client(base) as person, _client(base, origin="https://evil.example") as evil:
        assert await _sign_in(person, base, "insp-1", "insp pw") == 303
        token = next(c.value for c in person.cookie_jar if c.key == COOKIE)
        evil.cookie_jar.update_cookies({COOKIE: token})
        async with evil.post(f"{base}/signout", allow_redirects=False) as r:
            assert r.status == 403  # a page elsewhere cannot sign anyone out either
        assert web.sessions.get(token) is not None


async def test_a_session_cookie_planted_before_sign_in_is_never_the_session(
    server: tuple[TestServer, WebServer],
) -> None:
    """Session fixation: the token is the server's, new at each sign-in, never the browser's."""
    test_server, web = server
    base = _base(test_server)
    async with _client(base) as client:
        client.cookie_jar.update_cookies({COOKIE: "planted-by-someone-else"})
        async with client.post(
            f"{base}/signin", data={"name": "insp-1", "password": "insp pw"}, allow_redirects=False
        ) as response:
            assert response.status == 303
            token = response.cookies[COOKIE].value
    assert token != "planted-by-someone-else"
    assert web.sessions.get("planted-by-someone-else") is None
    assert web.sessions.get(token) is not None


async def test_every_response_carries_the_security_headers(
    server: tuple[TestServer, WebServer],
) -> None:
    test_server, _ = server
    base = _base(test_server)
    host = f"127.0.0.1:{test_server.port}"
    async with _client(base) as client:
        for path in ("/signin", "/static/js/textual.js", "/nowhere", "/gate"):
            async with client.get(f"{base}{path}", allow_redirects=False) as response:
                headers = response.headers
                csp = headers["Content-Security-Policy"]
                assert "default-src 'none'" in csp
                assert "frame-ancestors 'none'" in csp
                assert f"connect-src 'self' ws://{host}" in csp
                assert "script-src 'self' 'sha256-" in csp
                assert headers["X-Content-Type-Options"] == "nosniff"
                assert headers["X-Frame-Options"] == "DENY"
                assert headers["Referrer-Policy"] == "same-origin"
                assert headers["Server"] == "kent-ops"
                assert "Strict-Transport-Security" not in headers  # plain HTTP: no HSTS
        assert await _sign_in(client, base, "jsmith", "north pw") == 303
        async with client.get(f"{base}/gate") as response:
            page = await response.text()
            assert response.headers["Server"] == "kent-ops"
    # The gate page runs no inline script: its scripts are files of this server.
    assert re.findall(r"<script[^>]*>", page) == [
        '<script src="/assets/phone.js" defer>', '<script src="/assets/gate.js" defer>'
    ]  # fmt: skip
    assert "<script>" not in page
    # aiohttp's own answer to a request it cannot parse names no version either.
    reader, writer = await asyncio.open_connection("127.0.0.1", test_server.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
    answer = (await reader.read(4096)).decode("latin-1")
    writer.close()
    assert " 400 Bad Request" in answer.splitlines()[0]
    assert "aiohttp" not in answer
    assert "Server: kent-ops" in answer


async def test_guesses_from_one_address_never_lock_the_person_out_from_another(
    server: tuple[TestServer, WebServer], clock: Clock
) -> None:
    test_server, web = server
    base = _base(test_server)
    async with _client(base, address="127.0.0.2") as guesser:
        for guess in range(20):
            clock.now += web.throttle.wait_s(web.throttle.keys("jsmith", "127.0.0.2"))
            assert await _sign_in(guesser, base, "jsmith", f"guess {guess}") == 401
            assert await _sign_in(guesser, base, "jsmith", "north pw") == 429  # slowed down
    # The guesser now waits 5 minutes; the real deputy, from their own phone, does not.
    async with _client(base) as person:
        assert await _sign_in(person, base, "jsmith", "north pw") == 303
        async with person.get(f"{base}/", allow_redirects=False) as response:
            assert response.headers["Location"] == "/gate"
    assert web.throttle.failures(("address", "127.0.0.2")) == 20


async def test_a_guessers_own_sign_in_does_not_reset_their_wait(
    server: tuple[TestServer, WebServer], clock: Clock
) -> None:
    test_server, web = server
    base = _base(test_server)
    async with _client(base, address="127.0.0.2") as guesser:
        for guess in range(4):  # guessing the inspector's password: waits 30, 60, 120, 240 s
            assert await _sign_in(guesser, base, "insp-1", f"guess {guess}") == 401
            clock.now += web.throttle.wait_s(web.throttle.keys("insp-1", "127.0.0.2"))
        assert await _sign_in(guesser, base, "jsmith", "north pw") == 303  # their own account
        # Then on to another name: the wait goes on doubling from this address.
        assert await _sign_in(guesser, base, "insp-2", "guess") == 401
        async with guesser.post(
            f"{base}/signin", data={"name": "insp-3", "password": "guess"}
        ) as response:
            assert response.status == 429
            assert int(response.headers["Retry-After"]) == 300  # not back to 30 s
    assert web.throttle.failures(("address", "127.0.0.2")) == 5


def test_each_role_gets_its_own_app_and_no_password_on_its_command_line() -> None:
    inspector = make_account("insp-1", "inspector", "insp pw", cost=CHEAP)
    deputy = make_account("jsmith", "deputy", "north pw", gate="north", cost=CHEAP)
    clerk = make_account("clerk-1", "clerk", "clerk pw", cost=CHEAP)
    config = AppConfig(EVENT, CONFIG.broker, state_dir="/var/lib/kent-ops/tally", keys="/k.toml")
    argv = launch_for(inspector, config).argv
    assert argv[1:] == ("-m", "kent_ops", "dashboard", "--event", EVENT, "--inspector", "insp-1",
                        "--broker", "mqtts://inspector-insp-1@broker.local:8883")  # fmt: skip
    gate = launch_for(deputy, config)
    assert gate.argv[3:5] == ("gate", "north")
    assert "mqtts://deputy-north@broker.local:8883" in gate.argv
    assert gate.argv[-4:-2] == ("--state-dir", "/var/lib/kent-ops/tally")
    assert gate.seat == "gate:north"
    assert "--clerk" in launch_for(clerk, config).argv
    older = AppConfig(EVENT, CONFIG.broker, clerk_option="--inspector")
    assert launch_for(clerk, older).argv[6:8] == ("--inspector", "clerk-1")
    for account, password in ((inspector, "insp pw"), (deputy, "north pw")):
        assert not any(password in arg for arg in launch_for(account, config).argv)


async def test_the_app_gets_its_persons_password_in_its_environment_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_URL, "mqtt://kent-ops-aggregator:server-secret@127.0.0.1:1883")
    monkeypatch.setenv(ENV_PASSWORD, "server-secret")
    deputy = make_account("jsmith", "deputy", "north pw", gate="north", cost=CHEAP)

    async def nothing(_: object = None) -> None:
        return None

    app = PersonApp(launch_for(deputy, CONFIG), "north pw", write_bytes=nothing,
                    write_str=nothing, close=nothing, download_manager=None)  # type: ignore[arg-type]  # fmt: skip
    environment = app._build_environment(40, 45)
    assert environment[ENV_PASSWORD] == "north pw"
    assert ENV_URL not in environment  # the server's own broker login is not passed on
    assert "server-secret" not in " ".join(environment.values())
    assert environment["TEXTUAL_DRIVER"] == "textual.drivers.web_driver:WebDriver"


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/static/..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/static/%252e%252e/%252e%252e/etc/passwd",
    ],
)
async def test_no_path_leaves_the_static_folder(
    server: tuple[TestServer, WebServer], path: str
) -> None:
    """Path traversal: only textual-serve's own front end is ever served from disk."""
    test_server, _ = server
    base = _base(test_server)
    async with (
        ClientSession() as client,
        client.get(URL(f"{base}{path}", encoded=True), allow_redirects=False) as response,
    ):
        body = await response.read()
    assert response.status in (403, 404)
    assert b"root:" not in body
