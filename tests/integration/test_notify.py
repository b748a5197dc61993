"""``kent-ops notify`` (a process) against a real Mosquitto, mail server and aggregator.

The mail server is aiosmtpd on a free port wanting a login, so the SMTP password is in
the channel URL as in the field. Alerts come from a real aggregator fed sensor messages,
or are published retained by the test as the aggregator would; ``sent`` records are read
from the broker or the evidence log, notify's log from its stderr.
"""

from __future__ import annotations

import email
import email.policy
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from live_support import EVENT, FAST, T0, TOPICS, Publisher, Watcher, permit_text, wait_until
from runs_support import Runs
from runs_support import kent_ops as kent_ops_process
from security_support import account, retained

from kent_ops.broker.client import make_client, parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker, free_port
from kent_ops.core import wire
from kent_ops.core.permit import load_permit
from kent_ops.core.witness import read_witness
from kent_ops.evidence.log import read_records
from kent_ops.service.aggregator import Aggregator

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(120),
    # The test server takes a login without TLS (on loopback), as a local relay would.
    pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning"),
]

SMTP_USER = "kent-ops-mailer"
SMTP_PASSWORD = "Gr33n-Lantern-77"
TO = "inspector.two@kent-ny.example"
FROM = "kent-ops@kent-ny.example"
DASHBOARD = "https://command-post.example/dash"
STATES = ("active", "cleared")
SECRETS = (SMTP_USER, SMTP_PASSWORD, TO, FROM, "inspector.two", "kent-ny.example")


# -- a real mail server ---------------------------------------------------------------------


class MailServer:
    """aiosmtpd on a fixed loopback port that wants SMTP_USER / SMTP_PASSWORD; start, stop."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.mails: list[email.message.EmailMessage] = []
        self._cond = threading.Condition()
        self._controller: Controller | None = None

    def _auth(self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        wanted = LoginPassword(SMTP_USER.encode(), SMTP_PASSWORD.encode())
        return AuthResult(success=data == wanted)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        mail = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self._cond:
            self.mails.append(mail)  # type: ignore[arg-type]
            self._cond.notify_all()
        return "250 OK"

    def start(self) -> None:
        self._controller = Controller(
            self, hostname="127.0.0.1", port=self.port,
            authenticator=self._auth, auth_required=True, auth_require_tls=False,
        )  # fmt: skip
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def wait_for(self, count: int, timeout: float = 60.0) -> list[email.message.EmailMessage]:
        """The mails once at least ``count`` have arrived (bounded wait)."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.mails) >= count, timeout):
                raise AssertionError(f"{len(self.mails)} mail(s) within {timeout} s, not {count}")
            return list(self.mails)

    @property
    def url(self) -> str:
        return f"mailto://{SMTP_USER}:{SMTP_PASSWORD}@127.0.0.1:{self.port}?from={FROM}&to={TO}"


def text_of(mail: email.message.EmailMessage) -> str:
    return str(mail.get_body(preferencelist=("plain",)).get_content())  # type: ignore[union-attr]


@pytest.fixture
def mail_server() -> Iterator[MailServer]:
    server = MailServer(free_port())
    server.start()
    yield server
    server.stop()


# -- the sent records, as the broker carries them ---------------------------------------------


class SentRecords:
    """A real subscriber to every notifier's ``sent`` topic, keeping every record in order."""

    def __init__(self, broker: MosquittoBroker) -> None:
        self.raw: list[bytes] = []
        self._cond = threading.Condition()
        subscribed = threading.Event()
        self.client = make_client(parse_broker_url(broker.url))
        self.client.on_connect = lambda c, *a: c.subscribe(TOPICS.notifier_sent("+"), qos=1)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        assert subscribed.wait(10), "could not subscribe to the sent records"

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        with self._cond:
            self.raw.append(msg.payload)
            self._cond.notify_all()

    def wait(self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float = 60) -> Any:
        with self._cond:
            ok = self._cond.wait_for(lambda: predicate(self.records()), timeout)
            assert ok, f"sent records never as wanted: {self.records()}"
            return self.records()

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(r) for r in self.raw]


