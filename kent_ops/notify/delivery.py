"""Sending through apprise, one channel at a time, and the queue of what is still to send.

apprise reaches mail (``mailto://``, ``mailtos://``), ntfy, SMS gateways, Signal and
many more from one URL per person and channel. Its log lines name recipients and
hosts, so its logger never reaches ours: :func:`quiet_apprise` cuts it off, and each
attempt captures apprise's lines only to build a scrubbed one-sentence reason for the
``sent`` record.

The :class:`Outbox` keeps one lane per channel, in order: a notice waits behind the
one before it on the same channel (a breach's end never arrives before its start),
while another channel's notices go ahead. A failed attempt puts the notice back at
the head of its lane with a longer delay (:meth:`kent_ops.notify.config.Retry.delay`).
apprise spaces the requests to one service (5.5 s for most) by sleeping; that sleep
would hold every other channel's notices too, so the sender turns it off and the
outbox keeps the same spacing per lane instead (:attr:`Sender.gap_s`).
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import apprise

from kent_ops.notify.config import Channel
from kent_ops.notify.ledger import NoticeKey
from kent_ops.notify.message import Notice
from kent_ops.notify.scrub import scrub, secrets_of

__all__ = ["Job", "Outbox", "Sender", "apprise_accepts", "quiet_apprise"]

Lane = tuple[str, int]
"""A channel's lane: (person id, channel number)."""
_REASON_WORDS = ("exception", "error", "failed", "refused", "timed out", "denied", "invalid")


def quiet_apprise() -> None:
    """apprise's log lines (they name addresses) never reach the service's log."""
    logger = logging.getLogger(apprise.LOGGER_NAME)
    logger.propagate = False
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


def apprise_accepts(url: str) -> bool:
    """Whether apprise knows how to send to ``url`` (its form, not whether it works)."""
    quiet_apprise()
    return bool(apprise.Apprise().add(url))


def _reason(captured: str) -> str:
    """apprise's lines that say why, joined (not yet scrubbed)."""
    lines = []
    for line in captured.splitlines():
        level, _, text = line.partition(" ")
        if level in ("WARNING", "ERROR", "CRITICAL") or any(
            w in text.lower() for w in _REASON_WORDS
        ):
            lines.append(text.strip())
    return "; ".join(dict.fromkeys(lines)) or "the channel did not accept the notice"


class Sender:
    """One channel, through its own apprise object; :meth:`send` is one attempt."""

    def __init__(self, channel: Channel) -> None:
        quiet_apprise()
        self.channel = channel
        self._apprise = apprise.Apprise()
        self._apprise.add(channel.url)
        self.gap_s = 0.0
        """The least time between two requests to this channel's service (apprise's own)."""
        for service in self._apprise:
            self.gap_s = max(self.gap_s, float(getattr(service, "request_rate_per_sec", 0) or 0))
            service.request_rate_per_sec = 0  # the outbox waits instead, per lane
        self._secrets = secrets_of(channel.url)
        self._password = urlsplit(channel.url).password

    def send(self, notice: Notice) -> str | None:
        """None once the channel took the notice, else why not (no address or secret in it)."""
        problem = ""
        with apprise.LogCapture(level=logging.DEBUG, fmt="%(levelname)s %(message)s") as cap:
            try:
                # Plain text in: a mail keeps its lines, a push converts it as it must.
                result = self._apprise.notify(
                    body=notice.body, title=notice.title, body_format=apprise.NotifyFormat.TEXT
                )
                ok = bool(result)
            except Exception as exc:  # a plugin's bug must not stop the other channels
                ok, problem = False, f"{type(exc).__name__}: {exc}"
            captured = cap.getvalue()
        if ok:
            return None
        reason = problem or _reason(captured)
        return scrub(f"{self.channel.scheme}: {reason}", self._secrets, self._password)


_ORDER = itertools.count()


@dataclass(slots=True)
class Job:
    """One notice on its way through one channel."""

    key: NoticeKey
    notice: Notice
    due: float = 0.0
    """When to try next (monotonic seconds)."""
    failures: int = 0
    first_attempt: float | None = None
    order: int = field(default_factory=lambda: next(_ORDER))
    """Among notices due at once, the older goes first (so the lanes take turns)."""


class Outbox:
    """One FIFO lane per channel; the head of each lane waits for its due time.

    Not thread-safe: the service guards it with its own condition variable.
    """

    def __init__(self) -> None:
        self._lanes: dict[Lane, deque[Job]] = {}

    def __len__(self) -> int:
        return sum(len(lane) for lane in self._lanes.values())

    def add(self, lane: Lane, job: Job) -> None:
        self._lanes.setdefault(lane, deque()).append(job)

    def next_due(self) -> float | None:
        """The earliest due time among the lanes' heads; None when nothing waits."""
        heads = [lane[0].due for lane in self._lanes.values() if lane]
        return min(heads) if heads else None

    def take(self, now: float) -> tuple[Lane, Job] | None:
        """The head that is due (the earliest), left in its lane until :meth:`done`."""
        heads = [(jobs[0].due, jobs[0].order, lane) for lane, jobs in self._lanes.items() if jobs]
        due = [h for h in heads if h[0] <= now]
        if not due:
            return None
        lane = min(due)[2]
        return lane, self._lanes[lane][0]

    def done(self, lane: Lane, not_before: float = 0.0) -> None:
        """The lane's head is finished (sent or given up): the next one may go, not before
        ``not_before`` (the channel's spacing)."""
        jobs = self._lanes[lane]
        jobs.popleft()
        if jobs:
            jobs[0].due = max(jobs[0].due, not_before)
        else:
            del self._lanes[lane]
