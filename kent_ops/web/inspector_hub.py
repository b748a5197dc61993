"""The inspectors' and the Clerk's phones inside ``kent-ops serve``: one hub for the event.

A phone on the inspector's page costs the command post a websocket, not a process: the
hub holds one subscription for the whole event (:mod:`kent_ops.web.inspector_link`),
keeps the status, every alert and the connection state, makes the page's view with the
core's pure function (:func:`kent_ops.core.inspector_view.inspector_view`, drawn from
the same functions as the terminal's dashboard) and pushes it to every page: encoded
once, at most one every :attr:`InspectorSettings.push_gap_s`, only when it changed.

What a person does on the page (acknowledge, note, adjust, mark the checklist; the
Clerk's revocation or reinstatement) comes with an id; the hub publishes each id once,
with that person's own broker account (:mod:`kent_ops.web.person_link`: the access list
decides), and tells that person's pages how far it got: ``sent``, ``delivered`` (the
broker has it), ``recorded`` (the aggregator's status or alert carries it, found as the
terminal's dashboard finds it: :mod:`kent_ops.core.inspector_actions`), ``refused``
(never sent, or refused by the broker, with why), or ``held`` (the person's account is
refused: the page keeps it). The page keeps what is not yet delivered and sends it
again; a repeat is only answered.

One clock: the times the hub gives the page to stamp its actions with, and the Clerk's
``effective_at``, are the aggregator's when its status says ``"clock": "sensor"`` (a
rehearsal, the demo), the wall clock's otherwise.

The aggregator's evidence checkpoints arrive here too
(:meth:`InspectorHub.checkpoint_received`): the place where a witness file keeps each
one, as received (:attr:`InspectorSettings.witness`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Literal

import msgspec

from kent_ops.core import wire
from kent_ops.core.connection import ConnectionState
from kent_ops.core.display import event_zone, local_clock
from kent_ops.core.inspector_actions import (
    SentAction,
    action_topic,
    encode_action,
    recorded_entries,
    update_recorded,
)
from kent_ops.core.inspector_view import inspector_view
from kent_ops.web.apps import AppConfig
from kent_ops.web.gate_link import Heard, LinkChange
from kent_ops.web.inspector_link import InspectorLink
from kent_ops.web.page_actions import (
    PageAction,
    build_payload,
    kind_allowed,
    stamp_for,
)
from kent_ops.web.person_link import PersonLink, Publication
from kent_ops.web.phone import Phone

__all__ = ["InspectorHub", "InspectorSettings", "Person"]

log = logging.getLogger("kent-ops.serve")
_ENCODE = msgspec.json.Encoder().encode

State = Literal["sent", "delivered", "recorded", "refused", "held"]


@dataclass(frozen=True, slots=True)
class InspectorSettings:
    """How the inspectors' hub runs."""

    linger_s: float = 10.0
    """After the last page closes: a reload within it finds the hub still there."""
    push_gap_s: float = 0.2
    """At most one view a page this often: five a second."""
    tick_s: float = 1.0
    keep: int = 20_000
    """Action ids remembered (each person's, by id): a repeat is answered, not published."""
    person_linger_s: float = 30.0
    """A person's own connection stays this long after their last page (a reload)."""
    witness: Callable[[bytes], object] | None = None
    """Called with each evidence checkpoint's payload as received: the witness file's
    keeper (``--witness``) plugs in here."""


@dataclass(frozen=True, slots=True)
class Person:
    """Who a page is signed in as: their name, role, broker account and password."""

    name: str
    role: str
    user: str
    password: str = field(repr=False)
    session: str = field(repr=False)


@dataclass(slots=True)
class _Account:
    """A person with a page open: their own connection and their pages."""

    person: Person
    link: PersonLink
    pages: set[Phone] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)
    problem: str | None = None
    up: bool = False
    closing: asyncio.TimerHandle | None = None


@dataclass(slots=True)
class _Followed:
    """One action published (or refused), followed until the aggregator records it."""

    sent: SentAction | None
    publication: Publication | None
    state: State
    why: str | None = None
    at: str | None = None


