"""People's apps forked from the fork server (``serve --app-start fork``, the default).

A forked app must be what a started one was: the server's child, its command line
and environment as ``ps`` shows them (the password in the environment, not on the
command line), its memory cap, its first screen, its end when asked and when the
server dies; and it must share the fork server's imported code. No HTTP here (the
browser tests go through ``kent-ops serve``): the app service is driven as the
server's websocket handler drives it, and the app's broker is not running, so it
draws its screen and says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from live_support import wait_until_async

from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.credentials import ENV_PASSWORD
from kent_ops.web.accounts import KdfCost, make_account
from kent_ops.web.apps import AppConfig, PersonApp, launch_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

CHEAP = KdfCost(n=2**10, r=8, p=1)
PASSWORD = "pw insp-1 7!"


def facts(pid: int) -> tuple[int, list[bytes], list[bytes], str]:
    """The process's parent, command line, environment and limits, as ``ps`` reads them."""
    proc = Path(f"/proc/{pid}")
    parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    argv = (proc / "cmdline").read_bytes().split(b"\0")
    environment = (proc / "environ").read_bytes().split(b"\0")
    return parent, argv, environment, (proc / "limits").read_text()


def rollup(pid: int) -> dict[str, int]:
    lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]
    return {line.split(":")[0]: int(line.split()[1]) for line in lines}


def gone(pid: int) -> bool:
    """Not running and not a zombie waiting to be collected."""
    return not Path(f"/proc/{pid}").exists()


def dead(pid: int) -> bool:
    """Not running: gone, or a zombie (collected here if it is this process's orphan)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


async def until(check: Callable[[], object], within: float, what: str) -> None:
    await wait_until_async(check, within, what, every=0.02)


def person_app(start: str, drawn: bytearray, memory_mb: int = 256) -> PersonApp:
    config = AppConfig("kent-fest", parse_broker_url("mqtt://127.0.0.1:9"), start=start)
    account = make_account("insp-1", "inspector", PASSWORD, cost=CHEAP)

    async def write_bytes(data: bytes) -> None:
        drawn.extend(data)

    async def nothing(*_: object) -> None:
        return None

    return PersonApp(launch_for(account, config), PASSWORD, write_bytes=write_bytes,
                     write_str=nothing, close=nothing, download_manager=None,  # type: ignore[arg-type]
                     memory_mb=memory_mb)  # fmt: skip


@pytest.mark.parametrize("start", ["fork", "exec"])
async def test_an_app_is_the_servers_child_with_its_command_line_environment_and_cap(
    start: str,
) -> None:
    drawn = bytearray()
    app = person_app(start, drawn)
    await app.start(43, 40)
    try:
        await until(lambda: b"insp-1" in drawn, 60, "the first screen")
        pid = app.pid
        assert pid is not None
        parent, argv, environment, limits = facts(pid)
        assert parent == os.getpid()  # adopted by the server, as a started app is
        assert argv[1:8] == [b"-m", b"kent_ops", b"dashboard", b"--event", b"kent-fest",
                             b"--inspector", b"insp-1"]  # fmt: skip
        assert not any(PASSWORD.encode() in arg for arg in argv)
        assert f"{ENV_PASSWORD}={PASSWORD}".encode() in environment
        assert b"COLUMNS=43" in environment
        assert f"Max data size             {256 * 2**20}" in limits
    finally:
        await app.stop()
    await until(lambda: gone(pid), 10, "the app to end and be collected")


async def test_forked_apps_share_the_imported_code_with_the_fork_server() -> None:
    drawn = [bytearray(), bytearray()]
    apps = [person_app("fork", d) for d in drawn]
    for app in apps:
        await app.start(43, 40)
    try:
        await until(lambda: all(b"insp-1" in d for d in drawn), 60, "two first screens")
        for app in apps:
            assert app.pid is not None
            memory = rollup(app.pid)
            shared = memory["Shared_Clean"] + memory["Shared_Dirty"]
            assert shared > 10 * 1024, f"only {shared} KiB shared"  # Python, Textual, kent-ops
            assert memory["Pss"] < memory["Rss"] * 0.8
    finally:
        await asyncio.gather(*(app.stop() for app in apps))


SERVER = textwrap.dedent(
    """
    import asyncio, sys
    sys.path[:0] = [{tests!r}, {shared!r}]
    from test_app_fork import person_app

    async def main():
        drawn = bytearray()
        app = person_app("fork", drawn)
        await app.start(43, 40)
        while b"insp-1" not in drawn:
            await asyncio.sleep(0.02)
        from kent_ops.web.apps import FORK_SERVER
        print(app.pid, FORK_SERVER._process.pid, flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
    """
)


async def test_the_apps_and_the_fork_server_die_with_the_server() -> None:
    here = Path(__file__).parent
    script = SERVER.format(tests=str(here), shared=str(here.parent))
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert server.stdout is not None
        line = await asyncio.wait_for(server.stdout.readline(), 60)
        app_pid, fork_server_pid = (int(word) for word in line.split())
        assert not gone(app_pid)
        assert not gone(fork_server_pid)
        server.send_signal(signal.SIGKILL)  # no goodbye: only the death signal tells them
        await asyncio.wait_for(server.wait(), 10)
        await until(lambda: dead(fork_server_pid), 10, "the fork server to die with the server")
        await until(lambda: dead(app_pid), 10, "the app to die with the server")
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()


def test_serve_forks_by_default_and_starts_each_app_on_request() -> None:
    from kent_ops.commands.cli import build_parser
    from kent_ops.commands.serve import _app_config

    parser = build_parser()
    default = _app_config(parser.parse_args(["serve", "--event", "e"]))
    assert default.start == "fork"
    chosen = _app_config(parser.parse_args(["serve", "--event", "e", "--app-start", "exec"]))
    assert chosen.start == "exec"
    account = make_account("insp-1", "inspector", PASSWORD, cost=CHEAP)
    assert launch_for(account, default).fork
    assert not launch_for(account, chosen).fork
    with pytest.raises(SystemExit) as refused:
        parser.parse_args(["serve", "--event", "e", "--app-start", "spawn"])
    assert refused.value.code == 2
