"""The broker's address and password, without the password ever on a command line.

A password given as ``--broker mqtt://user:PASSWORD@host`` shows in ``ps`` and
``/proc/*/cmdline`` to every local user and stays in shell history. Every kent-ops
program therefore takes the URL without a password and the password from, in order:

1. ``--password-file FILE``, a file only its owner may read (one readable by others is
   refused, saying so);
2. the environment: ``KENT_OPS_BROKER_PASSWORD``, or the password inside
   ``KENT_OPS_BROKER`` (a whole URL, also the default ``--broker``), which a systemd
   unit sets from an ``EnvironmentFile`` readable by root only.

A password still written into ``--broker`` works, with a warning.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from dataclasses import replace
from pathlib import Path

from kent_ops.broker.client import DEFAULT_BROKER_URL, BrokerAddress, parse_broker_url
from kent_ops.core.errors import UsageError

__all__ = [
    "ENV_PASSWORD",
    "ENV_URL",
    "add_broker_arguments",
    "broker_from_args",
    "read_password_file",
    "read_private_file",
    "resolve_broker",
]

ENV_URL = "KENT_OPS_BROKER"
ENV_PASSWORD = "KENT_OPS_BROKER_PASSWORD"
_ON_COMMAND_LINE = (
    "a password in --broker is visible to every local user (ps) and kept in shell "
    f"history; use --password-file or {ENV_PASSWORD} instead"
)


def add_broker_arguments(
    parser: argparse.ArgumentParser, *, default: str | None = "env", unset: str = ""
) -> None:
    """``--broker``, ``--password-file`` and ``--ca-file``, the same on every program.

    ``default="env"`` takes ``$KENT_OPS_BROKER`` or ``mqtt://localhost:1883``; None
    leaves it unset, and ``unset`` says what the program does then (the demo starts a
    broker of its own): a help that says "none" tells no one what happens.
    """
    shown = f"${ENV_URL}, else {DEFAULT_BROKER_URL}" if default == "env" else unset or "none"
    parser.add_argument(
        "--broker",
        default=None,
        metavar="URL",
        help=f"mqtt://[user@]host:port or mqtts://… for TLS (default: {shown})",
    )
    parser.add_argument(
        "--password-file",
        metavar="FILE",
        help=f"the broker password, in a file only you may read (or set {ENV_PASSWORD})",
    )
    parser.add_argument("--ca-file", metavar="PEM", help="the CA certificate of an mqtts:// broker")
    parser.set_defaults(broker_default=default)


def read_private_file(path: str | Path, what: str, why: str = "") -> str:
    """The text of a file only its owner may read; ``what`` names it in the sentence.

    Raises:
        UsageError: missing, unreadable, not a regular file, or readable by others
            (saying how to make it private; ``why`` says what is at stake).
    """
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise UsageError(f"{what} {p}: no such file") from None
    except PermissionError:
        raise UsageError(f"{what} {p} cannot be read (permission denied)") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{what} {p} is not a regular file")
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UsageError(
            f"{what} {p} may be read by others (mode {stat.S_IMODE(info.st_mode):o}){why}; "
            f"make it private with: chmod 600 {p}"
        )
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what} {p} cannot be read ({exc})") from None


def read_password_file(path: str | Path) -> str:
    """The first line of a password file that only its owner may read."""
    lines = read_private_file(path, "password file").splitlines()
    password = lines[0].strip() if lines else ""
    if not password:
        raise UsageError(f"password file {path} is empty")
    return password


def resolve_broker(
    url: str | None,
    password_file: str | None = None,
    *,
    environ: dict[str, str] | None = None,
    warn: bool = True,
) -> BrokerAddress:
    """The broker to connect to, with its password from the file or the environment.

    Args:
        url: ``--broker`` as given on the command line, or None for the default.
        password_file: ``--password-file``, if given.
        environ: the environment (``os.environ`` by default).
        warn: say on stderr when the password came on the command line.
    """
    env = os.environ if environ is None else environ
    from_env = url is None
    address = parse_broker_url(url or env.get(ENV_URL) or DEFAULT_BROKER_URL)
    if address.password is not None and not from_env:
        if warn:
            sys.stderr.write(f"kent-ops: warning: {_ON_COMMAND_LINE}\n")
        return address
    if password_file is not None:
        return replace(address, password=read_password_file(password_file))
    password = env.get(ENV_PASSWORD)
    if password:
        return replace(address, password=password)
    if address.password is None and env.get(ENV_URL) and not from_env:
        # The URL on the command line names the broker; the environment's URL may hold
        # the password for the same user and host.
        stored = parse_broker_url(env[ENV_URL])
        if (stored.host, stored.port, stored.username) == (
            address.host,
            address.port,
            address.username,
        ):
            return replace(address, password=stored.password)
    return address


def broker_from_args(args: argparse.Namespace) -> BrokerAddress:
    """:func:`resolve_broker` for a namespace built with :func:`add_broker_arguments`."""
    return resolve_broker(getattr(args, "broker", None), getattr(args, "password_file", None))
