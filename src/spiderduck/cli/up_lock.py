"""One `spiderduck up` per data_dir: a lock file the kernel releases when its holder dies.

`up` holds an exclusive flock on `data_dir/up.lock` (holding its pid) for as long as it runs.
A second `up` on the same data_dir fails to take it and names the running pid. The CLI
asks the same lock whether an `up` runs there before it trusts `data_dir/nats.url` (and
`nats.token`, the token that NATS requires), so files left behind by a `kill -9` never point
it at a dead (or someone else's) server, nor give it a stale token.
"""
from __future__ import annotations

import contextlib
import fcntl
import os

from spiderduck.core.errors import ConfigError

LOCK_FILE = "up.lock"


class UpLock:
    def __init__(self, data_dir: str):
        self.path = os.path.join(data_dir, LOCK_FILE)
        self._fh = None

    def acquire(self) -> "UpLock":
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        fh = open(self.path, "a+", encoding="ascii")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _pid_in(fh)
            fh.close()
            raise ConfigError(f"another `spiderduck up` (pid {pid or 'unknown'}) is running on "
                              f"{os.path.dirname(self.path)}; stop it first, or give this one "
                              "another data_dir") from None
        with contextlib.suppress(OSError):
            os.fchmod(fh.fileno(), 0o600)     # one an older version left 0644
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is not None:
            self._fh.seek(0)
            self._fh.truncate()
            self._fh.close()         # closing drops the flock
            self._fh = None

    def __enter__(self) -> "UpLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def running_up(data_dir: str) -> int | None:
    """The pid of the `up` running on data_dir (0 if it has not written it yet), else None."""
    try:
        fh = open(os.path.join(data_dir, LOCK_FILE), encoding="ascii")
    except OSError:
        return None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _pid_in(fh) or 0
        fcntl.flock(fh, fcntl.LOCK_UN)
        return None


def _pid_in(fh) -> int | None:
    fh.seek(0)
    text = fh.read(32).strip()
    return int(text) if text.isdigit() else None
