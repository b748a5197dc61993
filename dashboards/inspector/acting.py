"""What the inspector (and the Clerk) send: ask in a form, confirm, publish, follow.

Each action runs as one exclusive worker (group ``inspector-action``): a form, then a
confirmation naming exactly what goes out and under whose id, then one QoS 1 publish.
It is followed from "sent" (handed to the client) to "delivered" (the broker's PUBACK)
to "recorded" (the aggregator's status or alert shows it: :mod:`.actions`). The app
(:mod:`dashboards.inspector.app`) builds on this class; the screens only post messages.
"""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from textual.reactive import reactive

from dashboards.common.feed_app import FeedApp
from dashboards.common.format import clean, event_zone, local_clock
from dashboards.inspector.checklist_panels import applicable_items
from dashboards.inspector.screens.forms import (
    AckForm,
    AdjustForm,
    AdjustInput,
    ConfirmScreen,
    DeficientForm,
    NoteForm,
    NoteInput,
)
from dashboards.inspector.screens.permit_form import PermitChange, PermitForm
from kent_ops.broker.delivery import Delivery
from kent_ops.core import wire
from kent_ops.core.inspector_actions import (
    CLERK_PERMIT,
    ActionPayload,
    ActionState,
    SentAction,
    ack_payload,
    action_topic,
    adjust_payload,
    describe,
    encode_action,
    inspection_payload,
    note_payload,
    permit_payload,
    recorded_entries,
    restamped,
    update_recorded,
)
from kent_ops.core.permit import BACKDATE_LIMIT_S

__all__ = ["ActingApp"]

NOTICE_CHARS = 160
"""A notification quotes at most this much of what was sent (a note may be 4,000)."""


