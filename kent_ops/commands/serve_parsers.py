"""The arguments of ``kent-ops serve``: the dashboards in a browser, and who may sign in."""

from __future__ import annotations

import argparse

from kent_ops.broker.client import DEFAULT_BROKER_URL
from kent_ops.broker.credentials import ENV_URL
from kent_ops.commands.parsers import (
    EXAMPLE_EVENT,
    Sub,
    add_witness_keep,
    new_command,
    new_group,
    positive_float,
)

__all__ = ["add_serve"]

APP_MEMORY_MB = 512
"""Each app's heap cap by default (kent_ops.web.apps.APP_MEMORY_MB; not imported, so the
parser stays light)."""
APP_STARTS = ("fork", "exec")
"""How app processes begin (kent_ops.web.apps.APP_STARTS, not imported either)."""


def _users_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--users",
        metavar="FILE",
        help="the users file (default: $KENT_OPS_USERS, else /etc/kent-ops/users.json)",
    )


def _serve_users(serve_sub: Sub) -> None:
    p = new_group(
        serve_sub,
        "users",
        "who may sign in: add, list or remove a person",
        [
            "kent-ops serve users add insp-1 --role inspector",
            "kent-ops serve users add jsmith --role deputy --gate north --permit permit.toml",
            "kent-ops serve users list",
            "kent-ops serve users remove jsmith",
        ],
    )
    users_sub = p.add_subparsers(dest="users_command", metavar="COMMAND", parser_class=type(p))
    users_sub.required = True
    target = "kent_ops.commands.serve:cli_users"
    pa = new_command(
        users_sub,
        "add",
        "add a person (or set a new password): asked twice, never on the command line; "
        "it must be their broker password",
        [
            "kent-ops serve users add insp-1 --role inspector",
            "kent-ops serve users add jsmith --role deputy --gate north --permit permit.toml",
            "kent-ops serve users add clerk-1 --role clerk --users /etc/kent-ops/users.json",
        ],
        target,
    )
    pa.add_argument(
        "name",
        metavar="NAME",
        help="the sign-in name: the inspector's or clerk's id, any name for a deputy",
    )
    pa.add_argument(
        "--role",
        required=True,
        choices=("inspector", "deputy", "clerk"),
        help="inspector: the dashboard; clerk: the dashboard as the Town Clerk; "
        "deputy: the gate view of --gate",
    )
    pa.add_argument("--gate", metavar="G", help="a deputy's gate, e.g. north")
    pa.add_argument(
        "--password-file",
        metavar="FILE",
        help="read the password from this private file (for scripts) instead of asking",
    )
    pa.add_argument(
        "--permit",
        metavar="P",
        help="the event's permit: a deputy's --gate must be one of its gates (required "
        "for deputies)",
    )
    _users_option(pa)
    pl = new_command(
        users_sub, "list", "list who may sign in", ["kent-ops serve users list"], target
    )
    _users_option(pl)
    pr = new_command(
        users_sub,
        "remove",
        "remove a person; their open sessions end at once",
        ["kent-ops serve users remove jsmith"],
        target,
    )
    pr.add_argument("name", metavar="NAME", help="the sign-in name to remove")
    _users_option(pr)


def _serve(sub: Sub) -> None:
    p = new_command(
        sub,
        "serve",
        "the inspector dashboard and the gate views in a web browser (phones, tablets), "
        "each person signed in with their own account",
        [
            f"kent-ops serve --event {EXAMPLE_EVENT} --listen 0.0.0.0:8443 "
            "--broker mqtts://broker.local:8883 --ca-file ca.crt "
            "--tls-cert web.crt --tls-key web.key",
            f"kent-ops serve --event {EXAMPLE_EVENT} --listen 127.0.0.1:8080 --users ./users.json",
            "kent-ops serve users add insp-1 --role inspector",
        ],
        "kent_ops.commands.serve:cli_serve",
    )
    p.add_argument(
        "--event", metavar="ID", help=f"the event id of the permit, e.g. {EXAMPLE_EVENT}"
    )
    p.add_argument(
        "--broker",
        metavar="URL",
        help="mqtt://host:port or mqtts://… (no user: each person's app uses their own) "
        f"(default: ${ENV_URL}, else {DEFAULT_BROKER_URL})",
    )
    p.add_argument("--ca-file", metavar="PEM", help="the CA certificate of an mqtts:// broker")
    p.add_argument(
        "--listen",
        default="127.0.0.1:8080",
        metavar="HOST:PORT",
        help="where browsers connect (default %(default)s; 0.0.0.0:8443 for the event network)",
    )
    _users_option(p)
    p.add_argument("--tls-cert", metavar="C", help="HTTPS certificate (kent-ops deploy certs)")
    p.add_argument("--tls-key", metavar="K", help="its private key")
    p.add_argument(
        "--session-minutes",
        type=positive_float,
        default=720.0,
        metavar="M",
        help="a sign-in lasts this long, then its apps close (default %(default)g)",
    )
    p.add_argument(
        "--state-dir",
        metavar="DIR",
        help="where the gate views keep their manual tallies (default ~/.local/state/kent-ops)",
    )
    p.add_argument("--keys", metavar="FILE", help="the tallies' signing keys, when the event signs")
    add_witness_keep(p, "witness/EVENT.jsonl under --state-dir (or ~/.local/state/kent-ops)")
    p.add_argument(
        "--app-memory-mb",
        default=str(APP_MEMORY_MB),
        metavar="MB",
        help="each person's app may use this much memory (MiB), then it fails alone "
        "(default %(default)s)",
    )
    p.add_argument(
        "--app-start",
        choices=APP_STARTS,
        default=APP_STARTS[0],
        help="fork each app from one process that has imported them (shares their code's "
        "memory, starts faster; Linux), or exec a fresh Python for each (default %(default)s)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="how much the server logs to stderr (default %(default)s)",
    )
    serve_sub = p.add_subparsers(dest="serve_command", metavar="COMMAND", parser_class=type(p))
    _serve_users(serve_sub)


add_serve = _serve
