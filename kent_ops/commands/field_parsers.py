"""The arguments of the field commands: the Clerk's, setting up brokers and devices, and
the notifier."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from kent_ops.broker.bridge import DEFAULT_DATA_DIR, DEFAULT_ETC_DIR
from kent_ops.broker.credentials import add_broker_arguments
from kent_ops.broker.persistence import AUTOSAVE_CHANGES
from kent_ops.broker.tunnel import DEFAULT_LINK_PORT
from kent_ops.commands.parsers import (
    EXAMPLE_EVENT,
    Sub,
    add_witness_keep,
    new_command,
    new_group,
    positive_float,
)
from kent_ops.commands.serve_parsers import add_serve

__all__ = ["FIELD_COMMANDS"]


def _clerk(sub: Sub) -> None:
    p = new_group(
        sub,
        "clerk",
        "the Town Clerk revokes or reinstates the permit from an instant on (permit:G)",
        [
            f"kent-ops clerk revoke --event {EXAMPLE_EVENT} --resolution TB-2027-41 "
            "--reason 'no doctor on site since 14:10'",
            f"kent-ops clerk reinstate --event {EXAMPLE_EVENT} --resolution TB-2027-42 "
            "--reason 'a doctor on site again'",
            "kent-ops clerk revoke --help",
        ],
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
    p = new_group(
        sub,
        "deploy",
        "field set-up: the broker's ACL, certificates, signing keys, bridges",
        [
            "kent-ops deploy certs --out /etc/mosquitto/kent-ops --host broker.local",
            "kent-ops deploy acl --permit permit.toml --inspector insp-1 --clerk clerk-1 "
            "--out /etc/mosquitto/kent-ops/acl",
            "kent-ops deploy keys --permit permit.toml --out /etc/kent-ops/keys.toml",
            "kent-ops deploy bridge --help",
        ],
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
    pa.add_argument(
        "--bridge",
        action="append",
        default=[],
        metavar="PROPERTY",
        help="a remote property whose broker is bridged here: an account bridge-PROPERTY "
        "for exactly its topics (repeat; see deploy bridge)",
    )
    pa.add_argument(
        "--simulator",
        action="store_true",
        help="also an account `simulator` for kent-ops simulate, for a rehearsal only (it may "
        "publish as every sensor: never on an event's broker)",
    )
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
    _deploy_bridge(deploy_sub)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} must be from 1 to 65535")
    return value


def _changes(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of changes") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _deploy_bridge(deploy_sub: Sub) -> None:
    p = new_command(
        deploy_sub,
        "bridge",
        "write the Mosquitto configuration of a remote property's own broker, bridged to "
        "the command post over TLS, and that property's ACL",
        [
            "kent-ops deploy bridge --permit permit.toml --property camping-meadow "
            "--central mqtts://broker.local:8883 --password-file bridge.password "
            "--out camping-meadow.conf",
            "kent-ops deploy bridge --permit permit.toml --property overflow-parking "
            "--central mqtts://192.168.1.10:8883 --password-file bridge.password --tls "
            "--inspector insp-1 --out overflow-parking.conf",
        ],
        "kent_ops.commands.deploy:cli_bridge",
    )
    p.add_argument("--permit", required=True, metavar="P", help="the permit file (TOML)")
    p.add_argument(
        "--property", required=True, metavar="ID", help="the property, as in [[properties]]"
    )
    p.add_argument(
        "--central",
        required=True,
        metavar="URL",
        help="the command post's broker, mqtts://host:port (no user, no password)",
    )
    p.add_argument(
        "--password-file",
        required=True,
        metavar="FILE",
        help="bridge-PROPERTY's password at the command post, in a file only you may read",
    )
    p.add_argument(
        "--dir",
        default=str(DEFAULT_ETC_DIR),
        metavar="DIR",
        help="the folder on the property's machine holding the ACL, the passwords and the "
        "certificates (default %(default)s)",
    )
    p.add_argument(
        "--data-dir",
        default=str(DEFAULT_DATA_DIR),
        metavar="DIR",
        help="where that broker keeps its persistent database (default %(default)s)",
    )
    p.add_argument(
        "--port",
        type=_port,
        metavar="N",
        help="the port for the property's devices (default 8883 with --tls, else 1883)",
    )
    p.add_argument("--bind", metavar="ADDR", help="listen on this address only (default: all)")
    p.add_argument(
        "--tls",
        action="store_true",
        help="TLS for the property's devices too (ca.crt, server.crt, server.key in --dir)",
    )
    p.add_argument(
        "--inspector",
        action="append",
        default=[],
        metavar="ID",
        help="an inspector who may connect at this property (repeat; the same ids as deploy acl)",
    )
    _bridge_machine(p)


def _bridge_machine(p: argparse.ArgumentParser) -> None:
    """What ``deploy bridge`` sets on the property's machine beyond its listener."""
    p.add_argument(
        "--autosave-changes",
        type=_changes,
        default=AUTOSAVE_CHANGES,
        metavar="N",
        help="save to disk after N changes (messages held or delivered): a kill -9 or power "
        "cut loses at most N-1 acknowledged messages (default %(default)s)",
    )
    p.add_argument(
        "--link-port",
        type=_port,
        default=DEFAULT_LINK_PORT,
        metavar="N",
        help="the loopback port of stunnel, which carries the bridge over TLS "
        "(default %(default)s)",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="write the configuration here, and the ACL, stunnel's configuration and the systemd "
        "files beside it (default: print the configuration)",
    )


def _notify(sub: Sub) -> None:
    p = new_command(
        sub,
        "notify",
        "send each new breach, and its end, to inspectors' phones and mail, and record what "
        "was sent",
        [
            "kent-ops notify --permit permit.toml --config /etc/kent-ops/notify.toml",
            "KENT_OPS_BROKER=mqtt://notifier-notify-1@127.0.0.1:1883 "
            "KENT_OPS_BROKER_PASSWORD=… kent-ops notify --permit P --config notify.toml",
        ],
        "kent_ops.commands.notify:cli_notify",
    )
    p.add_argument("--permit", required=True, metavar="P", help="the permit file (TOML)")
    p.add_argument(
        "--config",
        required=True,
        metavar="FILE",
        help="who is told what, and how (TOML, readable by its owner only; see "
        "examples/notify.toml)",
    )
    add_broker_arguments(p)
    add_witness_keep(p, "witness/EVENT.jsonl beside the config's state_file")
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="how much the service logs to stderr (default %(default)s)",
    )


FIELD_COMMANDS: tuple[Callable[[Sub], None], ...] = (_clerk, _deploy, _notify, add_serve)
"""Each adds one command group to the ``kent-ops`` parser."""
