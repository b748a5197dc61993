"""Two real Mosquitto brokers joined by the bridge ``kent-ops deploy bridge`` generates.

The command post's broker runs with TLS, passwords and the ACL ``kent-ops deploy acl
--bridge`` writes; the remote property's broker runs the generated configuration
verbatim (its ACL, its passwords, persistence, the bridge), and its bridge crosses to
the command post through stunnel running the configuration ``deploy bridge`` writes.
Sensors are the real
devices on :class:`RecordingLink`, which remembers every message handed to paho, so a
test can hold the evidence log to exactly what was sent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import paho.mqtt.client as mqtt
from live_support import wait_until

from kent_ops.broker.acl import People, acl_text, property_acl_text, property_users, users_for
from kent_ops.broker.bridge import BridgeSettings, bridge_config, central_ca_path, tunnel_for
from kent_ops.broker.client import BrokerAddress, make_client
from kent_ops.broker.delivery import Delivery
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.broker.persistence import AUTOSAVE_CHANGES
from kent_ops.broker.tunnel import Tunnel, stunnel_config
from kent_ops.commands.deploy import make_certs
from kent_ops.core.permit import Permit
from kent_ops.core.wire import Topics
from sensors.device import Device, MqttLink

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "field-secret"
PROPERTY = "camping-meadow"
INSPECTORS = ("insp-1",)
EVENT = "kent-harvest-weekend-2027"
TOPICS = Topics(EVENT)
RESTART_S = (1, 2)
"""The bridge retries from 1 s, at most 2 s apart (deployed: 2 to 10 s): each of the
flapping link's drops and each outage's end is met within seconds, not a backed-off 10."""

KENT = ZoneInfo("America/New_York")
"""Kent's clock: a permit's windows carry New York's offset (docs/law.md)."""


def two_property_permit(tmp_path: Path) -> Path:
    """The two-properties example, open now, with a deputy's tally at the meadow road."""
    now = datetime.now(UTC).replace(microsecond=0)
    text = (ROOT / "examples" / "permit-two-properties.toml").read_text()
    text = re.sub(
        r"\[\[windows\]\][^\[]*",
        f"[[windows]]\nstart = {(now - timedelta(hours=1)).astimezone(KENT).isoformat()}\n"
        f"end = {(now + timedelta(hours=3)).astimezone(KENT).isoformat()}\n\n",
        text,
        count=1,
    )
    text += '\n[[gates]]\nid = "meadow-road-manual"\nproperty = "camping-meadow"\n'
    text += "\n[alerting]\npending_s = 2\nclear_s = 3\nstale_after_s = 3600\n"
    path = tmp_path / "permit.toml"
    path.write_text(text)
    return path


@dataclass
class ConfiguredBroker(MosquittoBroker):
    """A Mosquitto running a configuration we were given, as written (only our own user)."""

    text: str = ""

    def write_config(self) -> Path:
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "data").mkdir(exist_ok=True)
        # As MosquittoBroker: started as root it would drop to "mosquitto", which cannot
        # read a private temporary folder. Nothing else is added to the generated text.
        keep_user = "user root\n" if hasattr(os, "geteuid") and os.geteuid() == 0 else ""
        self.config_path.write_text(keep_user + self.text)
        return self.config_path

    def kill(self) -> None:
        """SIGKILL: no save, no goodbye; what a power cut does to the process."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(10)
        self.process = None


def _passwords(path: Path, users: Iterable[str]) -> None:
    if shutil.which("mosquitto_passwd") is None:
        raise AssertionError("mosquitto_passwd is needed (Debian package mosquitto)")
    path.touch()
    for user in users:
        subprocess.run(
            ["mosquitto_passwd", "-b", str(path), user, PASSWORD], check=True, timeout=10
        )


def stunnel_binary() -> str:
    """Debian's stunnel (package stunnel4, which scripts/test installs when missing)."""
    found = shutil.which("stunnel4") or shutil.which("stunnel")
    if found is None:
        raise AssertionError("stunnel is needed (Debian package stunnel4)")
    return found


