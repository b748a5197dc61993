"""A field set-up on the loopback, as the README deploys it, for the browser tests.

A Mosquitto with a password per user and the ACL of ``kent-ops deploy acl``, a real
aggregator (``kent-ops run``, on the wall clock, or on its sensors' clock as a
rehearsal or the demo runs it), a users file whose passwords are the people's broker
passwords, and ``kent-ops serve`` over HTTPS with the certificate of ``kent-ops deploy
certs``. Each is a real process, stopped at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from live_support import permit_text, wait_until
from wire_support import gate_count

from kent_ops.broker.acl import People, acl_text, users_for
from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.credentials import ENV_PASSWORD, ENV_URL
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.commands.deploy import make_certs
from kent_ops.core.permit import load_permit
from kent_ops.core.wire import Topics, generate_keys_file, load_keys
from kent_ops.web.accounts import KdfCost, make_account, save_accounts

EVENT = "kent-summer-fest-2027"
TOPICS = Topics(EVENT)
PEOPLE = People(inspectors=["insp-1"], clerks=["clerk-1"])
CHEAP = KdfCost(n=2**12, r=8, p=1)
"""Cheaper than the default so sign-ins are quick on a shared test machine."""
HOLD_AT, RESUME_BELOW = 550, 500
SIMULATED_START = datetime(2027, 7, 4, 15, 0, tzinfo=UTC)
"""Where a field on the sensors' clock starts its day: 11:00 in Kent, inside the example
permit's window, and months from the wall clock (a wall-clock stamp would be refused)."""


def password(user: str) -> str:
    """Each broker user's password (and, for people, their web password)."""
    return f"pw {user} 7!"