class InspectorHub:
    """The event's status and alerts, the page's view, and each person's actions."""

    def __init__(self, apps: AppConfig, settings: InspectorSettings, first: Person) -> None:
        self.apps, self.settings = apps, settings
        self.topics = wire.Topics(apps.event_id)
        self.loop = asyncio.get_running_loop()
        self.pages: set[Phone] = set()
        self.status: wire.Status | None = None
        self.alerts: dict[str, wire.Alert] = {}
        self.checkpoint: wire.Checkpoint | None = None
        """The latest evidence checkpoint received (record and hash)."""
        self.followed_ts: datetime | None = None
        """The newest status time while the aggregator runs on its sensors' clock."""
        self.connection = ConnectionState(event_id=apps.event_id, broker_url=apps.broker.url)
        self.link = InspectorLink(
            self.topics, apps.broker, (first.user, first.password), loop=self.loop,
            on_heard=self._heard, on_change=self._changed, ca_file=apps.ca_file,
        )  # fmt: skip
        self.accounts: dict[str, _Account] = {}
        self.actions: OrderedDict[tuple[str, str], _Followed] = OrderedDict()
        self._open: set[tuple[str, str]] = set()
        """Actions not yet recorded, refused or forgotten: checked at each status."""
        self._wake = asyncio.Event()
        self._text: str | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.closed = False

    # lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        self.link.start()
        self._tasks = [
            asyncio.create_task(self._push(), name="inspectors-push"),
            asyncio.create_task(self._tick(), name="inspectors-tick"),
        ]

    async def close(self) -> None:
        """Stop pushing, and end the hub's connection and every person's."""
        self.closed = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        links = [a.link for a in self.accounts.values()]
        for account in self.accounts.values():
            if account.closing is not None:
                account.closing.cancel()
        self.accounts.clear()
        await asyncio.gather(
            self.loop.run_in_executor(None, self.link.stop),
            *(self.loop.run_in_executor(None, link.stop) for link in links),
        )

    # pages and people ------------------------------------------------------------------

    def join(self, page: Phone, person: Person) -> None:
        """A page opened: it gets the current view, and its person their own connection."""
        self.pages.add(page)
        self.link.add_account(person.session, (person.user, person.password))
        account = self.accounts.get(person.name)
        if account is None:
            link = PersonLink(
                person.user, self.apps.broker, person.password, loop=self.loop,
                on_change=partial(self._person_changed, person.name),
                on_answered=self._answered, ca_file=self.apps.ca_file,
            )  # fmt: skip
            account = self.accounts[person.name] = _Account(person, link)
            link.start()
        else:
            if account.closing is not None:
                account.closing.cancel()
                account.closing = None
            if person.session not in account.sessions:
                account.link.set_password(person.password)
        account.pages.add(page)
        account.sessions.add(person.session)
        if self._text is not None:  # the last view, with the clock the page stamps by
            page.show(self._message(self._text))
        page.say(self._account_note(account))
        self._wake.set()

    def leave(self, page: Phone, person: Person) -> None:
        """A page closed; a person with no page left loses their connection a little later."""
        self.pages.discard(page)
        if not any(p.token == page.token for p in self.pages):
            self.link.drop_account(page.token)
        account = self.accounts.get(person.name)
        if account is None:
            return
        account.pages.discard(page)
        if not any(p.token == page.token for p in account.pages):
            account.sessions.discard(page.token)
        if not account.pages and account.closing is None:
            account.closing = self.loop.call_later(
                self.settings.person_linger_s, self._end_account, person.name
            )

    def _end_account(self, name: str) -> None:
        account = self.accounts.get(name)
        if account is None or account.pages:
            return
        del self.accounts[name]
        self.loop.run_in_executor(None, account.link.stop)

    def _person_changed(self, name: str, up: bool, why: str | None) -> None:
        account = self.accounts.get(name)
        if account is None:
            return
        problem = f"The broker refused your account: {why}" if why else None
        if (up, problem) == (account.up, account.problem):
            return
        account.up, account.problem = up, problem
        note = self._account_note(account)
        for page in account.pages:
            page.say(note)

    @staticmethod
    def _account_note(account: _Account) -> dict[str, object]:
        return {"account": {"user": account.person.user, "up": account.up,
                            "problem": account.problem}}  # fmt: skip

    # the clock ------------------------------------------------------------------------

    def now(self) -> datetime:
        """The event's clock: the aggregator's when it runs on its sensors' (one clock)."""
        return self.followed_ts if self.followed_ts is not None else datetime.now(UTC)

    # what the broker says ----------------------------------------------------------------

    def _heard(self, heard: Heard) -> None:
        ref = self.topics.parse(heard.topic)
        if not isinstance(ref, wire.TopicRef):
            return
        try:
            if ref.kind == "status":
                self._take_status(wire.decode_json(wire.Status, heard.payload))
            elif ref.kind == "alert":
                if heard.payload:
                    self.alerts[ref.id] = wire.decode_json(wire.Alert, heard.payload)
                else:
                    self.alerts.pop(ref.id, None)
            elif ref.kind == "aggregator-availability":
                self.connection.aggregator_online = wire.decode_availability(heard.payload)
            elif ref.kind == "checkpoint":
                self.checkpoint_received(heard.payload)
                return
            else:
                return
        except (msgspec.DecodeError, ValueError) as exc:
            log.warning("inspectors' hub: ignored a bad payload on %s: %s", heard.topic, exc)
            return
        if ref.kind in ("status", "alert"):
            self._check_recorded()
        self._wake.set()

    def _take_status(self, status: wire.Status) -> None:
        if status.ts is None or status.ts.tzinfo is None:
            raise ValueError("a status without a time with its offset")
        self.status = status
        state = self.connection
        state.status_ts = status.ts
        state.received_at = datetime.now(UTC)
        state.received_mono = time.monotonic()
        state.simulated = status.clock == "sensor"
        if status.clock == "sensor":
            if self.followed_ts is None or status.ts > self.followed_ts:
                self.followed_ts = status.ts
        else:
            self.followed_ts = None

    def checkpoint_received(self, payload: bytes) -> None:
        """An evidence checkpoint (``evidence/checkpoint``), as received.

        The witness file's keeper is called here with the payload's exact bytes
        (:attr:`InspectorSettings.witness`), before anything reads it, so what it keeps
        is what the broker said; the hub itself only notes the latest.
        """
        if self.settings.witness is not None:
            try:
                self.settings.witness(payload)
            except Exception:  # a witness that fails must not stop the pages
                log.exception("inspectors' hub: the witness could not keep a checkpoint")
        try:
            self.checkpoint = wire.decode_json(wire.Checkpoint, payload)
        except (msgspec.DecodeError, ValueError) as exc:
            log.warning("inspectors' hub: ignored a bad checkpoint: %s", exc)

    def _changed(self, change: LinkChange) -> None:
        change.apply(self.connection)
        self._wake.set()

    # the view ------------------------------------------------------------------------

    def view_text(self) -> str:
        """The page's view now, as the JSON every page is sent (without the clock)."""
        view = inspector_view(
            self.apps.event_id, status=self.status, alerts=self.alerts,
            connection=self.connection, now=self.now(), monotonic=time.monotonic(),
        )  # fmt: skip
        return _ENCODE({"view": view}).decode()

    def _message(self, text: str) -> str:
        """The view with the hub's clock, for the page to stamp what it sends."""
        clock = _ENCODE({"now": self.now().isoformat(), "sensor": self.followed_ts is not None})
        return clock.decode()[:-1] + "," + text[1:]

    async def _push(self) -> None:
        """Send the view to every page when it changed: coalesced, a few a second at most.

        Only a view sent holds the next one back: the second's tick that changed nothing
        must not make the status after it wait.
        """
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                text = self.view_text()
            except (TypeError, ValueError, OverflowError):
                log.exception("inspectors' hub: the view could not be made; the last one stays")
                text = self._text or ""
            if text and text != self._text:
                self._text = text
                message = self._message(text)
                for page in list(self.pages):
                    page.show(message)
                await asyncio.sleep(self.settings.push_gap_s)

    async def _tick(self) -> None:
        """Each second: the clock on the page and the status's age."""
        while True:
            await asyncio.sleep(self.settings.tick_s)
            self._wake.set()

    # actions ---------------------------------------------------------------------------

    def take(self, page: Phone, person: Person, actions: list[PageAction]) -> None:
        """A page's actions, in order: publish the new ones once, answer for each."""
        answers = []
        for action in actions:
            key = (person.name, action.id)
            known = self.actions.get(key)
            if known is None or known.state == "held":
                known = self._new(person, action)
            answers.append(self._answer(action.id, known))
        if answers:
            page.say({"actions": answers})

    def _new(self, person: Person, action: PageAction) -> _Followed:
        key = (person.name, action.id)
        account = self.accounts.get(person.name)
        if not kind_allowed(action.kind, person.role):
            what = "the Clerk's page changes the permit only" if person.role == "clerk" else (
                "only the Town Clerk changes the permit")  # fmt: skip
            return self._keep(key, _Followed(None, None, "refused", f"not sent: {what}"))
        now = self.now()
        try:
            payload = build_payload(action, stamp_for(action, now), now)
        except ValueError as exc:
            return self._keep(key, _Followed(None, None, "refused", f"not sent: {exc}"))
        topic = action_topic(self.topics, action.kind, person.name)
        if action.delivered:  # it went out before (this hub, or one before a restart)
            sent = SentAction(0, action.kind, topic, payload, person.name, now, "delivered")
            return self._follow(key, _Followed(sent, None, "delivered"))
        if account is None or account.problem is not None:
            why = account.problem if account is not None else "no connection for your account"
            return _Followed(None, None, "held", why)  # kept on the phone, not here
        baseline = recorded_entries(action.kind, payload, person.name, self.status, self.alerts)
        publication = account.link.publish(topic, encode_action(payload))
        sent = SentAction(
            len(self.actions) + 1, action.kind, topic, payload, person.name, now, "sent",
            baseline=baseline,
        )  # fmt: skip
        log.info("%s published %s %s", person.user, action.kind, action.id)
        followed = self._follow(key, _Followed(sent, publication, "sent"))
        self._settle(key, followed)
        return followed

    def _keep(self, key: tuple[str, str], followed: _Followed) -> _Followed:
        self.actions[key] = followed
        self.actions.move_to_end(key)
        while len(self.actions) > self.settings.keep:
            old, _ = self.actions.popitem(last=False)
            self._open.discard(old)
        return followed

    def _follow(self, key: tuple[str, str], followed: _Followed) -> _Followed:
        self._keep(key, followed)
        self._open.add(key)
        self._recorded(key, followed)
        return followed

    @staticmethod
    def _answer(action_id: str, followed: _Followed) -> dict[str, object]:
        answer: dict[str, object] = {"id": action_id, "state": followed.state}
        if followed.why:
            answer["why"] = followed.why
        if followed.at:
            answer["at"] = followed.at
        return answer

    def _tell(self, key: tuple[str, str], followed: _Followed) -> None:
        account = self.accounts.get(key[0])
        if account is None:
            return
        note: dict[str, object] = {"actions": [self._answer(key[1], followed)]}
        for page in account.pages:
            page.say(note)

    def _settle(self, key: tuple[str, str], followed: _Followed) -> bool:
        """A sent action the broker has answered: delivered, or refused (with why)."""
        publication = followed.publication
        if followed.state != "sent" or publication is None or not publication.done:
            return False
        if publication.refused is not None:
            followed.state, followed.why = "refused", publication.refused
            self._open.discard(key)
        else:
            followed.state = "delivered"
        return True

    def _answered(self) -> None:
        """The broker answered a message of someone's: tell their pages how it went."""
        for key in list(self._open):
            followed = self.actions.get(key)
            if followed is not None and self._settle(key, followed):
                self._tell(key, followed)

    def _recorded(self, key: tuple[str, str], followed: _Followed) -> bool:
        sent = followed.sent
        if sent is None or followed.state in ("recorded", "refused"):
            return False
        now = self.now()
        after = update_recorded(replace(sent, state="sent"), self.status, self.alerts, now)
        if after.state != "recorded":
            return False
        followed.state = "recorded"
        followed.at = local_clock(after.recorded_at or now, event_zone(self.status))
        self._open.discard(key)
        return True

    def _check_recorded(self) -> None:
        """After a status or an alert: which open actions does the aggregator now carry?"""
        for key in list(self._open):
            followed = self.actions.get(key)
            if followed is None:
                self._open.discard(key)
            elif self._recorded(key, followed):
                self._tell(key, followed)
