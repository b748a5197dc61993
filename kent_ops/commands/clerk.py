"""``kent-ops clerk revoke|reinstate``: the Town Clerk changes the permit's status (permit:G).

The Town Board revokes a permit through its Clerk. This command publishes the Clerk's
``permit`` message (docs/protocol.md) on the Clerk's own topic, waits for the broker
to take it, then watches the aggregator's status until the change shows there, so the
Clerk knows it is in the evidence log, not merely sent.
"""

from __future__ import annotations

import argparse
import sys
import threading
from datetime import UTC, datetime, timedelta

import msgspec
import paho.mqtt.client as mqtt

from kent_ops.broker.acl import check_person_id
from kent_ops.broker.client import make_client
from kent_ops.broker.credentials import broker_from_args
from kent_ops.core import wire
from kent_ops.core.errors import CheckFailed, UsageError
from kent_ops.core.permit import BACKDATE_LIMIT_S

__all__ = ["cli_clerk", "clerk_payload"]


def clerk_payload(
    status: wire.PermitStatus, effective_at: datetime, resolution: str, reason: str, now: datetime
) -> bytes:
    """The Clerk's message: the wire's ``ClerkPermit``, fields in the documented order."""
    record = wire.ClerkPermit(
        ts=_to_ms(now),
        status=status,
        effective_at=_to_ms(effective_at),
        resolution=resolution,
        reason=reason,
    )
    return wire.encode(record)


def _to_ms(moment: datetime) -> datetime:
    """``moment`` in UTC to the millisecond, as the Clerk's message has always carried it."""
    moment = moment.astimezone(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _effective(text: str | None, now: datetime) -> datetime:
    if text is None:
        return now
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"--effective-at {text!r} is not a time (e.g. 2027-07-04T14:30:00-04:00)"
        ) from None
    if when.tzinfo is None:
        raise UsageError(f"--effective-at {text!r} needs an offset, e.g. -04:00 or Z")
    if when < now - timedelta(seconds=BACKDATE_LIMIT_S):
        raise UsageError(
            f"--effective-at {text} is more than {BACKDATE_LIMIT_S} s ago: a change of the "
            "permit is never backdated"
        )
    return when


class _StatusWatch:
    """Waits for the broker's PUBACK, then for a status that shows the new permit status."""

    def __init__(self, topics: wire.Topics, want: str) -> None:
        self.topics = topics
        self.want = want
        self.connected = threading.Event()
        self.seen = threading.Event()
        self.refused: str | None = None

    def on_connect(self, client: mqtt.Client, u: object, f: object, rc: object, p: object) -> None:
        if getattr(rc, "is_failure", False):
            self.refused = str(rc)
        else:
            client.subscribe(self.topics.status, qos=1)
        self.connected.set()

    def on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        try:
            status = wire.decode_json(wire.Status, msg.payload)
        except msgspec.DecodeError:
            return
        if status.permit.status == self.want and status.permit.since is not None:
            self.seen.set()


def cli_clerk(args: argparse.Namespace) -> int:
    """Send the change; 0 once the aggregator's status shows it (or it is scheduled)."""
    problem = check_person_id("clerk", args.clerk)
    if problem:
        raise UsageError(problem)
    if not args.resolution.strip():
        raise UsageError("--resolution must name the Town Board's resolution, e.g. TB-2027-41")
    address = broker_from_args(args)
    now = datetime.now(UTC)
    effective = _effective(args.effective_at, now)
    status: wire.PermitStatus = "revoked" if args.clerk_command == "revoke" else "issued"
    topics = wire.Topics(args.event)
    watch = _StatusWatch(topics, status)
    client = make_client(address, ca_file=getattr(args, "ca_file", None))
    client.on_connect = watch.on_connect
    client.on_message = watch.on_message
    client.connect_async(address.host, address.port, keepalive=30)
    client.loop_start()
    try:
        if not watch.connected.wait(10) or watch.refused:
            why = watch.refused or "no answer within 10 s"
            raise CheckFailed(f"cannot reach the broker at {address.url} ({why}); nothing sent")
        payload = clerk_payload(status, effective, args.resolution, args.reason or "", now)
        info = client.publish(topics.clerk_permit(args.clerk), payload, qos=1)
        info.wait_for_publish(10)
        if not info.is_published():
            raise CheckFailed(f"the broker at {address.url} did not take the message in 10 s")
        return _report(watch, status, effective, args)
    finally:
        client.disconnect()
        client.loop_stop()


def _report(watch: _StatusWatch, status: str, effective: datetime, args: argparse.Namespace) -> int:
    word = "revoked" if status == "revoked" else "reinstated"
    local = effective.astimezone().isoformat(timespec="seconds")
    if effective > datetime.now(UTC) + timedelta(seconds=args.wait):
        sys.stdout.write(
            f"sent: permit {word} from {local} by resolution {args.resolution}; the "
            "aggregator applies it at that instant\n"
        )
        return 0
    if watch.seen.wait(args.wait + max(0.0, (effective - datetime.now(UTC)).total_seconds())):
        sys.stdout.write(f"recorded: permit {word} from {local} by resolution {args.resolution}\n")
        return 0
    raise CheckFailed(
        f"sent, but no status from the aggregator for event {args.event!r} showed the permit "
        f"{word} within {args.wait:g} s; check that the aggregator runs and reads "
        f"{watch.topics.clerk_permit(args.clerk)}"
    )