@pytest.fixture
def sent(broker: MosquittoBroker) -> Iterator[SentRecords]:
    s = SentRecords(broker)
    yield s
    s.client.disconnect()
    s.client.loop_stop()


# -- kent-ops notify as a process -------------------------------------------------------------


class NotifyProcess:
    """``python -m kent_ops notify`` with its stderr kept, line by line."""

    def __init__(self, argv: list[str]) -> None:
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kent_ops", "notify", *argv],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("KENT_OPS_")},
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()

    def wait_line(self, text: str, timeout: float = 30) -> None:
        with self._cond:
            ok = self._cond.wait_for(lambda: any(text in line for line in self.lines), timeout)
            assert ok, f"notify never logged {text!r}: {self.lines}"

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        self._reader.join(10)
        return code


def write_config(tmp_path: Path, smtp_url: str, **retry: float) -> Path:
    retry = {"first_delay_s": 1, "max_delay_s": 4, "give_up_after_s": 600, **retry}
    path = tmp_path / "notify.toml"
    path.write_text(
        f'id = "notify-1"\ndashboard = "{DASHBOARD}"\nstate_file = "sent.json"\n'
        "[retry]\n" + "".join(f"{k} = {v}\n" for k, v in retry.items()) + "\n"
        f'[[people]]\nid = "insp-2"\nseverities = ["breach"]\nchannels = ["{smtp_url}"]\n'
        f'[[people]]\nid = "lot-watch"\nseverities = ["warning"]\nchannels = ["{smtp_url}"]\n'
    )
    path.chmod(0o600)
    return path


@pytest.fixture
def start_notify(broker: MosquittoBroker) -> Iterator[Callable[[Path, Path], NotifyProcess]]:
    running: list[NotifyProcess] = []
    url = broker.url

    def start(permit: Path, config: Path) -> NotifyProcess:
        n = NotifyProcess(["--permit", str(permit), "--config", str(config), "--broker", url])
        running.append(n)
        n.wait_line("watching the alerts")
        return n

    yield start
    for n in running:
        n.stop()


def quiet_permit(tmp_path: Path) -> Path:
    (permit := tmp_path / "permit.toml").write_text(permit_text())
    return permit


def assert_nothing_secret(texts: list[str]) -> None:
    """No address, user name or password of the channel anywhere in ``texts``."""
    for secret in SECRETS:
        assert secret not in "\n".join(texts), f"{secret!r} leaked"


def alert_payload(state: str, *, since: float = 10, ended: float | None = None) -> bytes:
    """A nurse-ratio breach as the aggregator publishes it (retained)."""
    at = T0 + timedelta(seconds=since)
    alert = wire.Alert(
        id="A-0007", rule="nurse-ratio", cite="permit:C(9)", severity="breach", state=state,
        since=at, raised_at=at + timedelta(seconds=2),
        ended_at=None if ended is None else T0 + timedelta(seconds=ended),
        cleared_at=None if state == "active" else T0 + timedelta(seconds=(ended or 0) + 3),
        message="2 nurses on duty; 1,100 persons need 3 (permit:C(9))",
    )  # fmt: skip
    return wire.encode(alert)


def staff_up(pub: Publisher) -> None:
    """A doctor, two nurses (enough for 1,000 persons) and the two guards declared."""
    for seq, (badge, role) in enumerate(
        [("DR-1", "doctor"), ("RN-1", "nurse"), ("RN-2", "nurse"), ("SEC-1", "security"),
         ("SEC-2", "security")], start=1,
    ):  # fmt: skip
        pub.badge(seq, 0, badge, role)


