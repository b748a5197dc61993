"""Who may sign in to ``kent-ops serve``: a users file of people, each with a scrypt hash.

Each person's web password *is* their broker password (``inspector-{id}``,
``clerk-{id}`` or ``deputy-{gate}`` in ``kent-ops deploy acl``): the server checks it
against the hash here, then hands it to that person's app in its environment, so the
broker's access list, not the web server, decides what each person may publish.

The file is JSON, written readable by its owner only (0600) and replaced atomically.
It never holds a password: only a salted ``hashlib.scrypt`` digest, with the salt and
the cost parameters stored beside it per user, so raising the cost later applies to
each person the next time their password is set.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from kent_ops.core.errors import UsageError

__all__ = [
    "DEFAULT_KDF",
    "ROLES",
    "Account",
    "KdfCost",
    "check_account",
    "check_name",
    "load_accounts",
    "make_account",
    "save_accounts",
    "verify_sign_in",
]

Role = Literal["inspector", "deputy", "clerk"]
ROLES: tuple[Role, ...] = ("inspector", "deputy", "clerk")
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_FORMAT = "kent-ops-users"
_VERSION = 1
MAX_PASSWORD = 1024
"""Longer passwords are refused before hashing: nobody types more, and hashing is costly."""


@dataclass(frozen=True, slots=True)
class KdfCost:
    """scrypt's cost: ``n`` (CPU and memory), ``r`` (block size), ``p`` (parallelism).

    Memory is 128·n·r bytes: 32 MiB at the default, which makes each guess cost a
    password cracker that much memory as well as time.
    """

    n: int = 2**15
    r: int = 8
    p: int = 1

    @property
    def maxmem(self) -> int:
        return 128 * self.n * self.r * (self.p + 1) + 2**20


DEFAULT_KDF = KdfCost()
_DKLEN = 32


def _scrypt(password: str, salt: bytes, cost: KdfCost) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"),
        salt=salt,
        n=cost.n,
        r=cost.r,
        p=cost.p,
        maxmem=cost.maxmem,
        dklen=_DKLEN,
    )


@dataclass(frozen=True, slots=True)
class Account:
    """One person who may sign in, and the app and broker user that come with the role."""

    name: str
    role: Role
    gate: str | None
    salt: bytes = field(repr=False)
    digest: bytes = field(repr=False)
    cost: KdfCost = DEFAULT_KDF

    @property
    def broker_user(self) -> str:
        """The broker user whose password this account's password is (``kent-ops deploy acl``)."""
        if self.role == "deputy":
            return f"deputy-{self.gate}"
        return f"{self.role}-{self.name}"

    @property
    def app(self) -> Literal["dashboard", "gate"]:
        """The one app this person gets: the gate view for a deputy, else the dashboard."""
        return "gate" if self.role == "deputy" else "dashboard"

    @property
    def seat(self) -> str:
        """What may run only once at a time: a gate's tally, or a person's dashboard."""
        return f"gate:{self.gate}" if self.role == "deputy" else f"{self.role}:{self.name}"

    def describe(self) -> str:
        return f"deputy at gate {self.gate}" if self.role == "deputy" else self.role

    def verify(self, password: str) -> bool:
        """Whether ``password`` is this account's, compared in constant time."""
        if len(password) > MAX_PASSWORD:
            return False
        return hmac.compare_digest(_scrypt(password, self.salt, self.cost), self.digest)


def check_name(what: str, name: str) -> str:
    """``name`` if it can name a person or gate in a topic and a broker user; else UsageError."""
    if not _NAME.match(name):
        raise UsageError(
            f"{what} {name!r} must be 1 to 64 letters, digits, '.', '_' or '-' "
            "(it becomes part of a broker user name and of MQTT topics)"
        )
    return name


def check_account(name: str, role: str, gate: str | None) -> Role:
    """The role, once ``name``, ``role`` and ``gate`` make a valid account (else UsageError)."""
    check_name("the name", name)
    checked = _role(role)
    if checked == "deputy":
        if gate is None:
            raise UsageError("a deputy needs --gate: the gate they stand at")
        check_name("the gate", gate)
    elif gate is not None:
        raise UsageError(f"--gate is for deputies; a {role} watches the whole event")
    return checked


def _role(text: str) -> Role:
    for role in ROLES:
        if text == role:
            return role
    raise UsageError(f"role {text!r} must be one of {', '.join(ROLES)}")


