"""Why a connection failed, in the words a person acts on: refused, or no such host."""

from __future__ import annotations

import socket

import pytest

from kent_ops.broker import refusal as module
from kent_ops.broker.refusal import host_problem, refusal


def test_a_refused_account_is_named() -> None:
    assert refusal(135, "deputy-south") == (
        "not authorised as deputy-south (check that account's broker password)"
    )


@pytest.mark.parametrize(
    ("errno", "says"),
    [
        (socket.EAI_NONAME, "the broker's host name 'brokr.local' was not found"),
        (socket.EAI_AGAIN, "the broker's host name 'brokr.local' could not be looked up "
                           "(no name server)"),
    ],
)  # fmt: skip
def test_a_host_name_that_does_not_resolve_is_said_so(
    monkeypatch: pytest.MonkeyPatch, errno: int, says: str
) -> None:
    def lookup(host: str, port: object) -> object:
        raise socket.gaierror(errno, "looked up")

    monkeypatch.setattr(module.socket, "getaddrinfo", lookup)
    assert host_problem("brokr.local") == says


def test_a_name_that_resolves_or_an_address_is_no_problem() -> None:
    assert host_problem("127.0.0.1") is None
    assert host_problem("localhost") is None
