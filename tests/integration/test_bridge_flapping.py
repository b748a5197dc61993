"""A remote property's link that flaps: connections accepted and dropped mid-handshake.

Debian 12's Mosquitto (2.0.11) with its own TLS bridge hangs for good after two or three
such drops: it stops serving its own sensors and ignores SIGTERM (docs/security.md, "A
flapping bridge link"). The property's broker as ``kent-ops deploy bridge`` writes it
bridges in plain MQTT to stunnel on its loopback, which alone speaks TLS over the link.
Here a real relay between stunnel and the command post cuts the link and then drops
eight connection attempts in the middle of the TLS handshake
(half at once, half after the ClientHello), while a gate counter and a badge reader on
the property keep sending: the property's broker takes every reading throughout, stops
on SIGTERM, and once the link is healthy every reading is at the command post, in
order. stunnel also refuses a command post whose certificate another CA signed, or the
event's CA signed for another name.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest
from bridge_support import (
    PROPERTY,
    TOPICS,
    Journal,
    Site,
    StunnelProcess,
    Subscriber,
    attach,
    build_site,
    two_property_permit,
)
from flapping_support import FlappingRelay
from live_support import wait_until

from kent_ops.broker.bridge import central_ca_path, tunnel_for
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.broker.tunnel import Tunnel
from kent_ops.commands.deploy import make_certs
from kent_ops.core.permit import Permit, load_permit
from sensors.badge_reader import BadgeReader
from sensors.gate_counter import GateCounter

pytestmark = pytest.mark.integration

STATE = TOPICS.bridge_state(PROPERTY)
DROPS = 8
"""Connection attempts dropped mid-handshake; Mosquitto's own TLS bridge hangs by the third."""
GATE = TOPICS.gate_count("meadow-road")
BADGE = TOPICS.staff_badge("camp-aid")


@pytest.fixture
def permit(tmp_path: Path) -> Permit:
    return load_permit(two_property_permit(tmp_path))


@pytest.fixture
def relay() -> Iterator[FlappingRelay]:
    r = FlappingRelay()
    try:
        yield r
    finally:
        r.stop()


@pytest.fixture
def site(tmp_path: Path, permit: Permit, relay: FlappingRelay) -> Iterator[Site]:
    """The two brokers, the property's link to the command post passing through ``relay``."""
    s = build_site(tmp_path, permit, via=relay.start)
    try:
        yield s
    finally:
        s.stop()  # SIGTERM, then SIGKILL after 10 s: a hung broker never outlives the test


class Walk:
    """Persons through the meadow road every 20 ms, a badge scan every tenth step."""

    def __init__(self, gate: GateCounter, badges: BadgeReader) -> None:
        self.gate, self.badges = gate, badges
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._walk, name="walk", daemon=True)

    def _walk(self) -> None:
        step = 0
        while not self.stop.wait(0.02):
            step += 1
            self.gate.count(entered=1)
            if step % 10 == 0:
                on = step % 20 == 0
                self.badges.scan("nurse-1", "nurse", "on" if on else "off")

    def __enter__(self) -> Walk:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)


