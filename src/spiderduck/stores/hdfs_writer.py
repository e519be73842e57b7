"""The HDFS content store's writer: batched appends, sealed files, orphans recovered.

One `HdfsWriter` lives on the store's writer thread (a BatchThread); nothing else touches it.

Batches. Records queued while the thread was busy are staged one after another (each gets its
ref at once: the writer counts the file's length itself) and written with one WebHDFS CREATE or
APPEND per batch, not one per record: an append costs two HTTP round trips and a block-commit
wait on the NameNode, so a batch of 50 records costs about what one did. A batch is flushed
early once `FLUSH_BYTES` are staged. If a write fails, every record of the batch fails (some
may have landed: the caller's retry only writes them again) and the file is given up.

Sealing. A file is written under its in-progress name (`.NAME.inprogress`, hidden from Hadoop
readers) and renamed to NAME when it reaches its size or age limit (`tick` checks the age even
when no records come) or the store closes. A reader listing the folders therefore only ever
sees files that end on a whole record. A given-up file is first cut back to the bytes known to
be whole (WebHDFS TRUNCATE) and then sealed; where that fails too, it stays in progress for the
orphan sweep.

Orphans. A writer killed (kill -9, a lost pod) leaves its in-progress file behind, maybe ending
in part of a record. Every acknowledged record in it stays readable through its ref (readers
look for the in-progress name too). At start a writer sweeps the dated folders of the last
`SWEEP_DAYS` days: an in-progress file untouched for twice the roll age is nobody's (a live
writer seals its file at the roll age), so it is cut back to its last whole record and sealed.
"""
from __future__ import annotations

import contextlib
import logging
import posixpath
import time

import hdfs
import requests
from hdfs.client import _Request

from spiderduck.core.errors import StoreError
from spiderduck.stores.warc_rolling import (RollingFile, RollPolicy, complete_length, in_progress,
                                        sealed_name)

log = logging.getLogger(__name__)

FLUSH_BYTES = 8 << 20          # a batch is written once this much is staged (bounds memory)
SWEEP_DAYS = 7                 # how far back the start-up sweep looks for orphaned files
TRUNCATE_WAIT = 30.0           # seconds a cut waits for the DataNode's block recovery
TRUNCATE_POLL = 0.1
_NOT_THERE = {"FileNotFoundException", "InvalidPathException"}
FAILURES = (hdfs.HdfsError, requests.RequestException)   # what a WebHDFS call raises


class WebHdfsClient(hdfs.InsecureClient):
    """The `hdfs` package's client, plus the TRUNCATE operation it lacks (Hadoop 2.7+)."""
    _truncate = _Request("POST")

    def truncate(self, path: str, length: int, *, wait: float = 0.0) -> None:
        """Cut the file to `length` bytes. A cut inside a block is finished by a block recovery
        on the DataNode (a heartbeat or two later); until then readers still get the old
        length, so wait up to `wait` seconds for the new one (HdfsError past that)."""
        if self._truncate(path, newlength=length).json()["boolean"]:
            return
        deadline = time.monotonic() + wait
        while self.status(path)["length"] != length:
            if time.monotonic() > deadline:
                raise hdfs.HdfsError(f"truncating {path} to {length} bytes: still recovering "
                                     f"after {wait:g}s")
            time.sleep(TRUNCATE_POLL)


def store_error(where: str, exc: Exception) -> StoreError:
    """Retryable, unless the file is not there or the offset lies past its end."""
    missing = isinstance(exc, hdfs.HdfsError) and (
        getattr(exc, "exception", None) in _NOT_THERE or "out of the range" in str(exc))
    return StoreError(f"hdfs content store {where}: {exc}", retryable=not missing)


