"""The arguments of ``kent-ops adapt`` (kept apart so parsing imports nothing heavy)."""

from __future__ import annotations

from collections.abc import Callable

from kent_ops.broker.credentials import add_broker_arguments
from kent_ops.commands.parsers import Sub, new_command

__all__ = ["ADAPT_COMMANDS"]


def _adapt(sub: Sub) -> None:
    p = new_command(
        sub,
        "adapt",
        "rented devices' own messages (LoRaWAN network servers, commercial counters, any "
        "JSON) into kent-ops payloads, each device's bytes kept in the evidence log",
        [
            "kent-ops adapt --permit permit.toml",
            "KENT_OPS_SOURCE_PASSWORD=… kent-ops adapt --permit P "
            "--source-broker mqtts://kent-parking@ttn@eu1.cloud.thethings.network:8883",
            "kent-ops adapt --permit P --http-listen 0.0.0.0:8443 --tls-cert broker.crt "
            "--tls-key broker.key --tokens devices.toml",
        ],
        "kent_ops.commands.adapt:cli_adapt",
    )
    p.add_argument("--permit", required=True, metavar="P", help="the permit file (TOML)")
    add_broker_arguments(p)
    p.add_argument(
        "--source-broker",
        metavar="URL",
        help="the devices' broker, e.g. a LoRaWAN network server's, as mqtt[s]://[user@]host:port "
        "(default: the event's broker)",
    )
    p.add_argument(
        "--source-password-file",
        metavar="FILE",
        help="the devices' broker password (or API key), in a file only you may read "
        "(or set KENT_OPS_SOURCE_PASSWORD)",
    )
    p.add_argument("--source-ca-file", metavar="PEM", help="the CA of an mqtts:// devices' broker")
    p.add_argument(
        "--state-dir",
        metavar="DIR",
        help="where each device's totals, seq and frame counter are kept "
        "(default ~/.local/state/kent-ops/adapt)",
    )
    p.add_argument(
        "--http-listen",
        metavar="HOST:PORT",
        help="take posts from devices that can only send HTTP (sources with http = true)",
    )
    p.add_argument("--tls-cert", metavar="PEM", help="the HTTPS endpoint's certificate")
    p.add_argument("--tls-key", metavar="PEM", help="the HTTPS endpoint's private key")
    p.add_argument(
        "--tokens",
        metavar="FILE",
        help='each HTTP device\'s token (sensor = "token"), a file only you may read',
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="how much the adapter logs to stderr (default %(default)s)",
    )


ADAPT_COMMANDS: tuple[Callable[[Sub], None], ...] = (_adapt,)
"""Adds ``kent-ops adapt`` to the ``kent-ops`` parser."""
