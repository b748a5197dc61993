"""Rented devices that post HTTP: the adapter's HTTPS intake, end to end.

The event's Mosquitto, the aggregator and ``kent-ops adapt --http-listen`` run as real
processes; the test posts over real HTTPS (a certificate of ``kent-ops deploy certs``,
checked against its CA) with each device's bearer token, in each built-in format: the
north gate posts The Things Stack's uplink (a webhook), the south gate a Milesight
VS133's decoded object, lot A ChirpStack's ``up`` event (its HTTP integration) and
lot B any JSON. Each test reads the event's status and the evidence log.
"""

from __future__ import annotations

import base64
import json
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from live_support import T0, Watcher, permit_text, ts, wait_until
from test_adapt import _spawn, adapter_raw_records, chirpstack_up, ttn_uplink

from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.commands.deploy import make_certs
from kent_ops.evidence.log import verify

pytestmark = pytest.mark.integration

TOKENS = {
    "north": "north-token-0123456789abcdef",
    "south": "south-token-0123456789abcdef",
    "lot-a": "lot-a-token-0123456789abcdef",
    "lot-b": "lot-b-token-0123456789abcdef",
}
SOURCES = {
    "north": '{ format = "ttn-v3", http = true, in = "people_in", out = "people_out" }',
    "south": '{ format = "milesight-vs13x", http = true }',
    "lot-a": '{ format = "chirpstack-v4", http = true, free = "freeSpaces" }',
    "lot-b": '{ format = "json", http = true, occupied = "lot.cars", seq = "n", ts = "at" }',
}


def _permit(tmp_path: Path) -> Path:
    text = permit_text(gates=("north", "south"), stale_after_s=3600, window_now=True)
    for gate in ("north", "south"):
        text = text.replace(f'id = "{gate}"\n', f'id = "{gate}"\nsource = {SOURCES[gate]}\n', 1)
    for lot, capacity in (("lot-a", 600), ("lot-b", 450)):
        text = text.replace(
            f'id = "{lot}"\ncapacity = {capacity}\n',
            f'id = "{lot}"\ncapacity = {capacity}\nsource = {SOURCES[lot]}\n',
            1,
        )
    path = tmp_path / "permit.toml"
    path.write_text(text)
    return path


def _tokens(tmp_path: Path) -> Path:
    path = tmp_path / "devices.toml"
    path.write_text("".join(f'"{s}" = "{t}"\n' for s, t in TOKENS.items()))
    path.chmod(0o600)
    return path


def milesight(total_in: int, total_out: int) -> bytes:
    """A VS133's uplink as Milesight's decoder makes it (SensorDecoders, VS_Series/VS13x)."""
    return json.dumps(
        {
            "line_1_total_in": total_in,
            "line_1_total_out": total_out,
            "line_1_period_in": 3,
            "line_1_period_out": 1,
        }
    ).encode()


def now(later: float = 0) -> float:
    """The device time ``later`` seconds from now, as the fixtures' offset from their T0.

    The aggregator runs on the wall clock (the field's), so that a device that sends no
    time of its own (a bare Milesight object) is on the same clock as the others.
    """
    return round((datetime.now(UTC) - T0).total_seconds() + later)


def any_json(n: int, at: float, cars: int) -> bytes:
    return json.dumps({"n": n, "at": ts(at), "lot": {"cars": cars}}).encode()


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


class Answer:
    """An HTTP answer: its status and its text."""

    def __init__(self, status: int, text: str) -> None:
        self.status, self.text = status, text

    def __repr__(self) -> str:
        return f"Answer({self.status}, {self.text!r})"


