"""The arguments of the field commands: the Clerk's, and setting up brokers and devices."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from kent_ops.broker.client import DEFAULT_BROKER_URL
from kent_ops.broker.credentials import ENV_URL, add_broker_arguments
from kent_ops.commands.parsers import EXAMPLE_EVENT, Sub, new_command, positive_float

__all__ = ["FIELD_COMMANDS"]


def _clerk(sub: Sub) -> None:
    p = sub.add_parser(  # type: ignore[attr-defined]
        "clerk",
        help="the Town Clerk revokes or reinstates the permit from an instant on (permit:G)",
    )
    clerk_sub = p.add_subparsers(dest="clerk_command", metavar="COMMAND", parser_class=type(p))
    clerk_sub.required = True
    for name, what in (("revoke", "revoke the permit"), ("reinstate", "issue it again")):
        pc = new_command(
            clerk_sub,
            name,
            f"{what} from an instant on, by a resolution of the Town Board (permit:G)",
            [
                f"kent-ops clerk {name} --event {EXAMPLE_EVENT} --resolution TB-2027-41 "
                "--reason 'no doctor on site since 14:10'",
                f"kent-ops clerk {name} --event {EXAMPLE_EVENT} --resolution TB-2027-41 "
                "--effective-at 2027-07-04T15:00:00-04:00 --clerk clerk-1",
            ],
            "kent_ops.commands.clerk:cli_clerk",
        )
        pc.add_argument("--event", required=True, metavar="ID", help="the event id of the permit")
        pc.add_argument(
            "--resolution", required=True, metavar="ID", help="the Town Board's resolution"
        )
        pc.add_argument("--reason", default="", metavar="TEXT", help="why, in one sentence")
        pc.add_argument(
            "--effective-at",
            metavar="ISO",
            help="when it takes effect, with an offset (default: now; never more than a "
            "minute in the past)",
        )
        pc.add_argument(
            "--clerk", default="clerk", metavar="ID", help="your clerk id (default %(default)s)"
        )
        pc.add_argument(
            "--wait",
            type=positive_float,
            default=10.0,
            metavar="S",
            help="how long to wait for the aggregator to show it (default %(default)g s)",
        )
        add_broker_arguments(pc)


def _deploy(sub: Sub) -> None:
    p = sub.add_parser(  # type: ignore[attr-defined]
        "deploy", help="field set-up: the broker's ACL, certificates, signing keys, bridges"
    )
    deploy_sub = p.add_subparsers(dest="deploy_command", metavar="COMMAND", parser_class=type(p))
    deploy_sub.required = True
    pa = new_command(
        deploy_sub,
        "acl",
        "write the broker's access list for a permit: each account may do its own job only",
        [
            "kent-ops deploy acl --permit permit.toml --inspector insp-1 --inspector insp-2 "
            "--clerk clerk-1 --notifier notify-1 --out /etc/mosquitto/kent-ops/acl"
        ],
        "kent_ops.commands.deploy:cli_acl",
    )
    pa.add_argument("--permit", required=True, metavar="P", help="the permit file (TOML)")
    for role, what in (
        ("inspector", "an inspector's id (once per inspector)"),
        ("clerk", "a Town Clerk's id (permit:G)"),
        ("notifier", "the id of a kent-ops notify service"),
    ):
        pa.add_argument(f"--{role}", action="append", default=[], metavar="ID", help=what)
    pa.add_argument("--out", metavar="FILE", help="write here (default: print it)")
    pcert = new_command(
        deploy_sub,
        "certs",
        "make a private certificate authority and the broker's certificate",
        [
            "kent-ops deploy certs --out /etc/mosquitto/kent-ops "
            "--host broker.local --host 192.168.1.10"
        ],
        "kent_ops.commands.deploy:cli_certs",
    )
    pcert.add_argument("--out", required=True, metavar="DIR", help="the folder to write into")
    pcert.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name or address devices use for the broker (repeat; default localhost)",
    )
    pkeys = new_command(
        deploy_sub,
        "keys",
        "make a signing keys file: one HMAC key per sensor of the permit",
        ["kent-ops deploy keys --permit permit.toml --out /etc/kent-ops/keys.toml"],
        "kent_ops.commands.deploy:cli_keys",
    )
    pkeys.add_argument("--permit", required=True, metavar="P", help="the permit file (TOML)")
    pkeys.add_argument("--out", required=True, metavar="FILE", help="the new keys file (TOML)")


def _users_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--users",
        metavar="FILE",
        help="the users file (default: $KENT_OPS_USERS, else /etc/kent-ops/users.json)",
    )


def _serve_users(serve_sub: Sub) -> None:
    p = serve_sub.add_parser(  # type: ignore[attr-defined]
        "users", help="who may sign in: add, list or remove a person"
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
            "kent-ops serve users add jsmith --role deputy --gate north",
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
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="how much the server logs to stderr (default %(default)s)",
    )
    serve_sub = p.add_subparsers(dest="serve_command", metavar="COMMAND", parser_class=type(p))
    _serve_users(serve_sub)


FIELD_COMMANDS: tuple[Callable[[Sub], None], ...] = (_clerk, _deploy, _serve)
"""Each adds one command group to the ``kent-ops`` parser."""
