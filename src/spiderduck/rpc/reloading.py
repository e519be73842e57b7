"""Files read again when they change, without a restart (issue 38): the TLS certificates, keys,
CAs and revocation lists of the gRPC servers (spiderduck.rpc.server, spiderduck.rpc.crl) and of
the web UI (spiderduck.web.server).

    Reloading(what, paths, load)   .current: what `load()` made of the files
    .refresh()                     look at the files now: True when they changed and loaded
    await .watch(every, on_change) look every `every` seconds, until cancelled; after each new
                                   load, `await on_change(current)`

A file's stamp is its device, inode, size, mtime and ctime: a file moved in place (a rotated
Secret's symlink swap) is another inode, and one rewritten in place has another ctime. The first
load happens at construction, so its error (a ConfigError naming the setting and the path) fails
the start. A later load that fails keeps what was loaded before and logs the error at ERROR,
once per change of the files; the error names settings and paths, never a file's contents.

Everything here runs on the event loop, never in a TLS handshake: gRPC's handshake callbacks
(grpc.dynamic_ssl_server_credentials) run on gRPC's own threads and take the GIL, which
deadlocks when the process forks at that moment (an extraction worker or nats-server started:
the fork holds the GIL and waits for gRPC's threads). bench/tls_stop_stress.py found it: 5 of
30 `up`s hung. So a change is looked for on a timer and applied by the owner (`on_change`).
"""
from __future__ import annotations

import asyncio
import logging
import os
from typing import Awaitable, Callable, Generic, Sequence, TypeVar

from spiderduck.core.errors import ConfigError

log = logging.getLogger("spiderduck.rpc.tls")

T = TypeVar("T")


def stamp(path: str) -> tuple[int, ...] | None:
    """What tells a new file at `path` from the one read; None when it cannot be looked at."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class Reloading(Generic[T]):
    """`load()`'s value, made again from `paths` when one changes (`what` names them in the log)."""

    def __init__(self, what: str, paths: Sequence[str], load: Callable[[], T]):
        self.what = what
        self.paths = tuple(path for path in paths if path)
        self._load = load
        self._stamps = self._stamp()
        self.current: T = load()

    def _stamp(self) -> tuple:
        return tuple(stamp(path) for path in self.paths)

    def refresh(self) -> bool:
        """Read the files again if they changed since last looked at; True when that made a new
        value. A failed load is tried again only once the files change again."""
        stamps = self._stamp()
        if stamps == self._stamps:
            return False
        self._stamps = stamps
        try:
            value = self._load()
        except ConfigError as exc:
            log.error("%s changed but cannot be used, the previous ones are kept: %s", self.what, exc)
            return False
        except Exception as exc:  # noqa: BLE001 -- a bad file must never stop the watching
            log.error("%s changed but cannot be used, the previous ones are kept: %s",
                      self.what, type(exc).__name__)
            return False
        self.current = value
        log.info("%s read again", self.what)
        return True

    async def watch(self, every: float, on_change: Callable[[T], Awaitable[None]] | None = None) -> None:
        """Look at the files every `every` seconds until cancelled. `on_change` failing is
        logged at ERROR (without its message, which may quote a file) and the watching goes on."""
        while True:
            await asyncio.sleep(every)
            if self.refresh() and on_change is not None:
                try:
                    await on_change(self.current)
                except Exception as exc:  # noqa: BLE001 -- the next change is applied all the same
                    log.error("%s read again but could not be put in force: %s", self.what, type(exc).__name__)
