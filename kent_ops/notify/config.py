"""The notifier's config file: who is told about which alerts, through which channels.

The file (TOML, examples/notify.toml explains every key) holds apprise URLs, and an
SMTP password or an API token lives inside such a URL: like the broker's password
file, a config file that anyone but its owner may read is refused. No problem found in
it ever quotes a URL: a person and a channel are named by the person's id and the
channel's number.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kent_ops.broker.acl import check_person_id
from kent_ops.broker.credentials import read_private_file
from kent_ops.core.errors import UsageError
from kent_ops.notify.scrub import channel_scheme

__all__ = [
    "SEVERITIES",
    "Channel",
    "NotifyConfig",
    "Person",
    "Retry",
    "load_config",
    "parse_config",
]

SEVERITIES = ("breach", "warning", "data")
_TOP_KEYS = {"id", "dashboard", "state_file", "retry", "people"}
_RETRY_KEYS = {"first_delay_s", "max_delay_s", "give_up_after_s"}
_PERSON_KEYS = {"id", "severities", "channels"}

UrlCheck = Callable[[str], bool]
"""Whether apprise can send to a URL (a stand-in in unit tests of the file's shape)."""


@dataclass(frozen=True, slots=True)
class Retry:
    """How a channel that is down is tried again: exponential delays, capped, then given up."""

    first_delay_s: float = 5.0
    max_delay_s: float = 120.0
    give_up_after_s: float = 1800.0

    def delay(self, failures: int) -> float:
        """The wait after the ``failures``-th failed attempt in a row (1, 2, …)."""
        exponent = min(max(failures - 1, 0), 60)
        return min(self.first_delay_s * 2.0**exponent, self.max_delay_s)


@dataclass(frozen=True, slots=True)
class Channel:
    """One way to reach one person; the URL is never shown (``repr`` leaves it out)."""

    person: str
    number: int
    """Its place in the person's ``channels`` list, from 1: how logs and the ledger name it."""
    scheme: str
    url: str = field(repr=False)

    @property
    def label(self) -> str:
        """How a log line names it: ``insp-2 #1 (mailto)``."""
        return f"{self.person} #{self.number} ({self.scheme})"


@dataclass(frozen=True, slots=True)
class Person:
    id: str
    severities: frozenset[str]
    channels: tuple[Channel, ...]


@dataclass(frozen=True, slots=True)
class NotifyConfig:
    id: str
    """The notifier's id: it publishes on ``notifier/{id}/sent`` as broker user
    ``notifier-{id}``."""
    dashboard: str
    state_file: Path
    retry: Retry
    people: tuple[Person, ...]


def _private_text(path: Path) -> str:
    """The file's text, refused when others may read it (it holds channel passwords)."""
    why = " and its channel URLs hold addresses and passwords"
    return read_private_file(path, "notify config", why)


def load_config(path: str | Path, url_ok: UrlCheck) -> NotifyConfig:
    """Read and check a notify config file; every problem in one UsageError."""
    p = Path(path)
    text = _private_text(p)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"notify config {p} is not valid TOML ({exc})") from None
    return parse_config(data, p.parent, url_ok, source=str(p))


def _unknown(where: str, table: dict[str, Any], known: set[str], problems: list[str]) -> None:
    for key in sorted(set(table) - known):
        problems.append(f"{where}: unknown key {key!r}")


def _number(table: dict[str, Any], key: str, default: float, where: str, bad: list[str]) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        bad.append(f"{where}{key}: must be a number of seconds above 0")
        return default
    return float(value)


def _retry(table: Any, problems: list[str]) -> Retry:
    if table is None:
        return Retry()
    if not isinstance(table, dict):
        problems.append("retry: must be a table ([retry])")
        return Retry()
    _unknown("retry", table, _RETRY_KEYS, problems)
    d = Retry()
    first = _number(table, "first_delay_s", d.first_delay_s, "retry.", problems)
    cap = _number(table, "max_delay_s", d.max_delay_s, "retry.", problems)
    give_up = _number(table, "give_up_after_s", d.give_up_after_s, "retry.", problems)
    if cap < first:
        problems.append("retry.max_delay_s: must be at least first_delay_s")
    return Retry(first, cap, give_up)


