"""Content store on HDFS (`hdfs://NAMENODE:PORT/PATH?user=U`) through WebHDFS.

The same WARC files as the local store (one gzip member per record, rolling by size and
age), written with the `hdfs` package under PATH in dated folders:

    PATH/YYYY/MM/DD/spiderduck-YYYYmmddHHMMSS-HOST-PID-SERIAL.warc.gz

content_ref is `YYYY/MM/DD/NAME@OFFSET+LENGTH` (common.stores.warc_rolling): the file
relative to PATH, the record's byte offset and compressed length; `read` fetches exactly
those bytes with WebHDFS OPEN (offset=, length=).

Every writer owns its files (host, pid and serial in the name), so fetchers and schedulers
never append to the same file. One writer thread per store performs the creates and
appends in order; the store counts the current file's length itself, so offsets need no
status call. A failed create or append abandons the file (its tail may hold part of a
record) and the next record starts a new one, so a ref handed out is always exact.

URL: `hdfs://nn:9870/path?user=U[&roll_bytes=N][&roll_seconds=S][&timeout=S]`; several
namenodes (HA) as `hdfs://nn1:9870,nn2:9870/path`. WebHDFS over plain HTTP, simple
(insecure) authentication as `user`.

`hdfs.HdfsError` and `requests` errors become StoreError here: retryable, except a missing
file or a ref that does not locate a record.
"""
from __future__ import annotations

import asyncio
import posixpath
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

import hdfs
import requests

from common.errors import ConfigError, StoreError
from common.stores.content import ContentStore, FetchedContent, warc_record
from common.stores.warc_rolling import (DEFAULT_ROLL_BYTES, DEFAULT_ROLL_SECONDS, ContentRef,
                                        RollingFile, RollPolicy, decode_record)

DEFAULT_PORT = 9870                   # the namenode's WebHDFS (HTTP) port since Hadoop 3
DEFAULT_TIMEOUT = 30.0                # seconds per WebHDFS request
_NOT_THERE = {"FileNotFoundException", "InvalidPathException"}


@dataclass(frozen=True)
class HdfsLocation:
    """Where an `hdfs://` content_store URL points."""
    namenodes: tuple[tuple[str, int], ...]     # (host, WebHDFS port), first is tried first
    root: str                                  # absolute folder on HDFS
    user: str
    roll: RollPolicy = RollPolicy()
    timeout: float = DEFAULT_TIMEOUT

    @property
    def webhdfs_url(self) -> str:
        """The `hdfs` client's URL: namenodes joined by `;`."""
        return ";".join(f"http://{host}:{port}" for host, port in self.namenodes)

    @classmethod
    def parse(cls, url: str) -> "HdfsLocation":
        parts = urlsplit(url)
        if parts.scheme != "hdfs":
            raise ConfigError(f"content_store: {url!r} is not an hdfs:// URL")
        namenodes = tuple(_namenode(url, hostport) for hostport in parts.netloc.split(","))
        root = posixpath.normpath(parts.path) if parts.path.strip("/") else ""
        if not root or ".." in parts.path.split("/"):
            raise ConfigError(f"content_store: {url!r} needs a folder, e.g. hdfs://nn:9870/spiderduck/content?user=U")
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        unknown = set(query) - {"user", "roll_bytes", "roll_seconds", "timeout"}
        if unknown:
            raise ConfigError(f"content_store: {url!r}: unknown option(s) {', '.join(sorted(unknown))}")
        if not query.get("user"):
            raise ConfigError(f"content_store: {url!r} needs ?user=U (the HDFS user to write as)")
        try:
            roll = RollPolicy(int(query.get("roll_bytes", DEFAULT_ROLL_BYTES)),
                              float(query.get("roll_seconds", DEFAULT_ROLL_SECONDS)))
            timeout = float(query.get("timeout", DEFAULT_TIMEOUT))
        except ValueError as exc:
            raise ConfigError(f"content_store: {url!r}: {exc}") from None
        return cls(namenodes, root, query["user"], roll, timeout)


def _namenode(url: str, hostport: str) -> tuple[str, int]:
    host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "")
    if not host or (port and not port.isdigit()):
        raise ConfigError(f"content_store: {url!r}: bad namenode {hostport!r}")
    return host, int(port) if port else DEFAULT_PORT


def _store_error(where: str, exc: Exception) -> StoreError:
    """Retryable, unless the file is not there or the offset lies past its end."""
    missing = isinstance(exc, hdfs.HdfsError) and (
        getattr(exc, "exception", None) in _NOT_THERE or "out of the range" in str(exc))
    return StoreError(f"hdfs content store {where}: {exc}", retryable=not missing)


class HdfsContentStore(ContentStore):
    def __init__(self, location: HdfsLocation, *, clock=time.time, readers: int = 4):
        self._loc = location
        self._clock = clock
        # Writes and reads use separate clients (so separate HTTP sessions per thread pool).
        self._writer = hdfs.InsecureClient(location.webhdfs_url, user=location.user,
                                           root=location.root, timeout=location.timeout)
        self._reader = hdfs.InsecureClient(location.webhdfs_url, user=location.user,
                                           root=location.root, timeout=location.timeout)
        self._write_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hdfs-write")
        self._read_pool = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="hdfs-read")
        self._file = RollingFile(location.roll, dated=True)

    @classmethod
    def from_url(cls, url: str, **kwargs) -> "HdfsContentStore":
        return cls(HdfsLocation.parse(url), **kwargs)

    def __repr__(self) -> str:
        return f"HdfsContentStore({self._loc.webhdfs_url}{self._loc.root})"

    # -- writing: only ever on the one writer thread --------------------------------------

    def _append(self, data: bytes) -> str:
        new = self._file.next(self._clock())
        path = self._file.path
        try:
            if new:
                # Creates the dated folders too; overwrite=False: never clobber a file.
                self._writer.write(path, data=data, overwrite=False)
            else:
                self._writer.write(path, data=data, append=True)
        except (hdfs.HdfsError, requests.RequestException) as exc:
            self._file.abandon()
            raise _store_error(f"append to {path}", exc) from exc
        return str(self._file.wrote(len(data)))

    async def append(self, item: FetchedContent) -> str:
        loop = asyncio.get_running_loop()
        data = await loop.run_in_executor(None, warc_record, item)   # zlib releases the GIL
        return await loop.run_in_executor(self._write_pool, self._append, data)

    # -- reading ---------------------------------------------------------------------------

    def _read(self, ref: ContentRef) -> bytes:
        try:
            # chunk_size: iter_content turns urllib3 errors mid-body into requests errors.
            with self._reader.read(ref.path, offset=ref.offset, length=ref.length,
                                   chunk_size=1 << 16) as chunks:
                return b"".join(chunks)
        except (hdfs.HdfsError, requests.RequestException) as exc:
            raise _store_error(f"read {ref}", exc) from exc

    async def read(self, content_ref: str) -> tuple[dict[str, str], bytes]:
        ref = ContentRef.parse(content_ref)
        data = await asyncio.get_running_loop().run_in_executor(self._read_pool, self._read, ref)
        return decode_record(ref, data)

    async def close(self) -> None:
        # Each append closes its HDFS stream, so there is nothing to flush: wait for
        # writes already queued, then let the pools go.
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._write_pool.shutdown, True)
        self._read_pool.shutdown(wait=False)
