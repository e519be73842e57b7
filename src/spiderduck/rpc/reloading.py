"""Files read again when they change, without a restart (issue 38): the TLS certificates, keys,
CAs and revocation lists of the gRPC servers (spiderduck.rpc.tls, spiderduck.rpc.crl) and of the
web UI (spiderduck.web.server).

    Reloading(what, paths, load)   .current(): what `load()` made of the files, made again when
                                   one of `paths` changes; `.generation` counts the loads

A file's stamp is its device, inode, size, mtime and ctime: a file moved in place (a rotated
Secret's symlink swap) is another inode, and one rewritten in place has another ctime. Looking is
one stat per file, cheap enough for every TLS handshake. The first load happens at construction,
so its error (a ConfigError naming the setting and the path) fails the start. A later load that
fails keeps what was loaded before and logs the error at ERROR, once per change of the files;
the error names settings and paths, never a file's contents.
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Callable, Generic, Sequence, TypeVar

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
    """`load()`'s value, made again from `paths` when one changes (`what` names them in the log).
    Safe to call from gRPC's handshake threads and the event loop alike."""

    def __init__(self, what: str, paths: Sequence[str], load: Callable[[], T]):
        self.what = what
        self.paths = tuple(path for path in paths if path)
        self._load = load
        self._lock = threading.Lock()
        self._stamps = self._stamp()
        self._value = load()
        self.generation = 0

    def _stamp(self) -> tuple:
        return tuple(stamp(path) for path in self.paths)

    def current(self) -> T:
        stamps = self._stamp()
        if stamps == self._stamps:
            return self._value
        with self._lock:
            if stamps != self._stamps:
                self._stamps = stamps     # a failed load is tried again only once the files change
                try:
                    self._value = self._load()
                except ConfigError as exc:
                    log.error("%s changed but cannot be used, the previous ones are kept: %s", self.what, exc)
                except Exception as exc:  # noqa: BLE001 -- a handshake must never raise
                    log.error("%s changed but cannot be used, the previous ones are kept: %s",
                              self.what, type(exc).__name__)
                else:
                    self.generation += 1
                    log.info("%s read again", self.what)
            return self._value
