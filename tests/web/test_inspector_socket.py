"""The inspectors' hub over its websocket, as a page speaks to it, without a browser.

A real ``kent-ops serve`` in front of a Mosquitto with the generated ACL and a running
aggregator (tests/web/field_support.py); an aiohttp client signs in like a browser and
speaks the page's protocol: what a page would never send (an id twice, another role's
action, a malformed message) and what only a hub can be asked (an action its page
already heard was delivered). Each person's actions go out with their own broker
account: one the broker refuses is held, and said so, and the hub reads the event with
another person's account meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import ClientSession, ClientWebSocketResponse, WSMsgType
from field_support import HOLD_AT, TOPICS, Field, password
from tab_support import browser_like, insecure, until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def field(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Field]:
    with Field(tmp_path_factory.mktemp("field")) as f:
        f.north_net(HOLD_AT + 10)
        yield f


class Page:
    """One page's websocket: everything it was sent, in order."""

    def __init__(self, ws: ClientWebSocketResponse) -> None:
        self.ws = ws
        self.views: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []
        self.closed: int | None = None
        """The close code, once the server closed it."""
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        while True:
            message = await self.ws.receive()
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                (self.views if "view" in data else self.notes).append(data)
            elif message.type == WSMsgType.CLOSE:
                self.closed = int(message.data)  # the code the server sent
                return
            elif message.type in (WSMsgType.CLOSED, WSMsgType.CLOSING, WSMsgType.ERROR):
                self.closed = self.ws.close_code
                return

    def answers(self, action_id: str) -> list[dict[str, Any]]:
        return [a for n in self.notes for a in n.get("actions", []) if a["id"] == action_id]

    def state(self, action_id: str) -> str | None:
        found = self.answers(action_id)
        return found[-1]["state"] if found else None

    async def send(self, *actions: dict[str, Any]) -> None:
        await self.ws.send_json({"actions": list(actions)})


async def open_page(client: ClientSession, base: str, name: str, pw: str) -> Page:
    async with client.post(
        f"{base}/signin", data={"name": name, "password": pw, "width": "390"},
        ssl=insecure(), allow_redirects=False,
    ) as response:  # fmt: skip
        assert response.status == 303
        assert response.headers["Location"] == "/inspector", "a phone's screen: the page"
    url = base.replace("https", "wss") + "/ws/inspector"
    ws = await client.ws_connect(url, ssl=insecure(), origin=base)
    return Page(ws)


def note(action_id: str, text: str, **more: Any) -> dict[str, Any]:
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
    return {"id": action_id, "kind": "note", "ts": stamp, "text": text, **more}


def notes_logged(field: Field, text: str) -> int:
    return sum(1 for _, n in field.logged(TOPICS.inspector("insp-1", "note")) if n["text"] == text)