class Rig:
    """The event's broker, the aggregator, the adapter with its HTTPS intake, a watcher."""

    def __init__(self, tmp: Path, broker: MosquittoBroker) -> None:
        self.tmp, self.broker = tmp, broker
        self.permit = _permit(tmp)
        self.tokens = _tokens(tmp)
        self.certs = make_certs(tmp / "certs", ["localhost", "127.0.0.1"])
        self.tls = ssl.create_default_context(cafile=str(self.certs["ca_crt"]))
        self.evidence = tmp / "evidence.sqlite"
        self.log = tmp / "services.log"
        self.port = free_port()
        self.watcher = Watcher(broker)
        self.aggregator = _spawn(
            ["run", "--permit", str(self.permit), "--evidence", str(self.evidence),
             "--broker", broker.url],
            self.log,
        )  # fmt: skip
        self.watcher.status(lambda s: True, timeout=20)
        self.adapter: subprocess.Popen[bytes] | None = None
        self.start_adapter()

    def start_adapter(self) -> None:
        self.adapter = _spawn(
            ["adapt", "--permit", str(self.permit), "--broker", self.broker.url,
             "--state-dir", str(self.tmp / "adapt-state"),
             "--http-listen", f"127.0.0.1:{self.port}", "--tokens", str(self.tokens),
             "--tls-cert", str(self.certs["server_crt"]),
             "--tls-key", str(self.certs["server_key"])],
            self.log,
        )  # fmt: skip
        wait_until(self._listening, 20, "the adapter's HTTPS intake")

    def _listening(self) -> bool:
        assert self.adapter is not None
        if self.adapter.poll() is not None:
            raise AssertionError(f"adapt exited: {self.log.read_text(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def post(
        self,
        sensor: str,
        body: bytes,
        token: str | None = "",
        *,
        timeout: float = 60,
    ) -> Answer:
        """POST ``body`` as ``sensor`` over HTTPS; ``token`` None sends no Authorization."""
        request = urllib.request.Request(
            f"https://localhost:{self.port}/devices/{sensor}",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        if token is not None:
            request.add_header("Authorization", f"Bearer {token or TOKENS[sensor]}")
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.tls) as answer:
                return Answer(answer.status, answer.read().decode())
        except urllib.error.HTTPError as exc:
            return Answer(exc.code, exc.read().decode())

    def status(self, predicate: Any, timeout: float = 20) -> dict[str, Any]:
        return self.watcher.status(predicate, timeout)

    def raw_records(self) -> list[dict[str, Any]]:
        return adapter_raw_records(self.evidence)

    def close(self) -> None:
        _stop(self.adapter)
        _stop(self.aggregator)
        self.watcher.close()


@pytest.fixture
def rig(tmp_path: Path, broker: MosquittoBroker) -> Iterator[Rig]:
    r = Rig(tmp_path, broker)
    try:
        yield r
    finally:
        r.close()


def test_a_post_in_each_format_becomes_the_sensors_figure_with_its_bytes_kept(rig: Rig) -> None:
    at = now(-10)
    posts = [
        ("north", ttn_uplink(1, at, 120, 20)),
        ("south", milesight(50, 10)),
        ("lot-a", chirpstack_up(1, at + 1, 550)),
        ("lot-b", any_json(1, at + 2, 300)),
    ]
    for sensor, body in posts:
        answer = rig.post(sensor, body)
        assert (answer.status, answer.text) == (200, "recorded\n"), sensor
    status = rig.status(
        lambda s: s["attendance"]["entries"] == 170 and s["parking"]["occupied"] == 350
    )
    assert status["attendance"]["current"] == 140
    assert status["rejected"] == 0
    raws = wait_until(lambda: len(rig.raw_records()) == 4 and rig.raw_records(), 15, "4 raw")
    assert [(r["sensor"], r["topic"]) for r in raws] == [
        (sensor, f"POST /devices/{sensor}") for sensor, _ in posts
    ]
    assert [base64.b64decode(r["payload_b64"]) for r in raws] == [body for _, body in posts]
    assert all(r["accepted"] and r["reason"] is None for r in raws)
    assert raws[0]["translated"]["in_total"] == 120
    assert _when(raws[0]["translated"]["ts"]) == _when(ts(at))  # the uplink's received_at
    assert _when(raws[1]["translated"]["ts"]) == _when(raws[1]["ts"])  # no time: receipt
    assert raws[2]["translated"]["occupied"] == 50
    assert raws[3]["translated"]["occupied"] == 300
    assert _when(raws[3]["translated"]["ts"]) == _when(ts(at + 2))  # its own "at" field
    # a later post moves the figures on, and the same frame posted again counts once
    again = ttn_uplink(2, at + 5, 200, 30)
    assert rig.post("north", again).status == 200
    assert rig.post("north", again).status == 200
    assert rig.post("south", milesight(80, 15)).status == 200
    status = rig.status(lambda s: s["attendance"]["entries"] == 280)
    assert status["attendance"]["current"] == 280 - 45
    raws = wait_until(lambda: len(rig.raw_records()) == 7 and rig.raw_records(), 15, "7 raw")
    assert raws[5]["reason"].startswith("redelivery")
    assert verify(rig.evidence).ok