@pytest.fixture
def aggregator_for(
    tmp_path: Path, broker: MosquittoBroker
) -> Iterator[Callable[[float], tuple[Path, Aggregator]]]:
    """An aggregator on the sensor clock for a permit with the given ``clear_s``."""
    started: list[Aggregator] = []

    def start(clear_s: float) -> tuple[Path, Aggregator]:
        (permit := tmp_path / "permit.toml").write_text(permit_text(pending_s=2, clear_s=clear_s))
        agg = Aggregator(
            load_permit(permit), tmp_path / "evidence.sqlite",
            parse_broker_url(broker.url), clock="sensor", timing=FAST,
        )  # fmt: skip
        agg.start()
        assert agg.connected.wait(10)
        started.append(agg)
        return permit, agg

    yield start
    for agg in started:
        agg.stop()
        assert agg.wait(20)


# -- the tests --------------------------------------------------------------------------------


def test_a_breach_raised_and_ended_sends_one_mail_each_and_the_log_proves_it(
    tmp_path: Path,
    mail_server: MailServer,
    publisher: Publisher,
    aggregator_for: Callable[[float], tuple[Path, Aggregator]],
    start_notify: Callable[[Path, Path], NotifyProcess],
) -> None:
    permit, agg = aggregator_for(3)
    notify = start_notify(permit, write_config(tmp_path, mail_server.url))
    staff_up(publisher)  # 2 nurses: enough for 1,000 persons
    publisher.gate("north", 1, 1, 800, 0)
    publisher.gate("north", 2, 10, 1100, 0)  # 1,100 need 3 nurses from 14:00:10Z
    publisher.gate("north", 3, 13, 1120, 0)  # held 3 s: raised (pending_s = 2)

    (raised,) = mail_server.wait_for(1)
    assert "BREACH A-0001" in raised["subject"]
    assert "permit:C(9)" in raised["subject"]
    assert raised["to"] == TO
    lines = text_of(raised).splitlines()
    assert lines[0] == (
        "2 nurses on duty; 1,100 persons need 3; this holds only by rounding up (kent-ops' "
        "reading): 2 nurses meet one for each whole 500 persons (permit:C(9))"
    )
    assert "Since 2027-07-04 10:00:10 EDT (raised at 10:00:12)." in lines  # the event's zone
    assert f"Dashboard: {DASHBOARD}" in lines

    publisher.badge(6, 20, "RN-9", "nurse")  # the breach ends at 14:00:20Z (the reader's next)
    publisher.gate("north", 4, 30, 1120, 0)  # gone 10 s > clear_s: cleared
    ended = mail_server.wait_for(2)[1]
    assert "ended" in ended["subject"]
    assert "A-0001" in ended["subject"]
    assert "Held from 2027-07-04 10:00:10 EDT to 10:00:20" in text_of(ended)

    evidence = tmp_path / "evidence.sqlite"
    sent_topic = TOPICS.notifier_sent("notify-1")

    def logged() -> list[dict[str, Any]]:
        rows = [r for r in read_records(evidence) if r.kind == "message" and r.topic == sent_topic]
        return [json.loads(r.payload) for r in rows] if len(rows) >= 2 else []

    records = wait_until(logged, 30, "two sent records in the evidence log")
    fields = [(r["alert"], r["state"], r["to"], r["channel"], r["ok"], r["error"]) for r in records]
    assert fields == [
        ("A-0001", "active", "insp-2", "mailto", True, None),
        ("A-0001", "cleared", "insp-2", "mailto", True, None),
    ]
    assert list(records[0]) == ["ts", "alert", "state", "to", "channel", "ok", "error"]
    assert len(mail_server.mails) == 2
    assert notify.stop() == 0
    assert_nothing_secret(notify.lines + [json.dumps(r) for r in records])


