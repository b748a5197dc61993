"""The web server over real HTTP, in process, without starting any app.

Sign-in, the cookie's flags, refusals (wrong password, too many failures, another
role's app, a websocket from another origin), and which process each role would get:
argv without the password, the password in the environment only.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession, CookieJar, WSServerHandshakeError
from aiohttp.test_utils import TestServer

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.credentials import ENV_PASSWORD, ENV_URL
from kent_ops.web.accounts import KdfCost, make_account, save_accounts
from kent_ops.web.apps import AppConfig, PersonApp, launch_for
from kent_ops.web.server import COOKIE, ServeSettings, WebServer
from kent_ops.web.throttle import SignInThrottle

CHEAP = KdfCost(n=2**10, r=8, p=1)
EVENT = "kent-summer-fest-2027"
CONFIG = AppConfig(EVENT, parse_broker_url("mqtts://broker.local:8883"), ca_file="/etc/ca.crt")


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
async def server(users: Path) -> AsyncIterator[tuple[TestServer, WebServer]]:
    web = WebServer(
        ServeSettings(apps=CONFIG, users_file=users, session_s=600),
        throttle=SignInThrottle(first_s=30),
    )
    test_server = TestServer(web.make_app())
    await test_server.start_server()
    yield test_server, web
    await test_server.close()


def _client() -> ClientSession:
    """A client that keeps cookies from an IP address (127.0.0.1), as browsers do."""
    return ClientSession(cookie_jar=CookieJar(unsafe=True))


async def _sign_in(client: ClientSession, base: str, name: str, password: str) -> int:
    async with client.post(
        f"{base}/signin", data={"name": name, "password": password}, allow_redirects=False
    ) as response:
        return response.status


async def test_signing_in_sets_a_private_cookie_and_sends_each_to_their_app(
    server: tuple[TestServer, WebServer],
) -> None:
    test_server, _ = server
    base = str(test_server.make_url("")).rstrip("/")
    async with _client() as client:
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
    base = str(test_server.make_url("")).rstrip("/")
    async with _client() as client:
        assert await _sign_in(client, base, "jsmith", "guess") == 401
        assert await _sign_in(client, base, "jsmith", "north pw") == 429  # even the right one
        async with client.post(
            f"{base}/signin", data={"name": "insp-1", "password": "x"}
        ) as response:
            assert response.status == 429  # this address waits too
            assert int(response.headers["Retry-After"]) > 0
            assert "try again in" in await response.text()
        assert COOKIE not in {c.key for c in client.cookie_jar}
    assert web.throttle.failures("account:jsmith") == 1
    assert len(web.sessions) == 0


async def test_websockets_need_a_session_and_the_same_origin(
    server: tuple[TestServer, WebServer],
) -> None:
    test_server, _ = server
    base = str(test_server.make_url("")).rstrip("/")
    ws_url = base.replace("http", "ws") + "/ws/gate"
    host = test_server.make_url("").host
    async with _client() as client:
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