def test_a_wrong_or_missing_token_or_an_unknown_device_is_refused_and_nothing_recorded(
    rig: Rig,
) -> None:
    body = ttn_uplink(1, now(-5), 999, 0)
    wrong = rig.post("north", body, TOKENS["south"])
    assert (wrong.status, wrong.text) == (401, "wrong token\n")
    assert rig.post("north", body, None).status == 401
    assert rig.post("north", body, TOKENS["north"] + "x").status == 401
    unknown = rig.post("west", body, TOKENS["north"])
    assert (unknown.status, unknown.text) == (404, "no such device\n")
    # the endpoint shows the certificate it was given: a client without its CA refuses it
    stranger = urllib.request.Request(f"https://127.0.0.1:{rig.port}/devices/north", data=body)
    stranger.add_header("Authorization", f"Bearer {TOKENS['north']}")
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(stranger, timeout=10, context=ssl.create_default_context())
    # plain HTTP on the HTTPS port is not taken
    plain = urllib.request.Request(f"http://127.0.0.1:{rig.port}/devices/north", data=body)
    plain.add_header("Authorization", f"Bearer {TOKENS['north']}")
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        urllib.request.urlopen(plain, timeout=10).read()
    # then one good post: it is the only thing the log or the figures ever saw
    good = ttn_uplink(1, now(-4), 10, 0)
    assert rig.post("north", good).status == 200
    status = rig.status(lambda s: s["attendance"]["entries"] == 10)
    assert status["rejected"] == 0
    time.sleep(1.0)
    raws = rig.raw_records()
    assert len(raws) == 1
    assert base64.b64decode(raws[0]["payload_b64"]) == good


def test_a_malformed_post_gets_a_clear_error_is_recorded_as_rejected_and_changes_nothing(
    rig: Rig,
) -> None:
    assert rig.post("north", ttn_uplink(1, now(-5), 100, 10)).status == 200
    assert rig.post("lot-b", any_json(1, now(-5), 40)).status == 200
    rig.status(lambda s: s["attendance"]["current"] == 90 and s["parking"]["occupied"] == 40)
    bad = [
        ("north", b"\x00not json"),
        ("north", b'{"uplink_message": {"f_cnt": 2, "decoded_payload": {"people_in": "lots"}}}'),
        ("lot-b", json.dumps({"n": 2, "at": ts(now(-4)), "lot": {"cars": -3}}).encode()),
        ("lot-a", b""),
    ]
    for sensor, body in bad:
        answer = rig.post(sensor, body)
        assert answer.status == 422, (sensor, answer)
        assert answer.text.startswith(f"{sensor}'s message was recorded but cannot be read: ")
    status = rig.status(lambda s: s["rejected"] == 4)
    assert status["attendance"]["current"] == 90
    assert status["parking"]["occupied"] == 40
    raws = wait_until(lambda: len(rig.raw_records()) == 6 and rig.raw_records(), 15, "6 raw")
    rejected = [r for r in raws if not r["accepted"]]
    assert [base64.b64decode(r["payload_b64"]) for r in rejected] == [b for _, b in bad]
    assert all(r["translated"] is None for r in rejected)
    assert "not valid JSON" in rejected[0]["reason"]
    assert "people_in" in rejected[1]["reason"]
    assert "lot.cars" in rejected[2]["reason"]
    assert rejected[0]["log_reason"].startswith("the adapter could not read north's message")
    # the reason the device was told is the one the log keeps
    again = rig.post("north", b"\x00not json")
    assert rejected[0]["reason"] in again.text
    # an oversized body is refused before it is read (the brokers' own payload limit)
    big = rig.post("north", b"{" + b" " * (300 * 1024) + b"}")
    assert big.status == 413