@pytest.mark.slow
def test_sent_records_beside_a_rehearsal_carry_its_time_and_are_accepted(
    tmp_path: Path,
    mail_server: MailServer,
    publisher: Publisher,
    watcher: Watcher,
    aggregator_for: Callable[[float], tuple[Path, Aggregator]],
    start_notify: Callable[[Path, Path], NotifyProcess],
) -> None:
    """An aggregator on its sensors' clock (a rehearsal, the demo: a day months from the
    wall clock's) refuses a record stamped with the wall clock as being from another
    day. The notifier stamps its records with the aggregator's time, from its status."""
    permit, agg = aggregator_for(3)
    staff_up(publisher)
    publisher.gate("north", 1, 1, 800, 0)
    watcher.wait_for(TOPICS.status, lambda p: b'"ts":"2027' in p)  # its day has begun
    start_notify(permit, write_config(tmp_path, mail_server.url))
    publisher.gate("north", 2, 10, 1100, 0)  # 1,100 need 3 nurses: a breach
    publisher.gate("north", 3, 13, 1120, 0)  # held 3 s: raised
    mail_server.wait_for(1)
    evidence, sent_topic = tmp_path / "evidence.sqlite", TOPICS.notifier_sent("notify-1")

    def logged() -> list[Any]:
        return [r for r in read_records(evidence) if r.kind == "message" and r.topic == sent_topic]

    (record,) = wait_until(logged, 30, "the sent record in the evidence log")
    assert (record.accepted, record.reason) == (True, None)
    stamped = datetime.fromisoformat(json.loads(record.payload)["ts"])
    assert T0 <= stamped <= T0 + timedelta(seconds=13)  # the simulated day's time


def test_fifty_flaps_within_clear_s_send_one_mail(
    tmp_path: Path,
    mail_server: MailServer,
    publisher: Publisher,
    watcher: Watcher,
    aggregator_for: Callable[[float], tuple[Path, Aggregator]],
    start_notify: Callable[[Path, Path], NotifyProcess],
    sent: SentRecords,
) -> None:
    permit, agg = aggregator_for(600)
    notify = start_notify(permit, write_config(tmp_path, mail_server.url))
    staff_up(publisher)
    publisher.gate("north", 1, 1, 800, 0)
    publisher.gate("north", 2, 10, 1100, 0)
    publisher.gate("north", 3, 13, 1100, 0)  # raised: A-0001
    watcher.alert("A-0001")
    seq, at, entries, exits = 3, 13, 1100, 0
    for _ in range(50):  # the condition goes (1,000 present) and returns (1,100), 1 s apart
        exits += 100
        seq, at = seq + 1, at + 1
        publisher.gate("north", seq, at, entries, exits)
        # Each half of a flap is published by the aggregator before the next (it would
        # otherwise fold a quick burst into one change), so notify sees every one.
        watcher.alert("A-0001", lambda a: a["ended_at"] is not None)
        entries += 100
        seq, at = seq + 1, at + 1
        publisher.gate("north", seq, at, entries, exits)
        watcher.alert("A-0001", lambda a: a["ended_at"] is None)
    exits += 100
    publisher.gate("north", seq + 1, at + 1, entries, exits)  # gone for good
    publisher.gate("north", seq + 2, at + 700, entries, exits)  # past clear_s: cleared

    records = sent.wait(lambda rs: len(rs) >= 2)
    assert [(r["alert"], r["state"], r["ok"]) for r in records] == [
        ("A-0001", "active", True),
        ("A-0001", "cleared", True),
    ]
    mails = mail_server.wait_for(2)
    assert ["BREACH A-0001" in m["subject"] for m in mails] == [True, False]
    assert "ended" in mails[1]["subject"]
    # The flaps did reach notify: the aggregator published the alert at each one.
    published = [r for r in read_records(tmp_path / "evidence.sqlite") if r.kind == "alert"]
    assert sum(1 for r in published if json.loads(r.payload)["id"] == "A-0001") >= 102
    assert notify.stop() == 0
    assert len(mail_server.mails) == 2
    assert_nothing_secret(notify.lines + [json.dumps(r) for r in sent.records()])


