"""No address or secret survives scrubbing, and a closed channel's failure is scrubbed."""

from __future__ import annotations

import logging

import pytest

from kent_ops.broker.mosquitto import free_port
from kent_ops.notify.config import Channel
from kent_ops.notify.delivery import Sender
from kent_ops.notify.message import Notice
from kent_ops.notify.scrub import BLOT, MAX_ERROR, channel_scheme, scrub, secrets_of

MAIL = "mailtos://mailer:Hunter2-pw@smtp.kent-ny.example:587?from=ops@kent-ny.example&to=jones@kent-ny.example"
SIGNAL = "signal://signal-gw.local:8080/+15551230000/+15557654321"
NTFY = "ntfys://tok_AbCdEf123456@ntfy.example/kent-insp-1-9f3a"


@pytest.mark.parametrize(
    ("url", "said", "hidden"),
    [
        (
            MAIL,
            'Sending email to "jones@kent-ny.example" failed. Login to smtp.kent-ny.example '
            "as mailer with Hunter2-pw refused",
            ["jones@", "kent-ny.example", "mailer", "Hunter2-pw"],
        ),
        (
            SIGNAL,
            "Failed to send Signal notification to +15557654321 via signal-gw.local:8080",
            ["15557654321", "signal-gw.local"],
        ),
        (
            NTFY,
            f"ntfy request to {NTFY} failed: 401 for topic kent-insp-1-9f3a",
            ["tok_AbCdEf123456", "kent-insp-1-9f3a", "ntfy.example"],
        ),
    ],
)
def test_every_part_of_the_url_is_blotted_out(url: str, said: str, hidden: list[str]) -> None:
    out = scrub(said, secrets_of(url))
    for secret in hidden:
        assert secret not in out
    assert BLOT in out


def test_addresses_phone_numbers_urls_and_ips_are_blotted_even_when_not_in_the_url() -> None:
    out = scrub("to bob@example.org and (845) 555-0123 via https://x.example/a at 10.0.0.7")
    assert "bob@" not in out
    assert "555-0123" not in out
    assert "x.example" not in out
    assert "10.0.0.7" not in out
    assert "to" in out  # the words around stay


def test_the_reason_stays_readable_and_short() -> None:
    assert scrub("[Errno 111] Connection refused") == "[Errno 111] Connection refused"
    assert len(scrub("x " * 1000)) == MAX_ERROR


def test_a_short_password_is_blotted_too() -> None:
    url = "mailto://me:pw@mail.example?to=a@mail.example"
    out = scrub("auth pw refused", secrets_of(url), password="pw")
    assert "pw" not in out


def test_the_scheme_is_the_channel_and_is_kept() -> None:
    assert channel_scheme(MAIL) == "mailtos"
    assert channel_scheme(" NTFYS://x/y") == "ntfys"
    assert "mailtos" not in secrets_of(MAIL)


def test_a_failed_attempt_says_why_without_the_address(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()  # nothing listens here: the mail server is down
    url = f"mailto://mailer:Hunter2-pw@127.0.0.1:{port}?from=ops@kent.example&to=jones@kent.example"
    sender = Sender(Channel("insp-1", 1, "mailto", url))
    with caplog.at_level(logging.DEBUG):
        error = sender.send(Notice("title", "body"))
    assert error is not None
    assert error.startswith("mailto: ")
    assert "refused" in error.lower()
    for secret in ("jones@", "ops@", "Hunter2", "mailer", str(port)):
        assert secret not in error
    # apprise's own lines (which name hosts and recipients) never reach the service's log.
    assert not [r for r in caplog.records if r.name.startswith("apprise")]