class HdfsWriter:
    def __init__(self, client: WebHdfsClient, policy: RollPolicy, clock=time.time):
        self._client = client
        self._clock = clock
        self.file = RollingFile(policy, dated=True)
        self._staged: list[bytes] = []
        self._staged_bytes = 0
        self._created = False          # the current file exists on HDFS
        self._written = 0              # its bytes known to be on HDFS, whole records only
        self._failure: StoreError | None = None

    # -- a batch of appends ----------------------------------------------------------------

    @contextlib.contextmanager
    def batch(self):
        """Around one batch of `stage` calls: write what they staged; raise if any write failed,
        so every call of the batch fails."""
        self._failure = None
        yield
        self.flush()
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def stage(self, data: bytes) -> str:
        """Place one record in the current file (rolling first if due); returns its ref."""
        now = self._clock()
        if self.file.due(now):
            self.seal()
        if self.file.next(now):
            self._created, self._written = False, 0
        ref = self.file.wrote(len(data))
        self._staged.append(data)
        self._staged_bytes += len(data)
        if self._staged_bytes >= FLUSH_BYTES:
            self.flush()
        return str(ref)

    def flush(self) -> None:
        if not self._staged:
            return
        data = b"".join(self._staged)
        self._staged.clear()
        self._staged_bytes = 0
        path = in_progress(self.file.path)
        try:
            if self._created:
                self._client.write(path, data=data, append=True)
            else:
                # Creates the dated folders too; overwrite=False: never clobber a file.
                self._client.write(path, data=data, overwrite=False)
                self._created = True
            self._written += len(data)
        except FAILURES as exc:
            self._failure = store_error(f"append to {path}", exc)
            self._failure.__cause__ = exc
            self._give_up()

    # -- closing files ---------------------------------------------------------------------

    def seal(self) -> None:
        """Write what is staged, rename the current file to its sealed name, start afresh."""
        self.flush()
        if self.file.path and self._created:
            self._seal(self.file.path)
        self.file.abandon()
        self._created = False

    def tick(self) -> None:
        """Seal the current file once it is as old as the roll age, even with no new records."""
        if self.file.due(self._clock()):
            self.seal()

    def _seal(self, path: str) -> None:
        try:
            self._client.rename(in_progress(path), path)
        except FAILURES as exc:
            log.warning("hdfs: could not seal %s (left in progress for a later sweep): %s", path, exc)

    def _give_up(self) -> None:
        """After a failed write: cut the file back to its whole records and seal it, or drop
        it when it holds none. Best effort; the orphan sweep finishes what fails here."""
        path, keep, created = self.file.path, self._written, self._created
        self.file.abandon()
        self._created = False
        if not created:
            return
        try:
            if keep:
                self._client.truncate(in_progress(path), keep, wait=TRUNCATE_WAIT)
                self._seal(path)
            else:
                self._client.delete(in_progress(path))
        except FAILURES as exc:
            log.warning("hdfs: could not cut back %s after a failed append: %s", path, exc)


# -- orphans ---------------------------------------------------------------------------------

def sweep_orphans(client: WebHdfsClient, roll_seconds: float, now: float) -> list[str]:
    """Seal the in-progress files nobody writes any more (see the module's docstring) in the
    last SWEEP_DAYS dated folders; returns the paths sealed. Runs on a thread of its own, so
    a cut that waits for block recovery holds no append up."""
    stale_before = (now - 2 * roll_seconds) * 1000                  # HDFS times are millis
    sealed = []
    for day in range(SWEEP_DAYS):
        folder = time.strftime("%Y/%m/%d", time.gmtime(now - day * 86400))
        try:
            entries = client.list(folder, status=True)
        except FAILURES:
            continue                                    # no such folder (or the cluster is down)
        for name, status in entries:
            final = sealed_name(name)
            if final and status.get("type") == "FILE" and \
                    status.get("modificationTime", now * 1000) < stale_before:
                path = posixpath.join(folder, final)
                if _recover(client, path):
                    sealed.append(path)
    return sealed


def _recover(client: WebHdfsClient, path: str) -> bool:
    """Cut an orphan back to its whole records and seal it (drop it if it has none)."""
    try:
        with client.read(in_progress(path)) as reader:
            data = reader.read()
        whole = complete_length(data)
        if not whole:
            client.delete(in_progress(path))
            return False
        if whole < len(data):
            log.warning("hdfs: orphaned %s ends in part of a record: cutting %d bytes",
                        path, len(data) - whole)
            client.truncate(in_progress(path), whole, wait=TRUNCATE_WAIT)
        client.rename(in_progress(path), path)
        return True
    except FAILURES as exc:
        log.warning("hdfs: could not recover orphaned %s: %s", path, exc)
        return False
