"""One signed-in person cannot take the command post's memory, nor miscount a gate's tally.

A real ``kent-ops serve`` over HTTPS in front of a Mosquitto with the ACL of
``kent-ops deploy acl`` and a running aggregator (tests/web/field_support.py); the
attacks come from a signed-in account through aiohttp speaking textual-serve's
protocol, or the deputy's page's (tests/web/tab_support.py), and what they do is read
where it happens: the
server's child processes in /proc, their memory and limits, and the aggregator's
status and evidence log.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
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


def status_of(field: Field, gate: str) -> dict[str, Any]:
    status = field.watcher.json(TOPICS.status) or {}
    return status.get("gates", {}).get(gate) or {}


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


def views(tab: Tab) -> list[dict[str, Any]]:
    """The gate views a deputy's page was sent."""
    return [m["view"] for m in map(json.loads, tab.texts) if "view" in m]


def notes(tab: Tab, kind: str) -> list[Any]:
    return [m[kind] for m in map(json.loads, tab.texts) if kind in m]


async def test_twenty_phones_at_one_gate_share_its_hub_and_each_tap_counts_once(
    field: Field, served: tuple[str, subprocess.Popen[bytes]]
) -> None:
    base, server = served
    async with browser_like(base) as client:
        await sign_in(client, base, "jsmith", DEPUTY_PW)
        tabs = await asyncio.gather(*(Tab.open(client, base, "gate") for _ in range(20)))
        await until(lambda: all(views(t) for t in tabs), 60, "a view on each of twenty phones")
        assert not any(t.closed for t in tabs)  # no phone closes another
        assert apps_of(server, "gate") == []  # and none costs a process
        before = status_of(field, "north-manual")
        base_in, base_out = before.get("in", 0), before.get("out", 0)
        for number, tab in enumerate(tabs[:5]):
            await tab.send_json({"taps": [{"id": f"tap-{number:04d}-bounds", "d": "in"}]})
        # The same tap again, from another phone and twice in one message: not counted again.
        await tabs[5].send_json({"taps": [{"id": "tap-0000-bounds", "d": "in"}] * 2})
        await tabs[6].send_json({"taps": [{"id": "tap-0006-bounds", "d": "out"}]})
        await until(lambda: all(notes(t, "counted") for t in tabs[:7]), 30, "each counted")
        await until(lambda: status_of(field, "north-manual").get("in") == base_in + 5
                    and status_of(field, "north-manual").get("out") == base_out + 1,
                    20, "the aggregator to count six taps")  # fmt: skip
        assert notes(tabs[5], "counted") == [["tap-0000-bounds"]]  # once, though sent twice
        for junk in (
            "not json", "[" * 30_000 + "]" * 30_000, '{"taps": "many"}',
            '{"taps": [{"id": "x", "d": "in"}]}',
            '{"taps": [{"id": "tap-0007-bounds", "d": "up"}]}',
            '{"taps": ' + json.dumps([{"id": f"t-{i:06d}-x", "d": "in"} for i in range(501)]) + "}",
            '{"ping": ' + json.dumps("x" * 1000) + "}", "[]", "3",
        ):  # fmt: skip
            await tabs[7].websocket.send_str(junk)
        await tabs[7].send_json({"ping": "still here"})
        await until(lambda: "still here" in notes(tabs[7], "pong"), 20, "the pong")
        assert not tabs[7].closed
        await tabs[8].websocket.send_str('{"taps": "' + "x" * (2 * MOST_MESSAGE) + '"}')
        await until(lambda: tabs[8].closed, 20, "the websocket closed for a message too big")
        assert tabs[8].close_code == 1009
        await asyncio.sleep(0)
        for tab in tabs:
            if not tab.closed:
                await tab.close()
    manual = status_of(field, "north-manual")
    assert (manual["in"], manual["out"], manual["restarts"]) == (base_in + 5, base_out + 1, 0)
    assert field.counter_resets() == []


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


def tally_offline(field: Field) -> bool:
    """No hub of the module's server holds the north tally now: none ever announced it
    (this test may run first, or alone, on its worker), or the last one said goodbye."""
    said = [p for t, p in field.watcher.history if t == TOPICS.availability("north-manual")]
    return not said or said[-1] == b"offline"


@pytest.mark.slow
async def test_a_tap_sent_again_after_serve_restarts_is_counted_once(field: Field) -> None:
    # Whatever hub of the module's server counted at north has said goodbye first: one
    # tally file, one hub at a time.
    await until(lambda: tally_offline(field), 60, "the north tally's earlier hub to end")
    first_base, first = field.serve("serve-before-restart")
    async with browser_like(first_base) as client:
        await sign_in(client, first_base, "jsmith", DEPUTY_PW)
        tab = await Tab.open(client, first_base, "gate")
        await until(lambda: views(tab) and views(tab)[-1]["can_count"], 30, "the gate's view")
        before = status_of(field, "north-manual")
        base_in = before.get("in", 0)
        await tab.send_json({"taps": [{"id": "restart-tap-0001", "d": "in"}]})
        await until(lambda: notes(tab, "counted"), 20, "the tap counted")
        await until(lambda: status_of(field, "north-manual").get("in") == base_in + 1, 20,
                    "the tap counted")  # fmt: skip
        await tab.close()
    first.terminate()  # the phone never heard "counted" (say): it sends the tap again
    assert first.wait(30) == 0
    await until(lambda: tally_offline(field), 20, "the first server's hub to say goodbye")
    again_base, _ = field.serve("serve-after-restart")
    async with browser_like(again_base) as client:
        await sign_in(client, again_base, "jsmith", DEPUTY_PW)
        tab = await Tab.open(client, again_base, "gate")
        await until(lambda: views(tab) and views(tab)[-1]["can_count"], 30, "the gate's view")
        await tab.send_json({"taps": [{"id": "restart-tap-0001", "d": "in"}]})
        await until(lambda: notes(tab, "counted") == [["restart-tap-0001"]], 20,
                    "the repeat said to be counted")  # fmt: skip
        await tab.send_json({"taps": [{"id": "restart-tap-0002", "d": "in"}]})
        await until(lambda: len(notes(tab, "counted")) == 2, 20, "the next tap counted")
        await until(lambda: status_of(field, "north-manual").get("in") == base_in + 2, 20,
                    "the next tap counted")  # fmt: skip
        await tab.close()
    assert status_of(field, "north-manual").get("in") == base_in + 2  # the repeat: not again
    assert field.counter_resets() == []