class ActingApp(FeedApp):
    """A feed app that publishes the inspector's actions and the Clerk's changes."""

    alerts: reactive[dict[str, wire.Alert]] = reactive(dict, always_update=True, repaint=False)
    """Every alert seen, by id, in its latest form."""
    actions: reactive[tuple[SentAction, ...]] = reactive(tuple, repaint=False)
    """This session's actions, oldest first, with how far each got."""

    inspector: str
    """The inspector id that signs notes, acknowledgements, adjustments and markings."""
    clerk: str | None
    """The Town Clerk's id when this dashboard is the Clerk's (``--clerk``), else None."""
    blink: bool
    """Whether the forms' cursors blink (off for repeatable snapshots)."""

    def _setup_acting(self) -> None:
        """Called by the app's ``__init__``: nothing published yet."""
        self._deliveries: dict[int, Delivery] = {}
        """Each published action's delivery, by its number, until it is recorded."""

    # starting an action ---------------------------------------------------------------

    def _start(self, flow: Coroutine[Any, Any, None], name: str) -> None:
        """One action at a time: a new one replaces a form still open."""
        self.run_worker(flow, name=name, group="inspector-action", exclusive=True)

    def start_ack(self, alert_id: str) -> None:
        """Ask for a comment, confirm, then publish the acknowledgement."""
        self._start(self._ack_flow(alert_id), "ack")

    def start_note(self, alert_id: str | None) -> None:
        """Ask for a note (about ``alert_id`` if given), confirm, publish."""
        self._start(self._note_flow(alert_id), "note")

    def start_adjust(self) -> None:
        """Ask for a counted attendance and a reason, confirm, publish."""
        self._start(self._adjust_flow(), "adjust")

    def start_inspection(self, item: str, result: str) -> None:
        """Mark a checklist item: ask what was found if deficient, confirm, publish."""
        self._start(self._inspection_flow(item, result), "inspection")

    def start_permit_change(self) -> None:
        """The Clerk revokes or reinstates the permit: ask, confirm naming it, publish."""
        if self.clerk is None:
            self.notify("Only the Town Clerk's dashboard (--clerk) can change the permit.")
            return
        self._start(self._permit_flow(self.clerk), "clerk-permit")

    # the flows ------------------------------------------------------------------------

    async def _ack_flow(self, alert_id: str) -> None:
        comment = await self.push_screen_wait(
            AckForm(alert_id, self.alerts.get(alert_id), blink=self.blink)
        )
        if comment is not None:
            await self._confirm_and_send("ack", ack_payload(alert_id, comment, self.clock()))

    async def _note_flow(self, alert_id: str | None) -> None:
        entered: NoteInput | None = await self.push_screen_wait(
            NoteForm(alert_id, set(self.alerts), blink=self.blink)
        )
        if entered is not None:
            payload = note_payload(entered.text, self.clock(), entered.alert)
            await self._confirm_and_send("note", payload)

    async def _adjust_flow(self) -> None:
        current = self.status.attendance.current if self.status is not None else None
        entered: AdjustInput | None = await self.push_screen_wait(
            AdjustForm(current, blink=self.blink)
        )
        if entered is not None:
            payload = adjust_payload(entered.attendance, entered.reason, self.clock())
            await self._confirm_and_send("adjust", payload)

    async def _inspection_flow(self, item: str, result: str) -> None:
        entry = next((i for i in applicable_items(self.status) if i.item == item), None)
        text, cite = (entry.text, entry.cite) if entry is not None else ("", "")
        note = ""
        if result == "deficient":
            found: str | None = await self.push_screen_wait(
                DeficientForm(item, text, cite, blink=self.blink)
            )
            if found is None:
                return
            note = found
        payload = inspection_payload(item, result, self.clock(), note)
        what = describe(payload) + (f"\n{text}  ({cite})" if text else "")
        await self._confirm_and_send("inspection", payload, what=what)

    async def _permit_flow(self, clerk: str) -> None:
        zone = event_zone(self.status)
        permit = self.status.permit if self.status is not None else None
        change: PermitChange | None = await self.push_screen_wait(
            PermitForm(permit, self.clock, zone, blink=self.blink)
        )
        if change is None:
            return
        shown = change.effective_at or self.clock()
        verb = "Revoke" if change.status == "revoked" else "Reinstate"
        number = clean(permit.number, limit=40) if permit is not None and permit.number else ""
        when = local_clock(shown, zone) + (" (now)" if change.effective_at is None else "")
        question = (
            f"{verb} permit {number or '(no number)'} from {when} "
            f"by resolution {clean(change.resolution, limit=60)}?"
        )
        what = _permit_consequence(change)
        topic = action_topic(self.topics, CLERK_PERMIT, clerk)
        if not await self.push_screen_wait(
            ConfirmScreen(what, f"clerk {clerk}", topic, question=question)
        ):
            return
        now = self.clock()
        effective = change.effective_at or now
        if effective < now - timedelta(seconds=BACKDATE_LIMIT_S):
            self.notify(
                f"Not sent: {local_clock(effective, zone)} is now more than a minute ago, and "
                "a change of the permit is never backdated. Open the form again.",
                severity="error",
                markup=False,
            )
            return
        payload = permit_payload(change.status, effective, change.resolution, change.reason, now)
        self.send_action(CLERK_PERMIT, payload, sent_at=now)

    async def _confirm_and_send(
        self, kind: str, payload: ActionPayload, *, what: str | None = None
    ) -> None:
        topic = action_topic(self.topics, kind, self.inspector)
        confirmed = await self.push_screen_wait(
            ConfirmScreen(what or describe(payload), self.inspector, topic)
        )
        if confirmed:
            now = self.clock()
            self.send_action(kind, restamped(payload, now), sent_at=now)

    # publishing and following ---------------------------------------------------------

    def send_action(
        self, kind: str, payload: ActionPayload, *, sent_at: datetime | None = None
    ) -> SentAction:
        """Publish one action at QoS 1 and follow it until it is recorded."""
        who = self.clerk if kind == CLERK_PERMIT and self.clerk is not None else self.inspector
        topic = action_topic(self.topics, kind, who)
        number = len(self.actions) + 1
        baseline = recorded_entries(kind, payload, who, self.status, self.alerts)
        state: ActionState = "unsent"
        if self.feed is not None:
            self._deliveries[number] = self.feed.publish(topic, encode_action(payload))
            state = "sent"
        action = SentAction(
            number=number,
            kind=kind,
            topic=topic,
            payload=payload,
            inspector=who,
            sent_at=sent_at or self.clock(),
            state=state,
            baseline=baseline,
        )
        self.actions = (*self.actions, action)
        if state == "unsent":
            self.notify("Not sent: this dashboard has no broker.", severity="error")
        else:
            self.notify(
                f"Sent: {self._describe(action)}", title="Waiting for the aggregator", markup=False
            )
        return action

    def _describe(self, action: SentAction) -> str:
        """What an action does, cut short for a notification, as plain text."""
        return clean(describe(action.payload, event_zone(self.status)), limit=NOTICE_CHARS)

    def _check_delivered(self) -> None:
        changed = False
        updated = []
        for action in self.actions:
            info = self._deliveries.get(action.number)
            if action.state == "sent" and info is not None and info.done:
                action = replace(action, state="delivered")
                changed = True
            updated.append(action)
        if changed:
            self.actions = tuple(updated)

    def _check_recorded(self) -> None:
        if not self.actions:
            return
        now = self.clock()
        updated = tuple(update_recorded(a, self.status, self.alerts, now) for a in self.actions)
        if updated != self.actions:
            for before, after in zip(self.actions, updated, strict=True):
                if before.state != after.state and after.state == "recorded":
                    self.notify(
                        f"Recorded: {self._describe(after)}",
                        title="The aggregator has it",
                        markup=False,
                    )
                    self._deliveries.pop(after.number, None)
            self.actions = updated


def _permit_consequence(change: PermitChange) -> str:
    """What the change means on the ground, and the Clerk's grounds, for the confirmation."""
    if change.status == "revoked":
        effect = (
            "From then on the permit counts as not issued: above 500 persons permit-required "
            "holds, and every gate is told to HOLD at 500 or more (permit:G, permit:A)."
        )
    else:
        effect = "From then on the permit counts as issued again (permit:G)."
    reason = f"Reason: {change.reason}\n" if change.reason else "No reason given.\n"
    return reason + effect