def make_account(
    name: str, role: str, password: str, *, gate: str | None = None, cost: KdfCost = DEFAULT_KDF
) -> Account:
    """A new account with a fresh random salt; the password itself is not kept."""
    checked = check_account(name, role, gate)
    if not password:
        raise UsageError("the password is empty")
    if len(password) > MAX_PASSWORD:
        raise UsageError(f"the password is longer than {MAX_PASSWORD} characters")
    salt = secrets.token_bytes(16)
    return Account(name, checked, gate, salt, _scrypt(password, salt, cost), cost)


@functools.cache
def _nobody() -> Account:
    """An account nobody can sign in to: unknown names are checked against it."""
    return make_account("nobody", "inspector", secrets.token_urlsafe(16))


def verify_sign_in(accounts: dict[str, Account], name: str, password: str) -> Account | None:
    """The account if ``name`` and ``password`` match, else None.

    An unknown name costs the same scrypt as a known one, so the time taken does not
    tell a guesser which names exist.
    """
    account = accounts.get(name)
    if account is None:
        _nobody().verify(password)
        return None
    return account if account.verify(password) else None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _to_json(account: Account) -> dict[str, object]:
    return {
        "name": account.name,
        "role": account.role,
        "gate": account.gate,
        "kdf": "scrypt",
        "n": account.cost.n,
        "r": account.cost.r,
        "p": account.cost.p,
        "salt": _b64(account.salt),
        "hash": _b64(account.digest),
    }


def _from_json(path: Path, entry: object) -> Account:
    try:
        if not isinstance(entry, dict):
            raise ValueError
        if entry["kdf"] != "scrypt" or entry["role"] not in ROLES:
            raise ValueError
        cost = KdfCost(int(entry["n"]), int(entry["r"]), int(entry["p"]))
        return Account(
            name=check_name("the name", str(entry["name"])),
            role=entry["role"],
            gate=None if entry["gate"] is None else check_name("the gate", str(entry["gate"])),
            salt=base64.b64decode(entry["salt"], validate=True),
            digest=base64.b64decode(entry["hash"], validate=True),
            cost=cost,
        )
    except (KeyError, TypeError, ValueError, binascii.Error, UsageError):
        raise UsageError(f"users file {path} has an entry that is not a valid account") from None


def load_accounts(path: str | Path, *, missing_ok: bool = False) -> dict[str, Account]:
    """Every account in the users file, by name.

    Raises:
        UsageError: the file is missing (unless ``missing_ok``), readable by others,
            or not a users file.
    """
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        if missing_ok:
            return {}
        raise UsageError(
            f"users file {p}: no such file (add people with: kent-ops serve users add NAME "
            f"--role ROLE --users {p})"
        ) from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UsageError(
            f"users file {p} may be read by others (mode {stat.S_IMODE(info.st_mode):o}); "
            f"make it private with: chmod 600 {p}"
        )
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"users file {p} cannot be read ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise UsageError(f"{p} is not a kent-ops users file")
    users = data.get("users")
    if not isinstance(users, list):
        raise UsageError(f"users file {p} has no list of users")
    accounts = [_from_json(p, entry) for entry in users]
    return {a.name: a for a in accounts}


def _keep_owner(path: Path, temporary: Path) -> None:
    """Give the new file the old one's owner: root editing the service's file keeps it theirs."""
    try:
        info = path.stat()
        os.chown(temporary, info.st_uid, info.st_gid)
    except (FileNotFoundError, PermissionError):
        pass


def save_accounts(path: str | Path, accounts: dict[str, Account]) -> None:
    """Write the users file, readable by its owner only, replacing the old one at once.

    The new text goes to a private temporary file beside it, which then takes its
    place: a reader sees the old file or the new one, never half of one. The file keeps
    its owner (the service's user, after ``chown``) when root changes it.
    """
    p = Path(path)
    text = json.dumps(
        {
            "format": _FORMAT,
            "version": _VERSION,
            "users": [_to_json(a) for a in sorted(accounts.values(), key=lambda a: a.name)],
        },
        indent=2,
    )
    temporary = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise UsageError(f"cannot write {p}: {exc.strerror}") from None
    try:
        _keep_owner(p, temporary)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, 0o600)  # whatever the umask
        os.replace(temporary, p)
    finally:
        temporary.unlink(missing_ok=True)
