"""``kent-ops deploy``: field set-up files for one event.

``acl`` writes the broker's access list (:mod:`kent_ops.broker.acl` says who may do
what), ``certs`` a private certificate authority and the broker's certificate,
``keys`` one HMAC signing key per sensor (:mod:`kent_ops.core.wire.signing`),
``bridge`` the broker of a remote property and its bridge to the command post
(:mod:`kent_ops.broker.bridge`). The README's "Deploying at an event" walks a town's IT
person through all of it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kent_ops.broker.acl import (
    People,
    acl_text,
    bridge_topics,
    bridge_user,
    check_person_id,
    check_property,
    property_acl_text,
    property_users,
    users_for,
)
from kent_ops.broker.bridge import (
    BridgeSettings,
    bridge_config,
    broker_dropin,
    central_ca_path,
    tunnel_for,
)
from kent_ops.broker.client import BrokerAddress, parse_broker_url
from kent_ops.broker.credentials import read_password_file
from kent_ops.broker.tunnel import UNIT, stunnel_config, stunnel_unit
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.wire import generate_keys_file

__all__ = ["cli_acl", "cli_bridge", "cli_certs", "cli_keys", "make_certs", "write_keys"]


def _ids(role: str, ids: list[str]) -> list[str]:
    for who in ids:
        problem = check_person_id(role, who)
        if problem:
            raise UsageError(problem)
    return ids


def _properties(permit: Permit, ids: list[str]) -> list[str]:
    for property_id in ids:
        problem = check_property(permit, property_id)
        if problem:
            raise UsageError(problem)
    return ids


def cli_acl(args: argparse.Namespace) -> int:
    """``kent-ops deploy acl --permit P [--inspector ID …] [--bridge PROPERTY …] [--out FILE]``."""
    permit = load_permit(args.permit)
    people = People(
        inspectors=_ids("inspector", list(args.inspector)),
        clerks=_ids("clerk", list(getattr(args, "clerk", []) or [])),
        notifiers=_ids("notifier", list(getattr(args, "notifier", []) or [])),
        bridges=_properties(permit, list(getattr(args, "bridge", []) or [])),
        simulator=bool(getattr(args, "simulator", False)),
    )
    text = acl_text(permit, people)
    if args.out:
        Path(args.out).write_text(text)
        users = " ".join(users_for(permit, people))
        sys.stderr.write(
            f"wrote {args.out}; give each user a password with mosquitto_passwd: {users}\n"
        )
    else:
        sys.stdout.write(text)
    return 0


def _central(url: str, property_id: str) -> BrokerAddress:
    """The command post's broker from ``--central``: TLS, and no credentials in the URL."""
    address = parse_broker_url(url)
    if not address.tls:
        raise UsageError(
            f"--central {url!r} must be mqtts://host:port: the bridge crosses a radio or LTE "
            "link, so it always uses TLS"
        )
    if address.username is not None or address.password is not None:
        raise UsageError(
            f"--central takes no user name or password: the bridge logs in as "
            f"{bridge_user(property_id)}, with the password from --password-file"
        )
    return address


def _write(path: Path, text: str, mode: int) -> None:
    """Write ``text`` to ``path`` with ``mode`` from the first byte (it may hold a password)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), mode)
        f.write(text)


def cli_bridge(args: argparse.Namespace) -> int:
    """``kent-ops deploy bridge --permit P --property ID --central URL --password-file F``."""
    permit = load_permit(args.permit)
    problem = check_property(permit, args.property)
    if problem:
        raise UsageError(problem)
    central = _central(args.central, args.property)
    inspectors = _ids("inspector", list(args.inspector))
    if not bridge_topics(permit, args.property, inspectors).out:
        raise UsageError(
            f"property {args.property!r} has no gate, lot or staff station in the permit "
            "and no --inspector connects there: its bridge would carry nothing"
        )
    settings = BridgeSettings(
        property_id=args.property,
        central=central,
        password=read_password_file(args.password_file),
        etc_dir=Path(args.dir),
        data_dir=Path(args.data_dir),
        port=args.port,
        bind=args.bind,
        tls=args.tls,
        inspectors=inspectors,
        autosave_changes=args.autosave_changes,
        link_port=args.link_port,
    )
    if settings.link_port == settings.listen_port:
        raise UsageError(
            f"--link-port {settings.link_port} is the broker's own port: stunnel needs "
            "another one on the loopback"
        )
    text = bridge_config(permit, settings)
    if not args.out:
        sys.stdout.write(text)
        sys.stderr.write(
            "kent-ops: with --out the property's ACL, stunnel's configuration and the systemd "
            "files are written beside it\n"
        )
        return 0
    out = Path(args.out)
    _write(out, text, 0o640)
    written = _write_beside(out, permit, settings, inspectors)
    users = " ".join(property_users(permit, args.property, inspectors))
    sys.stderr.write(
        f"wrote {out} (it holds the bridge's password: mode 640) and beside it "
        f"{', '.join(p.name for p in written)}.\n"
        f"On the machine of {args.property}: put {out.name} in place of "
        f"/etc/mosquitto/mosquitto.conf, and into {settings.etc_dir}: {written[0].name}, "
        f"{written[1].name}, the command post's CA certificate as "
        f"{central_ca_path(settings.etc_dir).name}"
        f"{', ca.crt, server.crt and server.key' if settings.tls else ''}; give each user a "
        f"password in {settings.password_path} with mosquitto_passwd: {users}.\n"
        f"Install Debian's stunnel4, {written[2].name} in /etc/systemd/system/ and "
        f"{written[3].name} as /etc/systemd/system/mosquitto.service.d/kent-ops.conf: the "
        f"bridge reaches the command post only through stunnel (README, 'Several "
        f"properties').\n"
        f"At the command post: kent-ops deploy acl ... --bridge {args.property}, and the "
        f"same password for {bridge_user(args.property)}.\n"
    )
    return 0


def _write_beside(
    out: Path, permit: Permit, settings: BridgeSettings, inspectors: list[str]
) -> list[Path]:
    """The property's ACL, stunnel's configuration, its unit and the broker's drop-in."""
    tunnel = tunnel_for(settings)
    files = [
        (
            settings.acl_path.name,
            property_acl_text(permit, settings.property_id, inspectors),
            0o640,
        ),
        (tunnel.config_path.name, stunnel_config(tunnel), 0o644),
        (UNIT, stunnel_unit(tunnel), 0o644),
        ("kent-ops-broker.conf", broker_dropin(), 0o644),
    ]
    for name, text, mode in files:
        _write(out.parent / name, text, mode)
    return [out.parent / name for name, _, _ in files]