def _wait_for_line(log: Path, text: str, process: subprocess.Popen[bytes], what: str) -> None:
    def seen() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"{what} exited ({process.returncode}): {log.read_text()}")
        return text in log.read_text()

    wait_until(seen, 30, f"{what} to say {text!r}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process the tests started: SIGTERM, then SIGKILL after 20 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


class Field:
    """Broker, aggregator and users of one event; ``serve()`` starts a web server on it.

    Used as a context manager, it is closed (every process stopped) at the end.

    Args:
        root: the folder of its files.
        clock: the aggregator's ``--clock``: ``wall`` (the field's) or ``sensor`` (a
            rehearsal's: the sensors' readings carry :data:`SIMULATED_START` on).
        gates: the permit's gates, when not the example's.
        signing: the event signs its readings (``keys.toml`` beside the permit).
    """

    def __init__(
        self,
        root: Path,
        *,
        clock: str = "wall",
        gates: tuple[str, ...] | None = None,
        signing: bool = False,
    ) -> None:
        if shutil.which("mosquitto_passwd") is None:
            raise AssertionError("mosquitto_passwd is needed (Debian package mosquitto)")
        self.root = root
        self.clock = clock
        self.started = time.monotonic()
        self.certs = make_certs(root / "certs", ["localhost", "127.0.0.1"])
        self.permit = root / "permit.toml"
        self.permit.write_text(
            permit_text(
                window_now=clock == "wall",
                gates=gates,
                pending_s=0.5,
                clear_s=600,
                hold_at=HOLD_AT,
                resume_below=RESUME_BELOW,
                signing="keys.toml" if signing else None,
            )  # fmt: skip
        )
        self.keys_file = root / "keys.toml"
        self.keys: dict[str, bytes] = {}
        if signing:
            self.keys_file.write_text(generate_keys_file(list(load_permit(self.permit).sensors)))
            self.keys = load_keys(self.keys_file)
        self.broker = self._start_broker()
        self.processes: list[subprocess.Popen[bytes]] = []
        self.aggregator = self._run("aggregator", ["run", "--permit", str(self.permit),
                                    "--evidence", str(root / "evidence.sqlite"),
                                    "--clock", clock], "kent-ops-aggregator")  # fmt: skip
        _wait_for_line(root / "aggregator.log", "connected to", self.aggregator, "the aggregator")
        self.users = root / "users.json"
        save_accounts(
            self.users,
            {
                "insp-1": make_account(
                    "insp-1", "inspector", password("inspector-insp-1"), cost=CHEAP
                ),  # fmt: skip
                "clerk-1": make_account(
                    "clerk-1", "clerk", password("clerk-clerk-1"), cost=CHEAP
                ),  # fmt: skip
                "jsmith": make_account(
                    "jsmith", "deputy", password("deputy-north"), gate="north", cost=CHEAP
                ),  # fmt: skip
                "mjones": make_account(
                    "mjones", "deputy", password("deputy-north"), gate="north", cost=CHEAP
                ),  # fmt: skip
                "asmith": make_account(
                    "asmith", "deputy", password("deputy-south"), gate="south", cost=CHEAP
                ),  # fmt: skip
                "wrong": make_account(  # a web password that is not the broker's
                    "wrong", "deputy", "not the broker password", gate="south", cost=CHEAP
                ),  # fmt: skip
                "insp-bad": make_account(  # an inspector the broker has no account for
                    "insp-bad", "inspector", "not a broker password", cost=CHEAP
                ),  # fmt: skip
            },
        )
        self.north_seq, self.north_in, self.north_out = 0, 0, 0
        self.watcher = Subscriber(self.address("dashboard"), TOPICS.everything)

    def _start_broker(self) -> MosquittoBroker:
        permit = load_permit(self.permit)
        acl = self.root / "acl"
        acl.write_text(acl_text(permit, PEOPLE))
        passwords = self.root / "passwords"
        passwords.touch()
        for user in users_for(permit, PEOPLE):
            subprocess.run(["mosquitto_passwd", "-b", str(passwords), user, password(user)],
                           check=True, timeout=10)  # fmt: skip
        port = free_port()
        listener = (
            "per_listener_settings false\nallow_anonymous false\n"
            f"password_file {passwords}\nacl_file {acl}\nlistener {port} 127.0.0.1\n"
        )
        broker = MosquittoBroker(self.root / "broker", port=port, listener_config=listener)
        broker.start()
        return broker

    def address(self, user: str) -> BrokerAddress:
        return BrokerAddress("127.0.0.1", self.broker.port, username=user, password=password(user))

    def _run(self, name: str, argv: list[str], user: str | None) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if k not in (ENV_URL, ENV_PASSWORD)}
        if user is not None:
            env[ENV_URL] = f"mqtt://{user}@127.0.0.1:{self.broker.port}"
            env[ENV_PASSWORD] = password(user)
        log = (self.root / f"{name}.log").open("ab")
        process = subprocess.Popen([sys.executable, "-m", "kent_ops", *argv],
                                   stdout=subprocess.DEVNULL, stderr=log, env=env)  # fmt: skip
        self.processes.append(process)
        return process

    def serve(self, name: str = "serve", *extra: str) -> tuple[str, subprocess.Popen[bytes]]:
        """Start ``kent-ops serve`` over HTTPS; its base URL and its process."""
        port = free_port()
        process = self._run(
            name,
            ["serve", "--event", EVENT, "--broker", f"mqtt://127.0.0.1:{self.broker.port}",
             "--listen", f"127.0.0.1:{port}", "--users", str(self.users),
             "--tls-cert", str(self.certs["server_crt"]),
             "--tls-key", str(self.certs["server_key"]),
             "--state-dir", str(self.root / "tally"), *extra],
            None,
        )  # fmt: skip
        _wait_for_line(self.root / f"{name}.log", "kent-ops serve:", process, "kent-ops serve")
        return f"https://127.0.0.1:{port}", process

    def logged(self, topic: str) -> list[tuple[bool, dict[str, Any]]]:
        """Every message on ``topic`` in the evidence log: (accepted, its payload), in order."""
        path = self.root / "evidence.sqlite"
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as log:
            rows = log.execute(
                "SELECT accepted, payload FROM records WHERE kind = 'message' AND topic = ? "
                "ORDER BY id",
                (topic,),
            ).fetchall()
        return [(bool(accepted), json.loads(bytes(payload))) for accepted, payload in rows]

    def counter_resets(self) -> list[str]:
        """The counter-reset alerts in the evidence log, read as the report reads it."""
        path = self.root / "evidence.sqlite"
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as log:
            rows = log.execute("SELECT payload FROM records WHERE kind = 'alert'").fetchall()
        return [bytes(p).decode() for (p,) in rows if b'"counter-reset"' in bytes(p)]

    def north_net(self, net: int, at: datetime | None = None) -> None:
        """Bring the north gate's net count to ``net``, as ``sensor-north`` would: its
        cumulative totals only rise, so people come in or go out to get there. ``at``:
        the reading's ``ts`` (now by default)."""
        now = self.north_in - self.north_out
        if net > now:
            self.north_in += net - now
        else:
            self.north_out += now - net
        self.north_seq += 1
        moment = at if at is not None else self.sensor_now()
        reading = gate_count(
            self.north_seq, moment, self.north_in, self.north_out, key=self.keys.get("north")
        )
        publish(self.address("sensor-north"), TOPICS.gate_count("north"), reading)

    def sensor_now(self) -> datetime:
        """The time a sensor stamps: the wall clock's, or on the sensors' clock the
        simulated day's, which runs from :data:`SIMULATED_START` at the real rate."""
        if self.clock == "wall":
            return datetime.now(UTC)
        return SIMULATED_START + timedelta(seconds=time.monotonic() - self.started)

    def close(self) -> None:
        self.watcher.close()
        for process in reversed(self.processes):
            stop(process)
        self.broker.stop()

    def __enter__(self) -> Field:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def apps_of(server: subprocess.Popen[bytes], *words: str) -> list[int]:
    """The live app processes the server started whose command line has all of ``words``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        mine = fields[0] != "Z" and int(fields[1]) == server.pid
        if mine and all(w.encode() in argv for w in words):
            found.append(int(stat.parent.name))
    return sorted(found)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def publish(address: BrokerAddress, topic: str, payload: bytes) -> None:
    """One QoS 1 publish on a connection of its own, waiting for the PUBACK."""
    client = make_client(address)
    client.connect(address.host, address.port)
    client.loop_start()
    try:
        client.publish(topic, payload, qos=1).wait_for_publish(10)
    finally:
        client.disconnect()
        client.loop_stop()


class Subscriber:
    """A real subscriber (with a user and password) keeping the latest payload per topic."""

    def __init__(self, address: BrokerAddress, topic: str) -> None:
        self.latest: dict[str, bytes] = {}
        self.history: list[tuple[str, bytes]] = []
        """Every message but the statuses, in the order received."""
        self._lock = threading.Lock()
        subscribed = threading.Event()
        self.client = make_client(address)
        self.client.on_message = self._on_message
        self.client.on_connect = lambda c, *a: c.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.connect(address.host, address.port)
        self.client.loop_start()
        if not subscribed.wait(10):
            raise AssertionError("the test's subscriber could not subscribe")

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        with self._lock:
            self.latest[msg.topic] = msg.payload
            if not msg.topic.endswith("/status"):
                self.history.append((msg.topic, msg.payload))

    def since(self, mark: int, topic: str) -> list[dict[str, Any]]:
        """The JSON messages on ``topic`` from ``history[mark]`` on."""
        with self._lock:
            return [json.loads(p) for t, p in self.history[mark:] if t == topic]

    def json(self, topic: str) -> dict[str, Any] | None:
        with self._lock:
            raw = self.latest.get(topic)
        return json.loads(raw) if raw else None

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
