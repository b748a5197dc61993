"""One signed-in person cannot take the command post's memory, nor a gate's tally.

A real ``kent-ops serve`` over HTTPS in front of a Mosquitto with the ACL of
``kent-ops deploy acl`` and a running aggregator (tests/web/field_support.py); the
attacks come from a signed-in account through aiohttp speaking textual-serve's
protocol (tests/web/tab_support.py), and what they do is read where it happens: the
server's child processes in /proc, their memory and limits, and the aggregator's
status and evidence log.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from field_support import TOPICS, Field, alive, apps_of, password
from tab_support import Tab, browser_like, sign_in, until

from kent_ops.web.apps import APP_MEMORY_MB
from kent_ops.web.relay import MOST_MESSAGE, MOST_ROWS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

DEPUTY_PW = password("deputy-north")
INSPECTOR_PW = password("inspector-insp-1")
TOO_BIG = 400 * 2**20
"""An app using more than this has been made to run away (it uses about 55 MiB)."""


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Field]:
    f = Field(tmp_path_factory.mktemp("field"))
    try:
        yield f
    finally:
        f.close()


@pytest.fixture(scope="module")
def served(field: Field) -> tuple[str, subprocess.Popen[bytes]]:
    return field.serve()


def status_of(field: Field, gate: str) -> dict[str, Any]:
    status = field.watcher.json(TOPICS.status) or {}
    return status.get("gates", {}).get(gate) or {}


def counter_resets(field: Field) -> list[str]:
    """The counter-reset alerts in the evidence log, read as the report reads it."""
    path = field.root / "evidence.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as log:
        rows = log.execute("SELECT payload FROM records WHERE kind = 'alert'").fetchall()
    return [bytes(p).decode() for (p,) in rows if b'"counter-reset"' in bytes(p)]


def memory(pid: int) -> int:
    """The process's data (heap) in bytes, as RLIMIT_DATA counts it (VmData)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmData:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmData for {pid}")


def data_limit(pid: int) -> str:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max data size"):
            return line.split()[3]
    raise AssertionError(f"no data limit for {pid}")


async def test_twenty_tabs_at_once_leave_one_app_and_the_tally_counts_on(
    field: Field, served: tuple[str, subprocess.Popen[bytes]]
) -> None:
    base, server = served
    async with browser_like(base) as client:
        await sign_in(client, base, "jsmith", DEPUTY_PW)
        tabs = await asyncio.gather(*(Tab.open(client, base, "gate") for _ in range(20)))

        def settled() -> list[Tab]:
            left = [t for t in tabs if not t.closed]
            drawn = len(left) == 1 and "Manual tally" in left[0].text()
            return left if drawn and len(apps_of(server, "gate")) == 1 else []

        (tab,) = await until(settled, 90, "one tab, drawn by one gate app, left of twenty")
        # The other nineteen were told why: 1001, "going away" (opened elsewhere).
        assert [t.close_code for t in tabs if t is not tab] == [1001] * 19
        for counted in (1, 2):
            await tab.send("stdin", "+")
            await until(lambda n=counted: status_of(field, "north-manual").get("in") == n,
                        20, f"the aggregator to count tap {counted}")  # fmt: skip
        (pid,) = apps_of(server, "gate")

        # Opened again (another phone at the gate): the old app ends, and only then
        # the new one starts, reading the tally where the old one left it.
        again = await Tab.open(client, base, "gate")
        await until(lambda: tab.closed and not alive(pid), 30, "the older app to end")
        await until(lambda: "Manual tally" in again.text(), 30, "the new gate view drawn")
        await again.send("stdin", "+")
        await until(lambda: status_of(field, "north-manual").get("in") == 3, 20, "tap 3")
        assert len(apps_of(server, "gate")) == 1
        await again.close()
    manual = status_of(field, "north-manual")
    assert (manual["in"], manual["restarts"]) == (3, 0)
    assert counter_resets(field) == []


async def test_a_huge_terminal_is_drawn_at_most_500_by_200_in_bounded_memory(
    served: tuple[str, subprocess.Popen[bytes]],
) -> None:
    base, server = served
    async with browser_like(base) as client:
        await sign_in(client, base, "insp-1", INSPECTOR_PW)
        tab = await Tab.open(client, base, "dashboard", "?width=80&height=24")
        await until(lambda: "insp-1" in tab.text(), 30, "the dashboard drawn")
        (pid,) = apps_of(server, "dashboard", "insp-1")
        mark = len(tab.drawn)
        await tab.send("resize", {"width": 100_000, "height": 100_000})

        def redrawn_at_most_size() -> bool:
            used = memory(pid)
            assert used < TOO_BIG, f"the app grew to {used / 2**20:.0f} MiB"
            return max(tab.rows_drawn(mark), default=0) >= MOST_ROWS

        await until(redrawn_at_most_size, 60, f"the dashboard redrawn {MOST_ROWS} rows tall")
        assert max(tab.rows_drawn(mark)) == MOST_ROWS
        assert memory(pid) < TOO_BIG
        # Should a way round the bounds be found, the app fails alone at its limit.
        assert data_limit(pid) == str(APP_MEMORY_MB * 2**20)
        await tab.close()
        await until(lambda: not alive(pid), 30, "the app to end with its tab")


async def test_malformed_messages_are_ignored_and_a_huge_one_closes_the_tab(
    served: tuple[str, subprocess.Popen[bytes]],
) -> None:
    base, server = served
    async with browser_like(base) as client:
        await sign_in(client, base, "insp-1", INSPECTOR_PW)
        tab = await Tab.open(client, base, "dashboard")
        await until(lambda: apps_of(server, "dashboard", "insp-1"), 30, "the app started")
        (pid,) = apps_of(server, "dashboard", "insp-1")
        for junk in (
            "not json",
            "[" * 30_000 + "]" * 30_000,  # deeper than Python's parser goes
            '["resize", {"width": 1e400, "height": 1e400}]',  # infinity, once parsed
            '["resize", {"width": true, "height": "24"}]',
            '["stdin", {"keys": "q"}]',
            '["ping", "' + "x" * 1000 + '"]',
            '{"stdin": "q"}',
            "[]",
            "[1, 2]",
        ):
            await tab.websocket.send_str(junk)
        await tab.send("ping", "still here")
        await until(lambda: '["pong", "still here"]' in tab.texts, 20, "the pong")
        assert alive(pid)

        await tab.websocket.send_str('["stdin", "' + "x" * (2 * MOST_MESSAGE) + '"]')
        await until(lambda: tab.closed, 20, "the websocket closed for a message too big")
        assert tab.close_code == 1009
        await until(lambda: not alive(pid), 30, "the app to end with its tab")