def test_a_post_while_the_events_broker_is_down_is_answered_only_once_it_is_recorded(
    rig: Rig,
) -> None:
    assert rig.post("north", ttn_uplink(1, now(-5), 100, 10)).status == 200
    rig.status(lambda s: s["attendance"]["entries"] == 100)
    rig.broker.stop()
    answers: list[Answer] = []
    poster = threading.Thread(
        target=lambda: answers.append(rig.post("north", ttn_uplink(2, now(-1), 150, 20)))
    )
    poster.start()
    time.sleep(3.0)
    assert answers == []  # no 200 while nothing can take the translation
    rig.broker.start()
    poster.join(40)
    assert [a.status for a in answers] == [200]
    status = rig.status(lambda s: s["attendance"]["entries"] == 150, timeout=30)
    assert status["attendance"]["current"] == 130
    raws = wait_until(lambda: len(rig.raw_records()) == 2 and rig.raw_records(), 20, "2 raw")
    assert raws[1]["translated"]["in_total"] == 150


def test_a_post_left_unanswered_is_recorded_when_the_broker_returns_and_the_retry_counts_once(
    rig: Rig,
) -> None:
    assert rig.post("north", ttn_uplink(1, now(-5), 100, 10)).status == 200
    rig.status(lambda s: s["attendance"]["entries"] == 100)
    rig.broker.stop()
    second = ttn_uplink(2, now(-1), 150, 20)
    late = rig.post("north", second, timeout=60)
    assert (late.status, late.text) == (503, "not recorded yet; post again\n")
    rig.broker.start()
    retry = rig.post("north", second)
    assert retry.status == 200
    status = rig.status(lambda s: s["attendance"]["entries"] == 150, timeout=30)
    time.sleep(1.0)
    assert rig.status(lambda s: True)["attendance"]["entries"] == status["attendance"]["entries"]
    raws = wait_until(lambda: len(rig.raw_records()) == 3 and rig.raw_records(), 20, "3 raw")
    assert raws[1]["translated"]["in_total"] == 150
    assert raws[2]["reason"].startswith("redelivery")


def test_the_http_intake_survives_a_restart_of_the_adapter(rig: Rig) -> None:
    assert rig.post("south", milesight(40, 5)).status == 200
    rig.status(lambda s: s["attendance"]["entries"] == 40)
    assert rig.adapter is not None
    rig.adapter.send_signal(signal.SIGKILL)
    rig.adapter.wait(10)
    rig.start_adapter()
    assert rig.post("south", milesight(70, 5)).status == 200
    status = rig.status(lambda s: s["attendance"]["entries"] == 70)
    assert status["attendance"]["current"] == 65


def _adapt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kent_ops", "adapt", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_intakes_settings_are_checked_each_refusal_one_sentence_exit_2(
    tmp_path: Path,
) -> None:
    permit, tokens = _permit(tmp_path), _tokens(tmp_path)
    certs = make_certs(tmp_path / "certs", ["localhost"])
    base = ["--permit", str(permit), "--broker", "mqtt://127.0.0.1:1",
            "--state-dir", str(tmp_path / "state")]  # fmt: skip
    listen = ["--http-listen", "127.0.0.1:8443", "--tokens", str(tokens)]
    cases = [
        ([], "north, south, lot-a, lot-b post over HTTP: give --http-listen"),
        (["--http-listen", "0.0.0.0:8443", "--tokens", str(tokens)], "must not cross a network"),
        (["--http-listen", "127.0.0.1:99999", "--tokens", str(tokens)], "the port 1 to 65535"),
        (["--http-listen", "8443", "--tokens", str(tokens)], "must be HOST:PORT"),
        ([*listen, "--tls-cert", str(certs["server_crt"])], "--tls-cert and --tls-key go"),
        (
            [*listen, "--tls-cert", str(certs["server_crt"]), "--tls-key", str(certs["ca_key"])],
            "cannot use",
        ),
        (["--http-listen", "127.0.0.1:8443", "--tokens", str(tmp_path / "none")], "no such file"),
    ]
    for extra, words in cases:
        done = _adapt(*base, *extra)
        assert (done.returncode, done.stderr.count("\n")) == (2, 1), (extra, done.stderr)
        assert words in done.stderr, (extra, done.stderr)
        assert "Traceback" not in done.stderr
    tokens.chmod(0o644)
    done = _adapt(*base, *listen)
    assert done.returncode == 2
    assert "may be read by others" in done.stderr
    tokens.chmod(0o600)
    tokens.write_text(f'north = "{TOKENS["north"]}"\n')
    done = _adapt(*base, *listen)
    assert done.returncode == 2
    assert "no token for south, lot-a, lot-b" in done.stderr
