"""``kent-ops deploy``: field set-up files for one event.

``acl`` writes the broker's access list (:mod:`kent_ops.broker.acl` says who may do
what), ``certs`` a private certificate authority and the broker's certificate,
``keys`` one HMAC signing key per sensor (:mod:`kent_ops.core.wire.signing`).
The README's "Deploying at an event" walks a town's IT person through all of it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kent_ops.broker.acl import People, acl_text, check_person_id, users_for
from kent_ops.core.errors import UsageError
from kent_ops.core.permit import Permit, load_permit
from kent_ops.core.wire import generate_keys_file

__all__ = ["cli_acl", "cli_certs", "cli_keys", "make_certs", "write_keys"]


def _ids(role: str, ids: list[str]) -> list[str]:
    for who in ids:
        problem = check_person_id(role, who)
        if problem:
            raise UsageError(problem)
    return ids


def cli_acl(args: argparse.Namespace) -> int:
    """``kent-ops deploy acl --permit P [--inspector ID …] [--clerk ID …] [--out FILE]``."""
    permit = load_permit(args.permit)
    people = People(
        inspectors=_ids("inspector", list(args.inspector)),
        clerks=_ids("clerk", list(getattr(args, "clerk", []) or [])),
        notifiers=_ids("notifier", list(getattr(args, "notifier", []) or [])),
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
