"""The deputies' gate views inside ``kent-ops serve``: one hub per gate, a websocket per phone.

A phone at a gate costs the command post a websocket, not a process: every phone at
gate G is fed by G's :class:`GateHub`, which holds one MQTT connection as
``deputy-{G}`` (:mod:`kent_ops.web.gate_link`), keeps the gate's status, command and
connection state, makes the gate's view with the core's pure function
(:func:`kent_ops.core.gate_view.gate_view`, the one the terminal's gate view draws
too) and pushes it to every phone of the gate: encoded once, at most one every
:attr:`GateSettings.push_gap_s`, and only when it changed. Any number of deputies may
stand at one gate; none closes another's page.

The gate's manual tally is the sensors' gate-counter device (injected by the command
line as a factory, because this package may not import ``sensors``), kept in the state
folder as before. It stamps its messages with the aggregator's own time
(:func:`kent_ops.core.aggregator_time.aggregator_now`): beside a demo or a rehearsal on
the sensors' clock, a tap stamped with the wall clock would be refused as being from
another day. Taps come from the phones with ids; each is applied once
(:class:`kent_ops.web.taps.TapJournal`), counted, and published at QoS 1. A phone hears
``sent`` for a tap once the broker has acknowledged a message whose totals carry it,
``counted`` only once the aggregator's status shows the tally's totals reaching it,
and ``late`` when it was sent :data:`~kent_ops.core.gate_view.NOT_COUNTED_AFTER_S` ago
and is still not counted (docs/protocol.md, "Counted, not sent"). A gate whose permit
has no manual tally counts nothing: its taps are refused (and stay on the phone), as
the broker would refuse them.

When the last phone of a gate leaves, the hub waits :attr:`GateSettings.linger_s` (a
reload comes back within it), then says the tally is offline and disconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import msgspec

from kent_ops.core import wire
from kent_ops.core.aggregator_time import aggregator_now
from kent_ops.core.connection import NO_AGGREGATOR_AFTER_S, ConnectionState, unheard
from kent_ops.core.errors import UsageError
from kent_ops.core.gate_view import (
    NOT_COUNTED_AFTER_S,
    TallyFacts,
    counted_taps,
    gate_view,
    manual_gate,
    tally_listed,
    tap_counted,
    view_data,
)
from kent_ops.web.apps import AppConfig
from kent_ops.web.gate_link import GateLink, Heard, LinkChange, TallyLink
from kent_ops.web.phone import Phone
from kent_ops.web.taps import Tap, TapJournal

__all__ = ["GateHub", "GateSettings", "TallyDevice", "TallyFactory"]

log = logging.getLogger("kent-ops.serve")
_ENCODE = msgspec.json.Encoder().encode


class TallyDevice(Protocol):
    """What the hub needs of a gate's manual tally (the sensors' gate counter)."""

    in_total: int
    out_total: int
    seq: int

    @property
    def topic(self) -> str: ...
    @property
    def availability_topic(self) -> str: ...
    def attach(self, link: TallyLink) -> None: ...
    def count(self, entered: int = 0, exited: int = 0) -> bool: ...
    def tick(self) -> bool: ...
    def close(self, *, announce: bool = True, timeout: float = 5.0) -> None: ...


Clock = Callable[[], datetime]
TallyFactory = Callable[[str, Clock], TallyDevice]
"""The gate's tally device, read from its state file, stamping its messages with the
clock given (the aggregator's time); ValueError or UsageError if it cannot be used (an
unreadable file, no signing key for it)."""


@dataclass(frozen=True, slots=True)
class GateSettings:
    """How the gate hubs run: the tally factory and where tallies are kept."""

    tallies: TallyFactory | None = None
    """None: this server counts no tallies (the phones say so)."""
    state_dir: Path | None = None
    """Where the tally files are, and the tap journals beside them."""
    linger_s: float = 10.0
    push_gap_s: float = 0.2
    """At most one view a phone this often: five a second."""
    tick_s: float = 1.0


@dataclass(slots=True)
class _Waiting:
    """A tap the aggregator has not counted yet, and the phones that sent it, each with
    what it was last told of it (``""``: nothing yet, ``sent``, ``late``)."""

    index: int
    phones: dict[Phone, str] = field(default_factory=dict)


class GateHub:
    """One gate's connection, state, view, tally and phones."""

    def __init__(self, gate: str, apps: AppConfig, settings: GateSettings, password: str) -> None:
        self.gate = gate
        self.apps, self.settings = apps, settings
        self.topics = wire.Topics(apps.event_id)
        self.loop = asyncio.get_running_loop()
        self.phones: set[Phone] = set()
        self.status: wire.Status | None = None
        self.command: wire.GateCommand | None = None
        self.connection = ConnectionState(event_id=apps.event_id, broker_url=apps.broker.url)
        self.link = GateLink(
            gate, self.topics, apps.broker, password, loop=self.loop,
            on_heard=self._heard, on_change=self._changed, on_acknowledged=self._confirm,
            will_topic=self.topics.availability(manual_gate(gate)), ca_file=apps.ca_file,
        )  # fmt: skip
        self.tally: TallyDevice | None = None
        self.tally_problem: str | None = "this server keeps no manual tallies"
        self.journal: TapJournal | None = None
        self.attached = False
        self._waiting: dict[str, _Waiting] = {}
        self._late_check: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._text: str | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.closed = False

    # lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Read the tally (catching up with its journal), connect, start pushing views."""
        if self.settings.tallies is not None:
            await self.loop.run_in_executor(None, self._open_tally)
        tally_link = TallyLink(self.link, self.topics.gate_count(manual_gate(self.gate)))
        self.link.tally = tally_link
        self.link.start()
        self._tasks = [
            asyncio.create_task(self._push(), name=f"gate-{self.gate}-push"),
            asyncio.create_task(self._tick(), name=f"gate-{self.gate}-tick"),
        ]

    def _open_tally(self) -> None:
        assert self.settings.tallies is not None
        try:
            tally = self.settings.tallies(self.gate, self.now)
        except (ValueError, OSError, UsageError) as exc:
            self.tally_problem = f"the tally cannot be used: {exc}"
            log.warning("gate %s: %s", self.gate, self.tally_problem)
            return
        folder = self.settings.state_dir or Path(".")
        journal = TapJournal(
            folder.expanduser() / f"{self.apps.event_id}.{manual_gate(self.gate)}.taps"
        )
        behind = journal.behind(tally.in_total, tally.out_total)
        if any(behind):  # stopped between the journal and the count: count them now
            log.warning("gate %s: the tally catches up %s taps from its journal", self.gate, behind)
            tally.count(*behind)
        self.tally, self.journal, self.tally_problem = tally, journal, None

    def _attach(self) -> None:
        if self.tally is not None and not self.attached and self.link.tally is not None:
            self.tally.attach(self.link.tally)
            self.attached = True

    def _in_use(self) -> bool:
        tally = self.tally
        return tally is not None and bool(tally.seq or tally.in_total + tally.out_total)

    def now(self) -> datetime:
        """The aggregator's time (its sensors' on a simulated day), for the tally's
        messages and the view: read from any thread."""
        return aggregator_now(self.status, datetime.now(UTC))

    async def close(self) -> None:
        """Say the tally is offline (if it spoke), disconnect, stop the tasks."""
        self.closed = True
        if self._late_check is not None:
            self._late_check.cancel()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.loop.run_in_executor(None, self._goodbye)

    def _goodbye(self) -> None:
        if self.tally is not None and self.attached and self.link.tally is not None:
            online = self.link.tally.online
            self.tally.close(announce=True)
            if online:
                self.link.flush(2.0)
        self.link.stop()

    # phones --------------------------------------------------------------------------

    def join(self, phone: Phone, password: str) -> None:
        self.phones.add(phone)
        self.link.add_password(phone.token, password)
        if self._text is not None:
            phone.show(self._text)
        self._wake.set()

    def leave(self, phone: Phone) -> None:
        self.phones.discard(phone)
        if not any(p.token == phone.token for p in self.phones):
            self.link.drop_password(phone.token)
        for tap_id, waiting in list(self._waiting.items()):
            waiting.phones.pop(phone, None)
            if not waiting.phones:
                del self._waiting[tap_id]

    # what the broker says ----------------------------------------------------------------

    def _heard(self, heard: Heard) -> None:
        topics = self.topics
        try:
            if heard.topic == topics.status:
                status = wire.decode_json(wire.Status, heard.payload)
                if status.ts is None or status.ts.tzinfo is None:
                    raise ValueError("a status without a time with its offset")
                self.status = status
                self.connection.status_ts = status.ts
                self.connection.received_at = self.now()
                self.connection.received_mono = time.monotonic()
                self.connection.simulated = status.clock == "sensor"
                if self._in_use() and not self.attached:
                    # A tally in use before a restart speaks once the aggregator's time
                    # is known, so its first message carries that time, not the wall's.
                    self._attach()
                self._report()
            elif heard.topic == topics.gate_command(self.gate):
                payload = heard.payload
                self.command = wire.decode_json(wire.GateCommand, payload) if payload else None
            elif heard.topic == topics.aggregator_availability:
                self.connection.aggregator_online = wire.decode_availability(heard.payload)
        except (msgspec.DecodeError, ValueError) as exc:
            log.warning("gate %s: ignored a bad payload on %s: %s", self.gate, heard.topic, exc)
            return
        self._wake.set()

    def _changed(self, change: LinkChange) -> None:
        change.apply(self.connection)
        self._wake.set()

    # the view ------------------------------------------------------------------------

    def view_text(self) -> str:
        """The gate's view now, as the JSON message every phone of the gate is sent."""
        facts = self._facts()
        view = gate_view(
            self.gate, self.apps.event_id, status=self.status, command=self.command,
            connection=self.connection, now=self.now(), monotonic=time.monotonic(),
            tally=facts,
        )  # fmt: skip
        data = view_data(view)
        if self.tally_problem is not None and view.can_count:
            data["tally_problem"] = self.tally_problem
        return _ENCODE({"view": data}).decode()

    def _facts(self) -> TallyFacts:
        if self.tally is None or self.link.tally is None:
            return TallyFacts()
        sends = self.link.tally.sends
        silent = unheard(self.connection, time.monotonic(), after_s=NO_AGGREGATOR_AFTER_S)
        return TallyFacts(
            self.tally.in_total, self.tally.out_total, sent=sends.sent(),
            waiting_s=sends.waiting_s(counted_taps(self.status, self.gate)), unheard=silent,
        )  # fmt: skip

    async def _push(self) -> None:
        """Send the view to every phone when it changed: coalesced, a few a second at most."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            text = self.view_text()
            if text != self._text:
                self._text = text
                for phone in list(self.phones):
                    phone.show(text)
            await asyncio.sleep(self.settings.push_gap_s)

    async def _tick(self) -> None:
        """Each second: the clock, staleness, taps not counted in time, and the tally's
        heartbeat when it is due."""
        while True:
            await asyncio.sleep(self.settings.tick_s)
            if self.tally is not None and self.attached:
                async with self._lock:
                    await self.loop.run_in_executor(None, self.tally.tick)
            self._report()
            self._wake.set()

    # the tally ------------------------------------------------------------------------

    async def take(self, phone: Phone, taps: list[Tap]) -> None:
        """A phone's taps, in order: apply the new ones once, and answer for each."""
        listed = tally_listed(self.status, self.gate)
        if self.tally is None or self.journal is None:
            phone.say({"refused": self.tally_problem or "no manual tally here"})
            return
        if listed is None:
            phone.say({"held": "waiting for the aggregator's status before counting"})
            return
        if listed is False:
            phone.say({"refused": f"gate {self.gate} has no manual tally in the permit"})
            return
        async with self._lock:
            journal, fresh, seen = self.journal, [], set()
            for tap in taps:
                if journal.index(tap.id) is None and tap.id not in seen:
                    fresh.append(tap)
                    seen.add(tap.id)
            if fresh:
                self._attach()
                await self.loop.run_in_executor(None, self._apply, fresh)
            for tap in taps:
                index = journal.index(tap.id)
                if index is not None:
                    self._waiting.setdefault(tap.id, _Waiting(index)).phones.setdefault(phone, "")
        self._report()
        self._wake.set()

    def _apply(self, taps: list[Tap]) -> None:
        """Journal the batch with its totals, then count it (one message): in a thread."""
        assert self.tally is not None
        assert self.journal is not None
        entered = sum(1 for t in taps if t.direction == "in")
        exited = len(taps) - entered
        totals = (self.tally.in_total + entered, self.tally.out_total + exited)
        self.journal.record([t.id for t in taps], *totals)
        self.tally.count(entered, exited)

    def _confirm(self) -> None:
        """The broker acknowledged a message: its taps are sent."""
        self._report()
        self._wake.set()

    def _report(self) -> None:
        """Tell each phone what became of its taps: sent (the broker has them), counted
        (the aggregator's status shows them), or late (sent long ago, still not counted).
        Each is said once per state; a counted tap is forgotten."""
        tally_link = self.link.tally
        if tally_link is None or not self._waiting:
            return
        sends = tally_link.sends
        sent = sends.sent()
        counted = counted_taps(self.status, self.gate)
        now = time.monotonic()
        notes: dict[Phone, dict[str, list[str]]] = {}
        due: float | None = None
        for tap_id, waiting in list(self._waiting.items()):
            index = waiting.index
            if tap_counted(index, sent=sent, counted=counted):
                del self._waiting[tap_id]
                for phone in waiting.phones:
                    notes.setdefault(phone, {}).setdefault("counted", []).append(tap_id)
                continue
            if index > sent:
                continue
            at = sends.sent_at(index)
            word = "late" if at is not None and now - at >= NOT_COUNTED_AFTER_S else "sent"
            if word == "sent" and at is not None:
                left = at + NOT_COUNTED_AFTER_S - now
                due = left if due is None else min(due, left)
            for phone, told in waiting.phones.items():
                if told == word or told == "late":
                    continue  # said already (and a late tap is not sent again)
                waiting.phones[phone] = word
                notes.setdefault(phone, {}).setdefault(word, []).append(tap_id)
        for phone, said in notes.items():
            for word in ("sent", "late", "counted"):
                if word in said:
                    phone.say({word: said[word]})
        if due is not None:
            self._recheck(due)

    def _recheck(self, delay: float) -> None:
        """Look again the moment the oldest tap waiting becomes late (not at the next tick)."""
        handle = self._late_check
        when = self.loop.time() + max(0.0, delay) + 0.01
        if handle is not None and not handle.cancelled() and handle.when() <= when:
            return
        if handle is not None:
            handle.cancel()
        self._late_check = self.loop.call_at(when, self._late)

    def _late(self) -> None:
        self._late_check = None
        if not self.closed:
            self._report()
            self._wake.set()
