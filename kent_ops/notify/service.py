"""The notifier service: alerts in from the broker, notices out through apprise, records back.

Two threads. paho's network thread decodes each alert, decides which notices it calls
for (:func:`kent_ops.notify.plan.notices_for`) and writes them into the ledger before
the broker's acknowledgement goes out (paho acknowledges a QoS 1 message after its
callback returns), so a notice decided is never lost to a crash. The sending thread
takes the notices from the :class:`~kent_ops.notify.delivery.Outbox` when due, makes
one attempt, publishes a ``sent`` record for it (QoS 1, not retained) and marks the
ledger, or waits the backoff delay and tries again until ``give_up_after_s``.

The session is persistent (a fixed client id, clean session off) so the broker keeps
the alerts' changes for the notifier while it restarts; the alerts are retained, so a
first start sees every alert of the event in its latest state.

A ``sent`` record is stamped with the aggregator's time, read from its retained status
(:func:`kent_ops.core.aggregator_time.aggregator_now`): beside a rehearsal or the demo,
whose aggregator runs on its sensors' clock, a record stamped with the wall clock would
be refused as being from another day.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from datetime import UTC, datetime
from typing import Any

import msgspec
import paho.mqtt.client as mqtt

from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.session_id import secret_client_id
from kent_ops.broker.witness import WitnessKeeper, watch_checkpoints
from kent_ops.core import wire
from kent_ops.core.aggregator_time import aggregator_now
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit
from kent_ops.notify.config import Channel, NotifyConfig
from kent_ops.notify.delivery import Job, Lane, Outbox, Sender
from kent_ops.notify.ledger import Ledger, NoticeKey, Status
from kent_ops.notify.message import Notice, compose
from kent_ops.notify.plan import notices_for

__all__ = ["Notifier"]

log = logging.getLogger("notify")


class Notifier:
    """Watch one event's alerts and tell the configured people; see the module doc.

    Args:
        permit: the event's permit (its id names the topics; its zone, the times).
        config: people, channels, retries.
        address: the broker, as user ``notifier-{config.id}``.
        ledger: what was sent before (loaded by the caller, so a bad path is a usage error).
        ca_file: the CA certificate of an ``mqtts://`` broker.
        witness: keeps every checkpoint of the evidence log received (a witness file),
            written before the broker's acknowledgement goes out.
    """

    def __init__(
        self,
        permit: Permit,
        config: NotifyConfig,
        address: BrokerAddress,
        ledger: Ledger,
        *,
        ca_file: str | None = None,
        witness: WitnessKeeper | None = None,
    ) -> None:
        self.permit = permit
        self.witness = witness
        self.config = config
        self.address = address
        self.ledger = ledger
        self.topics = wire.Topics(permit.event_id)
        self.subscribed = threading.Event()
        self._stopping = threading.Event()
        self._cond = threading.Condition()
        self._outbox = Outbox()
        self._channels: dict[Lane, Channel] = {
            (c.person, c.number): c for p in config.people for c in p.channels
        }
        self._senders = {lane: Sender(c) for lane, c in self._channels.items()}
        self._last_publish: mqtt.MQTTMessageInfo | None = None
        self._status: wire.Status | None = None
        """The aggregator's last status: its clock, for the time of a sent record."""
        self.client = self._make_client(ca_file)
        if witness is not None:
            watch_checkpoints(self.client, self.topics, witness)
        self._thread = threading.Thread(target=self._send_loop, name="notify-send", daemon=True)

    def _make_client(self, ca_file: str | None) -> mqtt.Client:
        try:
            # A secret id, so no other account can take or wipe the queued alerts.
            session = secret_client_id(
                f"notify-{self.config.id}",
                self.permit.event_id,
                self.address,
                self.config.state_file.parent,
            )
            client = make_client(
                self.address, session.client_id, clean_start=False, ca_file=ca_file
            )
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot set up the broker connection: {exc}") from None
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        return client

    # -- running ----------------------------------------------------------------------------

    def start(self) -> None:
        """Resume the notices a previous run left pending, then connect and start sending."""
        self._resume_pending()
        user = self.address.username
        if user is not None and user != f"notifier-{self.config.id}":
            log.warning(
                "broker user %s is not notifier-%s: the broker's access list lets only "
                "notifier-%s publish this notifier's sent records",
                user,
                self.config.id,
                self.config.id,
            )
        log.info("connecting to %s as notifier %s", self.address.url, self.config.id)
        self.client.connect_async(self.address.host, self.address.port, keepalive=30)
        self.client.loop_start()
        self._thread.start()

    def stop(self) -> None:
        """Finish the attempt under way, flush the last record, disconnect."""
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(60)
        last = self._last_publish
        if last is not None and self.client.is_connected():
            with contextlib.suppress(RuntimeError, ValueError):
                last.wait_for_publish(timeout=5.0)
        self.client.disconnect()
        self.client.loop_stop()
        log.info("stopped; %d notice(s) still to send next time", len(self._outbox))

    def request_stop(self) -> None:
        """Ask :meth:`run_forever` to return (safe from a signal handler)."""
        self._stopping.set()

    def run_forever(self) -> None:
        self.start()
        self._stopping.wait()
        self.stop()

    def __enter__(self) -> Notifier:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- paho's network thread ----------------------------------------------------------------

    def _on_connect(
        self, client: mqtt.Client, u: object, flags: Any, reason_code: Any, p: object
    ) -> None:
        if reason_code.is_failure:
            log.error("broker %s refused the connection: %s", self.address.url, reason_code)
            return
        log.info("connected to %s", self.address.url)
        # The status first: its retained copy (the aggregator's clock) comes before the
        # retained alerts, so the first notice sent already knows the time to stamp.
        topics = [(self.topics.status, 1), (self.topics.alerts_wildcard, 1)]
        if self.witness is not None:
            topics.append((self.topics.checkpoint, 1))
        client.subscribe(topics)

    def _on_subscribe(self, client: mqtt.Client, u: object, mid: int, codes: Any, p: Any) -> None:
        refused = [getattr(c, "is_failure", False) for c in codes]
        if len(refused) > 1 and refused[1]:
            log.error("the broker refused this user the checkpoints of %s", self.topics.event_id)
        if refused[:1] != [False]:
            log.error("the broker refused this user the alerts of %s", self.topics.event_id)
            return
        log.info("watching the alerts of event %s", self.topics.event_id)
        self.subscribed.set()

    def _on_disconnect(self, client: mqtt.Client, u: object, f: Any, reason: Any, p: Any) -> None:
        self.subscribed.clear()
        if not self._stopping.is_set():
            log.warning("lost the broker (%s); reconnecting", reason)

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        if msg.topic == self.topics.status:
            self._take_status(bytes(msg.payload))
            return
        if not msg.payload:
            return  # a retained alert taken down
        try:
            alert = wire.decode_json(wire.Alert, msg.payload)
        except msgspec.DecodeError as exc:
            log.warning("%s is not an alert (%s); ignored", msg.topic, exc)
            return
        try:
            self.consider(alert)
        except Exception:  # never let paho's thread die: the next alert must still go out
            log.exception("could not handle alert %s", alert.id)

    def _take_status(self, payload: bytes) -> None:
        try:
            self._status = wire.decode_json(wire.Status, payload)
        except msgspec.DecodeError as exc:
            log.warning("the status is not one (%s); ignored", exc)

    def now(self) -> datetime:
        """The aggregator's time (its sensors' on a simulated day), else the wall clock."""
        return aggregator_now(self._status, datetime.now(UTC))

    def consider(self, alert: wire.Alert) -> None:
        """Enter and queue the notices this state of ``alert`` calls for, if any."""
        todo = notices_for(alert, self.config.people, self.ledger)
        if not todo:
            return
        notice = compose(
            alert,
            event_name=self.permit.event_name,
            tz=self.permit.timezone,
            dashboard=self.config.dashboard,
        )
        try:
            self.ledger.add_pending([key for key, _ in todo], notice.title, notice.body)
        except OSError as exc:
            log.error("state file %s cannot be written (%s)", self.ledger.path, exc)
        word = "raised" if alert.state == "active" else "ended"
        log.info(
            "%s %s (%s, %s): telling %s",
            alert.id,
            word,
            alert.severity,
            alert.rule,
            ", ".join(channel.label for _, channel in todo),
        )
        self._queue([(key, notice) for key, _ in todo])

    def _queue(self, items: list[tuple[NoticeKey, Notice]]) -> None:
        now = time.monotonic()
        with self._cond:
            for key, notice in items:
                self._outbox.add((key.person, key.channel), Job(key, notice, due=now))
            self._cond.notify_all()

    def _resume_pending(self) -> None:
        items: list[tuple[NoticeKey, Notice]] = []
        for key, title, body in self.ledger.pending():
            if (key.person, key.channel) not in self._senders:
                log.warning(
                    "%s %s for %s channel %d: that channel is no longer configured; dropped",
                    key.alert,
                    key.state,
                    key.person,
                    key.channel,
                )
                self._finish(key, "gave-up")
                continue
            items.append((key, Notice(title, body)))
        if items:
            log.info("%d notice(s) left pending by the last run: sending them", len(items))
            self._queue(items)

    # -- the sending thread -----------------------------------------------------------------

    def _next(self) -> tuple[Lane, Job] | None:
        with self._cond:
            while not self._stopping.is_set():
                now = time.monotonic()
                item = self._outbox.take(now)
                if item is not None:
                    return item
                due = self._outbox.next_due()
                self._cond.wait(None if due is None else max(0.0, due - now))
        return None

    def _send_loop(self) -> None:
        while (item := self._next()) is not None:
            lane, job = item
            try:
                self._attempt(lane, job)
            except Exception:  # keep sending the others
                log.exception("sending %s %s failed unexpectedly", job.key.alert, job.key.state)
                with self._cond:
                    job.due = time.monotonic() + self.config.retry.max_delay_s

    def _attempt(self, lane: Lane, job: Job) -> None:
        channel, sender = self._channels[lane], self._senders[lane]
        if job.first_attempt is None:
            job.first_attempt = time.monotonic()
        error = sender.send(job.notice)
        self._publish_sent(job.key, channel, error)
        key = job.key
        next_ok = time.monotonic() + sender.gap_s
        if error is None:
            log.info("told %s about %s %s", channel.label, key.alert, key.state)
            self._finish(key, "sent", lane, next_ok)
            return
        job.failures += 1
        elapsed = time.monotonic() - job.first_attempt
        retry = self.config.retry
        if elapsed >= retry.give_up_after_s:
            log.error(
                "gave up telling %s about %s %s after %d attempts over %.0f s: %s",
                channel.label, key.alert, key.state, job.failures, elapsed, error,
            )  # fmt: skip
            self._finish(key, "gave-up", lane, next_ok)
            return
        delay = min(retry.delay(job.failures), max(0.0, retry.give_up_after_s - elapsed))
        delay = max(delay, sender.gap_s)
        log.warning(
            "could not tell %s about %s %s (%s); trying again in %g s",
            channel.label, key.alert, key.state, error, round(delay, 1),
        )  # fmt: skip
        with self._cond:
            job.due = time.monotonic() + delay

    def _finish(
        self, key: NoticeKey, status: Status, lane: Lane | None = None, next_ok: float = 0.0
    ) -> None:
        try:
            self.ledger.finish(key, status)
        except OSError as exc:
            log.error("state file %s cannot be written (%s)", self.ledger.path, exc)
        if lane is not None:
            with self._cond:
                self._outbox.done(lane, next_ok)

    def _publish_sent(self, key: NoticeKey, channel: Channel, error: str | None) -> None:
        record = wire.NotifierSent(
            ts=self.now(),
            alert=key.alert,
            state=key.state,
            to=key.person,
            channel=channel.scheme,
            ok=error is None,
            error=error,
        )
        topic = self.topics.notifier_sent(self.config.id)
        self._last_publish = self.client.publish(topic, wire.encode(record), qos=1, retain=False)