def make_certs(out: Path, hosts: list[str], days: int = 825) -> dict[str, Path]:
    """A self-signed CA and a broker certificate for ``hosts``, made with openssl.

    Returns the paths of ``ca.crt`` (give it to every client), ``server.crt`` and
    ``server.key`` (the broker's). The CA's key stays in ``out`` too: keep it offline.
    """
    openssl = shutil.which("openssl")
    if openssl is None:
        raise UsageError("openssl is not installed (apt-get install openssl)")
    out.mkdir(parents=True, exist_ok=True)
    hosts = hosts or ["localhost"]
    san = ",".join(
        (f"IP:{h}" if h.replace(".", "").isdigit() or ":" in h else f"DNS:{h}") for h in hosts
    )
    paths = {
        "ca_key": out / "ca.key",
        "ca_crt": out / "ca.crt",
        "server_key": out / "server.key",
        "server_csr": out / "server.csr",
        "server_crt": out / "server.crt",
    }

    def run(*argv: str) -> None:
        result = subprocess.run([openssl, *argv], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["unknown error"])[-1]
            raise UsageError(f"openssl failed: {last}")

    run(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", str(days),
        "-keyout", str(paths["ca_key"]), "-out", str(paths["ca_crt"]),
        "-subj", "/CN=kent-ops field CA",
    )  # fmt: skip
    run(
        "req", "-newkey", "rsa:2048", "-nodes", "-sha256",
        "-keyout", str(paths["server_key"]), "-out", str(paths["server_csr"]),
        "-subj", f"/CN={hosts[0]}",
    )  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".ext", delete=False) as ext:
        ext.write(f"subjectAltName={san}\nextendedKeyUsage=serverAuth\n")
    try:
        run(
            "x509", "-req", "-in", str(paths["server_csr"]),
            "-CA", str(paths["ca_crt"]), "-CAkey", str(paths["ca_key"]), "-CAcreateserial",
            "-out", str(paths["server_crt"]), "-days", str(days), "-sha256",
            "-extfile", ext.name,
        )  # fmt: skip
    finally:
        Path(ext.name).unlink(missing_ok=True)
    paths["ca_key"].chmod(0o600)
    paths["server_key"].chmod(0o640)
    return paths


def cli_certs(args: argparse.Namespace) -> int:
    """``kent-ops deploy certs --out DIR [--host NAME …]``."""
    paths = make_certs(Path(args.out), list(args.host))
    print(f"CA certificate (give to every client): {paths['ca_crt']}")
    print(f"broker certificate and key: {paths['server_crt']} {paths['server_key']}")
    print(f"CA key (keep offline): {paths['ca_key']}")
    return 0


def write_keys(permit: Permit, out: Path) -> list[str]:
    """Write a new keys file for every sensor of the permit, readable by its owner only.

    An existing file is never overwritten: its keys are on the devices already, and
    replacing them would make the aggregator reject every sensor at once. Returns the
    sensor ids that got a key.
    """
    sensors = list(permit.sensors)
    text = generate_keys_file(sensors)
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(
            f"{out} exists already; its keys may be on the devices, so it is not replaced "
            "(remove it first to make new keys)"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return sensors


def cli_keys(args: argparse.Namespace) -> int:
    """``kent-ops deploy keys --permit P --out FILE``."""
    permit = load_permit(args.permit)
    out = Path(args.out)
    sensors = write_keys(permit, out)
    try:
        shown = out.resolve().relative_to(Path(args.permit).resolve().parent)
    except ValueError:
        shown = out.resolve()
    print(f"wrote {out} with a signing key for each of {len(sensors)} sensors: {' '.join(sensors)}")
    print(f'to sign, add to the permit: [signing] keys_file = "{shown}"')
    print("give each device its key (python -m sensors.<device> ... --keys FILE); keep it secret")
    return 0