def readings(messages: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The gate's counts and the badge scans, each once, where it first came."""
    return list(dict.fromkeys(m for m in messages if m[0] in (GATE, BADGE)))


def seqs(messages: list[tuple[str, bytes]], topic: str) -> list[int]:
    return [msgspec.json.decode(p)["seq"] for t, p in messages if t == topic]


def keeps_taking(local: Subscriber, journal: Journal, what: str) -> None:
    """The property's broker takes a new reading and acknowledges what was sent."""
    before = len(local.received())
    local.wait_for(lambda: len(local.received()) > before, 10, what)
    with journal.lock:
        earlier = [s.delivery for s in journal.sent[:-20]]
    wait_until(lambda: all(d.done for d in earlier), 10, f"{what}: every reading acknowledged")


def stops_on_sigterm(site: Site) -> int:
    """SIGTERM the property's broker; its exit code, or -1 if it has not stopped in 10 s."""
    process = site.prop.process
    assert process is not None
    process.terminate()
    try:
        return process.wait(10)
    except subprocess.TimeoutExpired:
        return -1


@pytest.mark.timeout(300)
@pytest.mark.slow
def test_the_propertys_broker_keeps_counting_through_a_flapping_link_and_loses_nothing(
    permit: Permit, site: Site, relay: FlappingRelay
) -> None:
    """Eight drops mid-handshake: every reading taken locally, then at the command post."""
    journal = Journal()
    gate = GateCounter(permit.event_id, "meadow-road", heartbeat_s=None)
    badges = BadgeReader(permit.event_id, "camp-aid")
    post = Subscriber(
        site.central_address("dashboard"), TOPICS.everything, client_id="post", clean_start=False
    )
    local = Subscriber(site.property_address("dashboard"), GATE)
    state = Subscriber(site.property_address("dashboard"), STATE)
    try:
        state.wait_latest(STATE, b"1")
        attach(gate, journal, site.property_address("sensor-meadow-road"))
        attach(badges, journal, site.property_address("sensor-camp-aid"))
        with Walk(gate, badges):
            time.sleep(1)
            relay.flap(DROPS)  # the link drops, and drops every attempt mid-handshake
            flapped = time.monotonic()
            state.wait_latest(STATE, b"0")
            deadline = time.monotonic() + 180
            while relay.dropped < DROPS:
                assert time.monotonic() < deadline, f"only {relay.dropped} attempts in 180 s"
                keeps_taking(local, journal, f"a reading after {relay.dropped} drops")
                time.sleep(1)
            keeps_taking(local, journal, f"a reading after all {relay.dropped} drops")
            state.wait_latest(STATE, b"1", timeout=60)  # the link is healthy again
            down_s = time.monotonic() - flapped
            time.sleep(1)
        assert journal.all_acknowledged(30), "a reading was never acknowledged"
        with journal.lock:
            sent = readings([(s.topic, s.payload) for s in journal.sent])
        post.wait_for(
            lambda: set(sent) <= set(readings(post.received())),
            60,
            "every reading at the command post",
        )
        tunnel = site.tunnel.process
        assert tunnel is not None
        tunnel.terminate()  # with the bridge's connection open through it
        tunnel_code = tunnel.wait(10)
        code = stops_on_sigterm(site)
    finally:
        gate.close(timeout=2)
        badges.close(timeout=2)
        for client in (post, local, state):
            client.close()
    arrived = readings(post.received())
    assert set(arrived) == set(sent)  # every reading, and nothing that was not sent
    for topic in (GATE, BADGE):
        assert seqs(arrived, topic) == seqs(sent, topic)  # each sensor's order kept
    assert relay.dropped_at_once >= DROPS // 2
    assert relay.dropped_after_hello >= DROPS // 2
    assert code == 0, "the property's broker did not stop on SIGTERM"
    assert tunnel_code == 0, "stunnel did not stop on SIGTERM"
    print(
        f"\n{len(sent)} readings through {relay.dropped} drops mid-handshake "
        f"({relay.dropped_at_once} at once, {relay.dropped_after_hello} after the "
        f"ClientHello), every one at the command post, in order; the link was down "
        f"{down_s:.1f} s"
    )


def sign_for(certs: Path, host: str, out: Path) -> tuple[Path, Path]:
    """A certificate for ``host`` (and no other name) that the event's own CA signs."""
    out.mkdir(parents=True, exist_ok=True)
    key, csr, crt, ext = out / "other.key", out / "other.csr", out / "other.crt", out / "ext"
    ext.write_text(f"subjectAltName=DNS:{host}\nextendedKeyUsage=serverAuth\n")
    for argv in (
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
         "-subj", f"/CN={host}"],
        ["x509", "-req", "-in", str(csr), "-CA", str(certs / "ca.crt"),
         "-CAkey", str(certs / "ca.key"), "-CAcreateserial", "-out", str(crt), "-days", "2",
         "-extfile", str(ext)],
    ):  # fmt: skip
        subprocess.run(["openssl", *argv], check=True, capture_output=True, timeout=30)
    return crt, key


def refused(tunnel: Tunnel, workdir: Path) -> str:
    """Connect through a stunnel for ``tunnel`` as the bridge would; what it logged.

    Nothing may come back: stunnel closes (or resets) the bridge's connection.
    """
    process = StunnelProcess(workdir, tunnel).start()
    try:
        with socket.create_connection(("127.0.0.1", tunnel.listen_port), timeout=20) as s:
            s.sendall(b"\x10\x00")  # the start of an MQTT CONNECT
            try:
                answer = s.recv(100)
            except ConnectionResetError:
                answer = b""
        assert answer == b"", f"stunnel relayed {answer!r}"
        wait_until(lambda: "Connection " in process.log.read_text(), 10, "the connection's end")
    finally:
        process.stop()
    return process.log.read_text()


@pytest.mark.timeout(60)
def test_stunnel_refuses_a_command_post_another_ca_signed(tmp_path: Path, site: Site) -> None:
    """The TLS leg checks the command post's certificate: a stranger's gets nothing."""
    other = make_certs(tmp_path / "other-ca", ["127.0.0.1"])
    tunnel = replace(tunnel_for(site.settings), host="127.0.0.1", port=site.tls_port,
                     cafile=other["ca_crt"], listen_port=free_port())  # fmt: skip
    log = refused(tunnel, tmp_path / "stranger")
    assert "Rejected by CERT" in log
    assert "certificate verify failed" in log
    assert central_ca_path(site.settings.etc_dir).read_bytes() != other["ca_crt"].read_bytes()


@pytest.mark.timeout(60)
def test_stunnel_refuses_a_certificate_the_events_ca_signed_for_another_name(
    tmp_path: Path, site: Site
) -> None:
    """The event's CA is not enough: the certificate must name the command post."""
    certs = Path(site.ca_file).parent
    crt, key = sign_for(certs, "elsewhere.local", tmp_path / "impostor-certs")
    port = free_port()
    impostor = MosquittoBroker(
        tmp_path / "impostor",
        port=port,
        listener_config=f"listener {port} 127.0.0.1\nallow_anonymous true\n"
        f"cafile {certs / 'ca.crt'}\ncertfile {crt}\nkeyfile {key}\n",
    ).start()
    try:
        tunnel = replace(tunnel_for(site.settings), host="localhost", port=port,
                         listen_port=free_port())  # fmt: skip
        log = refused(tunnel, tmp_path / "named")
    finally:
        impostor.stop()
    assert "Subject checks failed" in log  # refused for its name...
    assert "Pre-verification error" not in log  # ...its chain from the event's CA is good