async def test_an_action_is_published_once_however_often_it_comes(
    field: Field, served: tuple[str, subprocess.Popen[bytes]]
) -> None:
    base, _ = served
    async with browser_like(base) as client:
        page = await open_page(client, base, "insp-1", password("inspector-insp-1"))
        await until(lambda: page.views and page.views[-1]["view"]["figures"], 30, "the view")
        first = page.views[-1]
        assert first["sensor"] is False
        assert abs(datetime.fromisoformat(first["now"]) - datetime.now(UTC)).total_seconds() < 5
        action = note("once-only-0001", "sent three times, published once")
        await page.send(action)
        await page.send(action, action)  # the page resent it: its answer was lost
        await until(lambda: page.state("once-only-0001") == "recorded", 30, "recorded")
        assert len(page.answers("once-only-0001")) >= 3, "each coming is answered"
        await page.send(action)  # after its record: answered as recorded, not published
        await until(lambda: len(page.answers("once-only-0001")) >= 4, 10, "the 4th answer")
        assert page.state("once-only-0001") == "recorded"
        assert notes_logged(field, "sent three times, published once") == 1

        # A page that heard it was delivered (a hub before a restart): followed, not sent.
        await page.send(note("followed-0002", "never published", delivered=True))
        await until(lambda: page.state("followed-0002"), 10, "its answer")
        assert page.state("followed-0002") == "delivered"

        # Another role's action is refused here, as the broker would; nothing is sent.
        clerk = {"id": "not-mine-0003", "kind": "clerk-permit", "status": "revoked",
                 "resolution": "TB-1", "ts": action["ts"]}  # fmt: skip
        await page.send(clerk, note("no-text-0004", "   "))
        await until(lambda: page.state("no-text-0004"), 10, "the answers")
        assert page.answers("not-mine-0003")[-1] == {
            "id": "not-mine-0003", "state": "refused",
            "why": "not sent: only the Town Clerk changes the permit",
        }  # fmt: skip
        assert page.answers("no-text-0004")[-1]["why"] == "not sent: a note needs its text"
        # Malformed: ignored, and the page still answered.
        await page.ws.send_str("{not json")
        await page.ws.send_json({"actions": [{"id": "x", "kind": "note"}]})
        await page.ws.send_json({"ping": 7})
        await until(lambda: {"pong": 7} in page.notes, 10, "the pong")
        # A note sent after them all is recorded: what came before and was not sent, never is.
        await page.send(note("sentinel-0006", "sent after the refusals"))
        await until(lambda: page.state("sentinel-0006") == "recorded", 30, "the last one")
        await page.ws.close()
    assert field.logged(TOPICS.clerk_permit("insp-1")) == []
    assert notes_logged(field, "never published") == 0
    assert notes_logged(field, "   ") == 0


async def test_a_refused_account_is_held_and_said_and_a_sign_out_ends_the_page(
    field: Field, served: tuple[str, subprocess.Popen[bytes]]
) -> None:
    base, _ = served
    async with browser_like(base) as bad_client, browser_like(base) as good_client:
        bad = await open_page(bad_client, base, "insp-bad", "not a broker password")

        def refused() -> bool:
            accounts = [n["account"] for n in bad.notes if "account" in n]
            return bool(accounts) and "not authorised as inspector-insp-bad" in str(
                accounts[-1].get("problem")
            )

        await until(refused, 30, "the refusal of insp-bad's own account said")
        # The hub reads the event with a signed-in account the broker takes.
        good = await open_page(good_client, base, "insp-1", password("inspector-insp-1"))
        await until(lambda: good.views and good.views[-1]["view"]["figures"], 30, "the view")
        await until(lambda: bad.views and bad.views[-1]["view"]["figures"], 30, "its view too")
        await bad.send(note("held-0005", "kept on the phone"))
        await until(lambda: bad.state("held-0005"), 10, "the answer")
        answer = bad.answers("held-0005")[-1]
        assert answer["state"] == "held"
        assert "not authorised as inspector-insp-bad" in answer["why"]
        async with good_client.post(f"{base}/signout", ssl=insecure()) as response:
            assert response.status == 200
        await until(lambda: good.closed is not None, 15, "the page closed")
        assert good.closed == 4001, "told it was signed out: it stops reconnecting"
        await bad.ws.close()
    assert field.logged(TOPICS.inspector("insp-bad", "note")) == []


async def test_a_deputy_may_not_open_the_inspectors_page(
    field: Field, served: tuple[str, subprocess.Popen[bytes]]
) -> None:
    base, _ = served
    async with browser_like(base) as client:
        async with client.post(
            f"{base}/signin", data={"name": "jsmith", "password": password("deputy-north"),
                                    "width": "390"}, ssl=insecure(), allow_redirects=False,
        ) as response:  # fmt: skip
            assert response.headers["Location"] == "/gate"
        async with client.get(f"{base}/inspector", ssl=insecure()) as response:
            assert response.status == 403
        url = base.replace("https", "wss") + "/ws/inspector"
        with pytest.raises(Exception, match="403"):
            await client.ws_connect(url, ssl=insecure(), origin=base)