class StunnelProcess:
    """stunnel running the configuration ``kent-ops deploy bridge`` writes, as written.

    In the foreground (``foreground = yes``, as under its systemd unit), its log lines
    (one set per connection) in ``stunnel.log``. Started as root here, it stays root:
    the unit's ``User=mosquitto`` is systemd's, not stunnel's.
    """

    def __init__(self, workdir: Path, tunnel: Tunnel) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir, self.tunnel, self.port = workdir, tunnel, tunnel.listen_port
        self.log = workdir / "stunnel.log"
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        """Write the configuration; the command line that runs it."""
        config = self.workdir / "stunnel.conf"
        config.write_text(stunnel_config(self.tunnel))
        return [stunnel_binary(), str(config)]

    def start(self, timeout: float = 10.0) -> StunnelProcess:
        """Start it and wait (bounded) until it listens on the loopback."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        process = self.process

        def listening() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"{self.command()[0]} exited: {self.log.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return True
            except OSError:
                return False

        try:
            wait_until(listening, timeout, "stunnel to listen")
        except AssertionError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not gone within 5 s."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None


@dataclass
class Site:
    """The command post's broker and one remote property's broker, bridged."""

    permit: Permit
    central: MosquittoBroker
    tls_port: int
    ca_file: str
    prop: ConfiguredBroker
    settings: BridgeSettings
    tunnel: StunnelProcess

    def central_address(self, user: str) -> BrokerAddress:
        """The loopback listener (the aggregator's, on the same laptop)."""
        return BrokerAddress("127.0.0.1", self.central.port, username=user, password=PASSWORD)

    def central_tls(self, user: str) -> BrokerAddress:
        return BrokerAddress("localhost", self.tls_port, tls=True, username=user, password=PASSWORD)

    def property_address(self, user: str) -> BrokerAddress:
        return BrokerAddress("127.0.0.1", self.prop.port, username=user, password=PASSWORD)

    def stop(self) -> None:
        self.prop.stop()
        self.tunnel.stop()
        self.central.stop()


def build_site(
    tmp_path: Path,
    permit: Permit,
    *,
    autosave_changes: int = AUTOSAVE_CHANGES,
    via: Callable[[int], int] | None = None,
    tunnel: Callable[[Path, Tunnel], StunnelProcess] = StunnelProcess,
) -> Site:
    """Write both brokers' files from the permit, as the README says, and start both.

    The property's bridge reaches the command post through stunnel, as deployed;
    ``via``, given the command post's TLS port, returns the port stunnel dials instead:
    a relay standing for the radio link in between. ``tunnel`` runs the TLS leg (a
    benchmark puts another in stunnel's place).
    """
    certs = make_certs(tmp_path / "certs", ["localhost", "127.0.0.1"])
    post = tmp_path / "post"
    post.mkdir()
    people = People(inspectors=INSPECTORS, bridges=[PROPERTY])
    (post / "acl").write_text(acl_text(permit, people))
    _passwords(post / "passwords", users_for(permit, people))
    tls_port, plain_port = free_port(), free_port()
    listeners = (
        "log_type all\n"  # the debug lines name every publish the ACL denies
        "per_listener_settings false\nallow_anonymous false\n"
        f"password_file {post / 'passwords'}\nacl_file {post / 'acl'}\n"
        f"listener {tls_port} 127.0.0.1\ncafile {certs['ca_crt']}\n"
        f"certfile {certs['server_crt']}\nkeyfile {certs['server_key']}\n"
        f"listener {plain_port} 127.0.0.1\n"
    )
    central = MosquittoBroker(post / "broker", port=plain_port, listener_config=listeners)
    etc = tmp_path / "property-etc"
    etc.mkdir()
    shutil.copy(certs["ca_crt"], central_ca_path(etc))
    settings = BridgeSettings(
        property_id=PROPERTY,
        central=BrokerAddress("127.0.0.1", via(tls_port) if via else tls_port, tls=True),
        password=PASSWORD,
        etc_dir=etc,
        data_dir=tmp_path / "property" / "data",
        port=free_port(),
        bind="127.0.0.1",
        inspectors=INSPECTORS,
        autosave_changes=autosave_changes,
        link_port=free_port(),
        restart_s=RESTART_S,
    )
    settings.acl_path.write_text(property_acl_text(permit, PROPERTY, INSPECTORS))
    _passwords(settings.password_path, property_users(permit, PROPERTY, INSPECTORS))
    prop = ConfiguredBroker(
        tmp_path / "property", port=settings.listen_port, text=bridge_config(permit, settings)
    )
    leg = tunnel(tmp_path / "stunnel", tunnel_for(settings))
    central.start()
    leg.start()
    prop.start()
    return Site(permit, central, tls_port, str(certs["ca_crt"]), prop, settings, leg)


@dataclass
class Sent:
    """One message a device handed to paho, in the order of every device's sends."""

    topic: str
    payload: bytes
    delivery: Delivery


@dataclass
class Journal:
    """Every message the devices of a test sent, across all their links, in order."""

    sent: list[Sent] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def all_acknowledged(self, timeout: float = 30.0) -> bool:
        """Wait (bounded) until the broker acknowledged every message sent."""
        with self.lock:
            deliveries = [s.delivery for s in self.sent]
        try:
            wait_until(lambda: all(d.done for d in deliveries), timeout, "every acknowledgement")
        except AssertionError:
            return False
        return True


class RecordingLink(MqttLink):
    """The devices' own MQTT link, writing each message it sends into a journal."""

    def __init__(self, journal: Journal, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.journal = journal

    def send(self, topic: str, payload: bytes, retain: bool) -> None:
        with self.journal.lock:  # one order for the journal and for paho
            super().send(topic, payload, retain)
            assert self._last_sent is not None
            self.journal.sent.append(Sent(topic, payload, self._last_sent))


def settled(address: BrokerAddress) -> None:
    """Return once the broker has finished every turn of its loop before now, and the
    save that may end one: it answers a new connection in a later turn, and a connection
    without a persistent session changes nothing it saves."""
    client = make_client(address)
    connected = threading.Event()
    client.on_connect = lambda *a: connected.set()
    client.connect(address.host, address.port)
    client.loop_start()
    try:
        if not connected.wait(10):
            raise AssertionError(f"could not connect to {address.url}")
    finally:
        client.disconnect()
        client.loop_stop()


def attach(
    device: Device, journal: Journal, address: BrokerAddress, ca_file: str | None = None
) -> RecordingLink:
    """Connect ``device`` through a recording link and wait until it is online."""
    link = RecordingLink(
        journal,
        address,
        client_id=f"kent-{device.event_id}-{device.kind}-{device.sensor_id}",
        will_topic=device.availability_topic,
        ca_file=ca_file,
    )
    device.attach(link)
    link.start()
    if not link.wait_online(15):
        raise AssertionError(f"{device.sensor_id} could not connect: {link.last_error}")
    return link


class Subscriber:
    """A real client with its own account: every message on ``pattern``, kept in order."""

    def __init__(
        self,
        address: BrokerAddress,
        pattern: str,
        *,
        ca_file: str | None = None,
        client_id: str = "",
        clean_start: bool = True,
    ) -> None:
        self.messages: list[tuple[str, bytes, bool]] = []
        self._cond = threading.Condition()
        subscribed = threading.Event()
        self.client = make_client(
            address,
            client_id or f"test-{uuid.uuid4().hex[:8]}",
            clean_start=clean_start,
            ca_file=ca_file,
        )
        self.client.on_message = self._on_message
        self.client.on_connect = lambda c, *a: c.subscribe(pattern, qos=1)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.connect(address.host, address.port)
        self.client.loop_start()
        if not subscribed.wait(10):
            raise AssertionError(f"could not subscribe to {pattern} at {address.url}")

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        with self._cond:
            self.messages.append((msg.topic, bytes(msg.payload), bool(msg.retain)))
            self._cond.notify_all()

    def received(self) -> list[tuple[str, bytes]]:
        """Every (topic, payload) received so far, in order."""
        with self._cond:
            return [(t, p) for t, p, _ in self.messages]

    def latest(self, topic: str) -> bytes | None:
        with self._cond:
            found = [p for t, p, _ in self.messages if t == topic]
        return found[-1] if found else None

    def wait_for(self, check: Callable[[], Any], timeout: float, what: str) -> Any:
        """Wait (bounded) until ``check()`` is true, re-checking on every message."""
        return wait_until(check, timeout, what, every=0.5, cond=self._cond)

    def wait_latest(self, topic: str, payload: bytes, timeout: float = 30.0) -> None:
        self.wait_for(lambda: self.latest(topic) == payload, timeout, f"{topic} = {payload!r}")

    def status(self) -> dict[str, Any] | None:
        raw = self.latest(TOPICS.status)
        return json.loads(raw) if raw else None

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
