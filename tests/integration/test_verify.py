"""``kent-ops verify`` on a log the live service wrote: OK, then a flipped byte is named."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_support import Ran, kent_ops
from live_support import wait_until

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.permit import load_permit
from kent_ops.core.wire import Topics
from kent_ops.evidence.log import EvidenceLog
from kent_ops.service.aggregator import Aggregator, Timing

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TOPICS = Topics("kent-summer-fest-2027")
P = TOPICS.prefix


def _verify(capsys: pytest.CaptureFixture[str], path: Path) -> Ran:
    """``kent-ops verify PATH``, in this process: the chain check needs no fresh interpreter."""
    return kent_ops(capsys, "verify", str(path))


def _publish(broker: MosquittoBroker, messages: list[tuple[str, bytes]]) -> None:
    client = make_client(parse_broker_url(broker.url))
    client.connect(broker.host, broker.port)
    client.loop_start()
    try:
        for topic, payload in messages:
            client.publish(topic, payload, qos=1).wait_for_publish(timeout=10)
    finally:
        client.disconnect()
        client.loop_stop()


@pytest.mark.timeout(60)
def test_verify_passes_a_live_log_and_names_a_flipped_byte(
    tmp_path: Path, broker: MosquittoBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    evidence = tmp_path / "evidence.sqlite"
    permit = load_permit(ROOT / "examples" / "permit.toml")
    agg = Aggregator(
        permit, evidence, parse_broker_url(broker.url), clock="sensor", timing=Timing()
    )
    seen: list[bytes] = []
    watcher = make_client(parse_broker_url(broker.url))
    watcher.on_connect = lambda c, *a: c.subscribe(TOPICS.status, qos=1)
    watcher.on_message = lambda c, u, m: seen.append(m.payload)
    watcher.connect(broker.host, broker.port)
    watcher.loop_start()
    messages = [
        (
            TOPICS.gate_count("north"),
            json.dumps(
                {
                    "seq": i,
                    "ts": f"2027-07-04T14:00:{i:02d}Z",
                    "in_total": 10 * i,
                    "out_total": 0,
                    "tag": f"T{i:03d}",
                }  # fmt: skip
            ).encode(),
        )
        for i in range(1, 21)
    ]
    try:
        with agg:
            assert agg.connected.wait(10)
            _publish(broker, messages)
            wait_until(
                lambda: any(b'"entries":200' in s for s in seen),
                10,
                "the aggregator to take the messages",
            )
    finally:
        watcher.disconnect()
        watcher.loop_stop()

    ok = _verify(capsys, evidence)
    assert ok.returncode == 0, ok.stderr
    count, head = ok.stdout.split()[1:]
    assert ok.stdout == f"OK {count} {head}\n"
    assert int(count) > 20

    conn = sqlite3.connect(evidence)
    (target,) = conn.execute(
        "SELECT id FROM records WHERE kind = 'message' AND CAST(payload AS TEXT) LIKE '%T013%'"
    ).fetchone()
    conn.close()
    data = bytearray(evidence.read_bytes())
    at = data.find(b'"tag": "T013"')
    assert at > 0
    assert data.find(b'"tag": "T013"', at + 1) == -1
    data[at + 9] ^= 0x02  # T013 -> T213 in the stored payload, nothing else touched
    evidence.write_bytes(bytes(data))

    bad = _verify(capsys, evidence)
    assert bad.returncode == 1
    assert bad.stdout.startswith(f"FAIL record {target}: ")
    assert bad.stdout.count("\n") == 1

    nothing = tmp_path / "nothing.sqlite"
    missing = _verify(capsys, nothing)
    assert (missing.returncode, missing.stderr) == (2, f"kent-ops: {nothing}: no such file\n")


def test_run_refuses_a_tampered_log_naming_the_record(
    tmp_path: Path, broker: MosquittoBroker
) -> None:
    """Restarting on a log that does not verify stops with exit 1 and names the record.

    The broker is up: the service's breach alert gets out at once, where an unreachable
    one would hold the stop for the whole settle time the alert is given.
    """
    evidence = tmp_path / "evidence.sqlite"
    with EvidenceLog.open(evidence, event_id="kent-summer-fest-2027", permit_sha256="x") as log:
        for i in range(5):
            log.append(
                "message", datetime.now(UTC), topic=TOPICS.gate_count("north"), payload=b"%d" % i
            )
        log.commit()
    conn = sqlite3.connect(evidence)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("UPDATE records SET payload = x'39' WHERE id = 4")
    conn.commit()
    conn.close()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "kent_ops",
            "run",
            "--permit",
            str(ROOT / "examples" / "permit.toml"),
            "--evidence",
            str(evidence),
            "--broker",
            broker.url,
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 1
    assert "record 4" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["--broker", "http://localhost:1883"],
         "broker URL 'http://localhost:1883' must start with mqtt:// or mqtts://, "
         "e.g. mqtt://localhost:1883"),
        (["--broker", "mqtt://localhost:port"],
         "broker URL 'mqtt://localhost:port' has a port that is not a number"),
        (["--permit", "/nonexistent/permit.toml"],
         "permit file /nonexistent/permit.toml: no such file"),
        (["--evidence", "/nonexistent/dir/e.sqlite"],
         "cannot create /nonexistent/dir/e.sqlite: folder /nonexistent/dir does not exist"),
    ],
)  # fmt: skip
def test_run_bad_input_is_one_sentence_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], what: str
) -> None:
    """Refused before anything connects or is written, so it runs in this process."""
    base = {
        "--permit": str(ROOT / "examples" / "permit.toml"),
        "--evidence": str(tmp_path / "e.sqlite"),
        "--broker": "mqtt://127.0.0.1:9",
    }
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    argv = [x for pair in base.items() for x in pair]
    run = kent_ops(capsys, "run", *argv)
    assert (run.returncode, run.stdout, run.stderr) == (2, "", f"kent-ops: {what}\n")
    assert not (tmp_path / "e.sqlite").exists()


@pytest.mark.timeout(30)
@pytest.mark.slow
def test_an_unreachable_broker_is_retried_not_fatal(tmp_path: Path) -> None:
    """The field network is flaky: a broker that is down at start is waited for."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kent_ops",
            "run",
            "--permit",
            str(ROOT / "examples" / "permit.toml"),
            "--evidence",
            str(tmp_path / "e.sqlite"),
            "--broker",
            "mqtt://127.0.0.1:9",
        ],  # fmt: skip
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines: list[str] = []
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "retrying" in line:
                break
        assert proc.poll() is None
        proc.terminate()
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert any("cannot reach the broker at mqtt://127.0.0.1:9" in line for line in lines)