@pytest.mark.timeout(180)
@pytest.mark.slow
def test_a_mail_server_down_for_30_s_gets_the_mail_after_with_every_attempt_recorded(
    tmp_path: Path,
    broker: MosquittoBroker,
    publisher: Publisher,
    start_notify: Callable[[Path, Path], NotifyProcess],
    sent: SentRecords,
) -> None:
    permit = quiet_permit(tmp_path)
    server = MailServer(free_port())  # not started: the mail server is down
    notify = start_notify(permit, write_config(tmp_path, server.url))
    publisher.client.publish(TOPICS.alert("A-0007"), alert_payload("active"), qos=1, retain=True)

    first = sent.wait(lambda rs: len(rs) >= 1)[0]
    down_since = time.monotonic()
    assert (first["ok"], first["to"], first["channel"]) == (False, "insp-2", "mailto")
    time.sleep(max(0.0, 30 - (time.monotonic() - down_since)))  # the outage itself: 30 s
    server.start()
    try:
        (mail,) = server.wait_for(1)
        records = sent.wait(lambda rs: rs[-1]["ok"])
    finally:
        assert notify.stop() == 0
        server.stop()
    assert "BREACH A-0007" in mail["subject"]
    failures, success = records[:-1], records[-1]
    assert len(failures) >= 3  # tried again and again while it was down
    assert all(not r["ok"] and r["error"] for r in failures)
    assert all((r["alert"], r["state"]) == ("A-0007", "active") for r in records)
    assert (success["ok"], success["error"]) == (True, None)
    stamps = [datetime.fromisoformat(r["ts"]) for r in records]
    assert stamps[-1] - stamps[0] >= timedelta(seconds=29)
    assert len(server.mails) == 1
    assert any("trying again in" in line for line in notify.lines)
    assert_nothing_secret(notify.lines + [json.dumps(r) for r in records])


def test_a_restart_resends_nothing_and_still_sends_the_end(
    tmp_path: Path,
    broker: MosquittoBroker,
    mail_server: MailServer,
    publisher: Publisher,
    start_notify: Callable[[Path, Path], NotifyProcess],
    sent: SentRecords,
) -> None:
    permit = quiet_permit(tmp_path)
    config = write_config(tmp_path, mail_server.url)
    first = start_notify(permit, config)
    publisher.client.publish(TOPICS.alert("A-0007"), alert_payload("active"), qos=1, retain=True)
    mail_server.wait_for(1)
    sent.wait(lambda rs: len(rs) == 1)
    assert first.stop() == 0

    second = start_notify(permit, config)  # the retained alert is delivered to it again
    publisher.client.publish(
        TOPICS.alert("A-0007"), alert_payload("cleared", ended=40), qos=1, retain=True
    )
    mails = mail_server.wait_for(2)
    records = sent.wait(lambda rs: len(rs) >= 2)
    assert second.stop() == 0
    assert ["BREACH A-0007" in m["subject"] for m in mails] == [True, False]
    assert [(r["alert"], r["state"]) for r in records] == [("A-0007", s) for s in STATES]
    assert len(mail_server.mails) == 2
    state = json.loads((tmp_path / "sent.json").read_text())
    assert state["notices"] == {
        "A-0007|active|insp-2|1": {"status": "sent"},
        "A-0007|cleared|insp-2|1": {"status": "sent"},
    }
    assert_nothing_secret(first.lines + second.lines + [json.dumps(r) for r in records])


def test_severities_choose_who_is_told(
    tmp_path: Path,
    mail_server: MailServer,
    publisher: Publisher,
    start_notify: Callable[[Path, Path], NotifyProcess],
    sent: SentRecords,
) -> None:
    permit = quiet_permit(tmp_path)
    notify = start_notify(permit, write_config(tmp_path, mail_server.url))
    warning = wire.Alert(
        id="A-0009", rule="lot-full", subject="lot-a", cite="permit:C(4)", severity="warning",
        since=T0, raised_at=T0, message="lot-a 96% full",
    )  # fmt: skip
    offline = wire.Alert(id="A-0010", rule="sensor-offline", severity="data", since=T0)
    for alert in (offline, warning):
        publisher.client.publish(TOPICS.alert(alert.id), wire.encode(alert), qos=1, retain=True)
    records = sent.wait(lambda rs: len(rs) >= 1)
    (mail,) = mail_server.wait_for(1)
    assert notify.stop() == 0
    assert [(r["alert"], r["to"]) for r in records] == [("A-0009", "lot-watch")]
    assert "A-0009" in mail["subject"]
    assert "(lot-a)" in mail["subject"]
    assert "Since 2027-07-04 10:00:00 EDT" in text_of(mail)  # T0 in the event's zone