def _severities(value: Any, where: str, problems: list[str]) -> frozenset[str]:
    if value is None:
        return frozenset({"breach"})
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        problems.append(f'{where}.severities: must be a list such as ["breach", "warning"]')
        return frozenset({"breach"})
    unknown = [v for v in value if v not in SEVERITIES]
    if unknown:
        problems.append(
            f"{where}.severities: {', '.join(map(repr, unknown))} is not one of "
            f"{', '.join(SEVERITIES)}"
        )
    return frozenset(v for v in value if v in SEVERITIES)


def _channels(
    who: str, value: Any, where: str, url_ok: UrlCheck, problems: list[str]
) -> tuple[Channel, ...]:
    if not isinstance(value, list) or not value:
        problems.append(f"{where}.channels: must list at least one apprise URL")
        return ()
    out: list[Channel] = []
    for n, url in enumerate(value, start=1):
        if not isinstance(url, str) or "://" not in url:
            problems.append(f"{where} channel {n}: must be a URL such as mailtos://…")
        elif not url_ok(url):
            problems.append(
                f"{where} channel {n} ({channel_scheme(url)}): apprise cannot send to this URL "
                "(check its form at https://github.com/caronc/apprise/wiki)"
            )
        else:
            out.append(Channel(who, n, channel_scheme(url), url.strip()))
    return tuple(out)


def _person(entry: Any, index: int, url_ok: UrlCheck, problems: list[str]) -> Person | None:
    where = f"people[{index}]"
    if not isinstance(entry, dict):
        problems.append(f"{where}: must be a table ([[people]])")
        return None
    who = entry.get("id")
    if not isinstance(who, str) or check_person_id("person", who):
        problems.append(f'{where}.id: must be the person\'s id, e.g. "insp-2" (no / + #)')
        return None
    where = f"{where} ({who})"
    _unknown(where, entry, _PERSON_KEYS, problems)
    severities = _severities(entry.get("severities"), where, problems)
    channels = _channels(who, entry.get("channels"), where, url_ok, problems)
    return Person(who, severities, channels)


def _people(value: Any, url_ok: UrlCheck, problems: list[str]) -> tuple[Person, ...]:
    if not isinstance(value, list) or not value:
        problems.append("people: name at least one person ([[people]] with id and channels)")
        return ()
    people: list[Person] = []
    for index, entry in enumerate(value):
        person = _person(entry, index, url_ok, problems)
        if person is None:
            continue
        if any(p.id == person.id for p in people):
            problems.append(f"people[{index}].id: {person.id!r} is named twice")
        people.append(person)
    return tuple(people)


def parse_config(
    data: dict[str, Any], base: Path, url_ok: UrlCheck, *, source: str = "notify config"
) -> NotifyConfig:
    """The config from a parsed TOML table; ``state_file`` is relative to ``base``."""
    problems: list[str] = []
    _unknown("config", data, _TOP_KEYS, problems)
    ident = data.get("id", "notify-1")
    if not isinstance(ident, str) or check_person_id("notifier", ident):
        problems.append('id: must be the notifier\'s id, e.g. "notify-1" (no / + #)')
    dashboard = data.get("dashboard", "")
    if not isinstance(dashboard, str):
        problems.append("dashboard: must be the link to the dashboard, a string")
    state = data.get("state_file")
    if not isinstance(state, str) or not state.strip():
        problems.append(
            "state_file: must name the file where notify remembers what it sent, "
            'e.g. "/var/lib/kent-ops-notify/sent.json"'
        )
    retry = _retry(data.get("retry"), problems)
    people = _people(data.get("people"), url_ok, problems)
    if problems:
        raise UsageError(f"{source}: " + "; ".join(problems))
    return NotifyConfig(
        id=str(ident),
        dashboard=str(dashboard).strip(),
        state_file=base / str(state),
        retry=retry,
        people=people,
    )
