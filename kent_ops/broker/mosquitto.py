"""Start a private Mosquitto broker: for the demo, the tests and the benchmarks.

One place writes the broker configuration we trust, so the tests run against the
same settings the demo and the deployment use. The queue limits matter: with its
defaults (``max_queued_messages 1000``) Mosquitto 2.0 silently drops QoS 1 messages
for a subscriber that falls behind while still acknowledging them to the publisher.
Every configuration written here lifts those limits so that nothing is dropped.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "NO_DROP_LIMITS",
    "PACKET_LIMIT",
    "UPTIME_TOPIC",
    "MosquittoBroker",
    "free_port",
    "mosquitto_binary",
]

UPTIME_TOPIC = "$SYS/broker/uptime"
"""Where Mosquitto says how long it has run (``"3600 seconds"``, retained, refreshed every
``sys_interval``): the aggregator reads it to tell that the broker restarted."""

# Zero means "no limit" in Mosquitto 2.0. A slow subscriber then costs memory, never data.
NO_DROP_LIMITS = """\
# Never drop a QoS 1/2 message for a subscriber that falls behind: Mosquitto's default
# (max_queued_messages 1000) silently discards the overflow while still acknowledging
# it to the publisher. 0 means unlimited.
max_queued_messages 0
max_queued_bytes 0
max_inflight_messages 0
max_inflight_bytes 0
"""

PACKET_LIMIT = """\
# The largest packet a client may send: kent-ops rejects every payload over 64 KiB and
# keeps only its size, hash and first bytes; a client that sends more than 256 KiB (a
# 100 MB flood) is disconnected at the socket before the broker holds it.
max_packet_size 262144
"""


def mosquitto_binary() -> str | None:
    """The path of a ``mosquitto`` binary, looking in sbin too (Debian puts it there)."""
    found = shutil.which("mosquitto")
    if found:
        return found
    for candidate in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if Path(candidate).is_file():
            return candidate
    return None


def _die_with_parent() -> None:
    """In the child: receive SIGTERM when the process that started us dies.

    A demo killed with its terminal (``tmux kill-session``) or a test run killed by a
    timeout must not leave a broker running on a port nobody knows about.
    """
    if sys.platform != "linux":
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


_PR_SET_PDEATHSIG = 1


def free_port() -> int:
    """A TCP port on the loopback nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class MosquittoBroker:
    """A Mosquitto process on a loopback port with a config we wrote; restartable."""

    workdir: Path
    port: int = field(default_factory=free_port)
    host: str = "127.0.0.1"
    extra_config: str = ""
    listener_config: str | None = None
    autosave: str = "autosave_interval 1\n"
    """When it saves to disk: every second or two for the demo and the tests (a SIGKILL
    between saves loses what came since); :data:`kent_ops.broker.persistence.FIELD_AUTOSAVE`
    for the field broker's own setting."""
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    @property
    def config_path(self) -> Path:
        return self.workdir / "mosquitto.conf"

    def write_config(self) -> Path:
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "data").mkdir(exist_ok=True)
        listener = self.listener_config
        if listener is None:
            listener = f"listener {self.port} {self.host}\nallow_anonymous true\n"
        # Started as root, Mosquitto drops to the "mosquitto" user and then cannot read
        # its own config's files in a private (0700) temporary folder. This broker is
        # ours, on the loopback, for tests and the demo: keep the user we started as.
        keep_user = "user root\n" if hasattr(os, "geteuid") and os.geteuid() == 0 else ""
        self.config_path.write_text(
            keep_user + listener + "persistence true\n"
            f"persistence_location {self.workdir / 'data'}/\n"
            f"{self.autosave}"
            f"{NO_DROP_LIMITS}{PACKET_LIMIT}"
            f"{self.extra_config}"
        )
        return self.config_path

    def start(self, timeout: float = 10.0) -> MosquittoBroker:
        binary = mosquitto_binary()
        if binary is None:
            raise FileNotFoundError("no mosquitto binary on the PATH")
        self.write_config()
        log = (self.workdir / "mosquitto.log").open("ab")
        self.process = subprocess.Popen(
            [binary, "-c", str(self.config_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,  # only sets a signal: safe between fork and exec
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"mosquitto exited with code {self.process.returncode}; "
                    f"see {self.workdir / 'mosquitto.log'}"
                )
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"mosquitto did not listen on port {self.port} within {timeout} s")

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the broker (SIGTERM, then SIGKILL); it saves its persistent sessions."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> MosquittoBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
