"""What a broker's refusal of a connection means, in the words a person acts on.

A broker that answers but turns the account away (CONNACK with a failure code) is not
"unreachable": the network is fine and the password or the access list is wrong.
Mosquitto answers a wrong password and an unknown user alike ("not authorised"; MQTT
3.1.1 codes 4 and 5, which paho reports as 134 and 135), so the sentence names the
account that was refused, and the person can check that account's password.
"""

from __future__ import annotations

__all__ = ["refusal"]

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