def test_a_notice_still_being_retried_when_notify_is_killed_is_sent_after_the_restart(
    tmp_path: Path,
    broker: MosquittoBroker,
    publisher: Publisher,
    start_notify: Callable[[Path, Path], NotifyProcess],
    sent: SentRecords,
) -> None:
    permit = quiet_permit(tmp_path)
    server = MailServer(free_port())  # down at first
    config = write_config(tmp_path, server.url)
    first = start_notify(permit, config)
    publisher.client.publish(TOPICS.alert("A-0007"), alert_payload("active"), qos=1, retain=True)
    sent.wait(lambda rs: len(rs) >= 1)
    first.proc.kill()  # no clean stop: the ledger on disk is all the next run has
    assert first.stop() == -signal.SIGKILL
    server.start()
    try:
        second = start_notify(permit, config)
        (mail,) = server.wait_for(1)
        records = sent.wait(lambda rs: rs[-1]["ok"])
        assert second.stop() == 0
    finally:
        server.stop()
    assert "BREACH A-0007" in mail["subject"]
    assert len(server.mails) == 1
    assert any("left pending by the last run" in line for line in second.lines)
    assert_nothing_secret(first.lines + second.lines + [json.dumps(r) for r in records])


def test_notify_keeps_each_checkpoint_and_a_log_cut_back_is_caught_by_it(
    tmp_path: Path,
    runs: Runs,
    watcher: Watcher,
    publisher: Publisher,
    broker: MosquittoBroker,
    mail_server: MailServer,
    start_notify: Callable[[Path, Path], NotifyProcess],
) -> None:
    """The notifier keeps every checkpoint it receives (by default beside its state file);
    the command post puts an older copy of the log back, head file and all: ``kent-ops
    verify --witness`` with the notifier's file names the cut and the witness."""
    notify = start_notify(runs.permit, write_config(tmp_path, mail_server.url))
    witness = tmp_path / "witness" / f"{EVENT}.jsonl"
    runs.serve(watcher, publisher, 1, 5)
    older = tmp_path / "older"
    older.mkdir()
    for name in ("evidence.sqlite", "evidence.sqlite.head"):
        shutil.copy(tmp_path / name, older / name)
    kept = len(list(read_records(older / "evidence.sqlite")))
    runs.serve(watcher, publisher, 6, 40)
    last = retained(account(broker, None), TOPICS.checkpoint)
    assert last is not None
    wait_until(
        lambda: witness.exists() and witness.read_bytes().rstrip().endswith(
            json.dumps(last.decode()).encode() + b"}"
        ),
        30,
        "the notifier to keep the last checkpoint",
    )  # fmt: skip
    assert notify.stop() == 0
    entries = read_witness(witness.read_bytes(), EVENT).entries
    assert {e.by for e in entries} == {"notifier-notify-1"}
    assert json.loads(witness.read_bytes().splitlines()[-1])["payload"].encode() == last
    whole = kent_ops_process("verify", str(runs.evidence), "--witness", str(witness))
    assert (whole.returncode, whole.stderr) == (0, "")
    assert whole.stdout.startswith("OK ")

    for name in ("evidence.sqlite", "evidence.sqlite.head"):  # the older copy put back
        shutil.copy(older / name, tmp_path / name)
    alone = kent_ops_process("verify", str(runs.evidence))
    assert alone.returncode == 0  # its own head file came with it: nothing else to tell
    cut = kent_ops_process("verify", str(runs.evidence), "--witness", str(witness))
    first = next(e for e in entries if e.record > kept)
    assert cut.returncode == 1
    assert cut.stdout == (
        f"FAIL record {kept + 1}: the log holds {kept} records but witness {witness} (line "
        f"{first.line}, kept by notifier-notify-1 at {first.received_at}) names record "
        f"{first.record}\n"
    )
