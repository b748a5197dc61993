"""What a broker's refusal of a connection means, in the words a person acts on.

A broker that answers but turns the account away (CONNACK with a failure code) is not
"unreachable": the network is fine and the password or the access list is wrong.
Mosquitto answers a wrong password and an unknown user alike ("not authorised"; MQTT
3.1.1 codes 4 and 5, which paho reports as 134 and 135), so the sentence names the
account that was refused, and the person can check that account's password.

A broker that does not answer at all is unreachable, unless its address names a host
that does not exist (a mistyped ``--broker``): then that is what the person must fix,
and :func:`host_problem` says so.
"""

from __future__ import annotations

import socket

__all__ = ["host_problem", "refusal"]

_BAD_CREDENTIALS = 134
_NOT_AUTHORISED = 135
_BANNED = 138
_BAD_AUTH_METHOD = 140


def refusal(code: object, username: str | None) -> str:
    """The sentence for a refused connection; ``code`` is paho's reason code (or its value)."""
    value = getattr(code, "value", code)
    who = username or "an anonymous client"
    if value in (_BAD_CREDENTIALS, _NOT_AUTHORISED, _BAD_AUTH_METHOD):
        return f"not authorised as {who} (check that account's broker password)"
    if value == _BANNED:
        return f"{who} is banned by the broker"
    return f"refused {who}: {code}"


_NOT_FOUND = {socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)}


def host_problem(host: str) -> str | None:
    """Why the broker's host name cannot be used, or None when it resolves (or is an
    address): looked up once a connection failed, so a name that does not exist reads
    as that, not as a broker that does not answer. Blocks for the lookup."""
    try:
        socket.getaddrinfo(host, None)
    except socket.gaierror as exc:
        if exc.errno in _NOT_FOUND:
            return f"the broker's host name {host!r} was not found"
        if exc.errno == socket.EAI_AGAIN:
            return f"the broker's host name {host!r} could not be looked up (no name server)"
        return None
    except (OSError, UnicodeError):
        return None
    return None
