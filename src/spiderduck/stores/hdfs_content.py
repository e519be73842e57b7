"""Content store on HDFS (`hdfs://NAMENODE:PORT/PATH?user=U`) through WebHDFS.

The same WARC files as the local store (one gzip member per record, rolling by size and
age), written with the `hdfs` package under PATH in dated folders:

    PATH/YYYY/MM/DD/spiderduck-YYYYmmddHHMMSS-HOST-PID-SERIAL.warc.gz

content_ref is `YYYY/MM/DD/NAME@OFFSET+LENGTH` (spiderduck.stores.warc_rolling): the file
relative to PATH, the record's byte offset and compressed length; `read` fetches exactly
those bytes with WebHDFS OPEN (offset=, length=).

Every writer owns its files (host, pid and serial in the name), so fetchers and schedulers
never append to the same file. One writer thread per store stages the records and writes each
batch with one WebHDFS call; a file is written under a hidden in-progress name and renamed when
it rolls or the store closes, and files a killed writer left behind are recovered at start (see
spiderduck.stores.hdfs_writer). A read looks for the sealed name first, then the in-progress one.

URL: `hdfs://nn:9870/path?user=U[&roll_bytes=N][&roll_seconds=S][&timeout=S]`; several
namenodes (HA) as `hdfs://nn1:9870,nn2:9870/path`. WebHDFS over plain HTTP, simple
(insecure) authentication as `user`; a `user:password@` before the namenode is refused (never
quoted back: the error shows the URL as spiderduck.core.secrets.redact_url does).

`hdfs+https://nn:9871/path?user=U[&ca=PATH]`: WebHDFS over HTTPS (a cluster with
dfs.http.policy HTTPS_ONLY), to the namenodes and to the datanodes their CREATE, APPEND and
OPEN calls redirect to. Every one of them must show a certificate that chains to `ca` (a PEM
bundle; without it, requests' own trusted CAs) and names the host dialed: the namenodes as the
URL names them, the datanodes as the namenode names them in its redirects (their hostnames, or
their IPs unless dfs.datanode.use.datanode.hostname is set).

`hdfs.HdfsError` and `requests` errors become StoreError here: retryable, except a missing
file or a ref that does not locate a record.
"""
from __future__ import annotations

import asyncio
import posixpath
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Collection
from urllib.parse import parse_qsl, urlsplit

import requests
from requests.adapters import HTTPAdapter

from spiderduck.core.errors import ConfigError, StoreError
from spiderduck.core.secrets import redact_url
from spiderduck.core.settings_retention import FORGET_SEAL_POLL, FORGET_SEAL_WAIT
from spiderduck.stores import tls
from spiderduck.stores.batch_thread import BatchThread
from spiderduck.stores.content import ContentStore, FetchedContent, warc_record
from spiderduck.stores import hdfs_forget
from spiderduck.stores.hdfs_writer import FAILURES, HdfsWriter, WebHdfsClient, store_error, sweep_orphans
from spiderduck.stores.warc_rolling import (DEFAULT_ROLL_BYTES, DEFAULT_ROLL_SECONDS, ContentRef,
                                        RollPolicy, decode_record, following, in_progress, split_records)
from spiderduck.stores.warc_erase import Selection
from spiderduck.core.frozen import evolve

DEFAULT_PORT = 9870                   # the namenode's WebHDFS (HTTP) port since Hadoop 3
DEFAULT_HTTPS_PORT = 9871             # ... and its HTTPS port (hdfs+https://)
SCHEMES = ("hdfs", "hdfs+https")
OPTIONS = {"user", "roll_bytes", "roll_seconds", "timeout", "ca"}
DEFAULT_TIMEOUT = 30.0                # seconds per WebHDFS request
TICKS_PER_ROLL = 4                    # age checks per roll_seconds (so a file seals at most
MAX_TICK = 60.0                       # a quarter of its age, or a minute, late)


@dataclass(frozen=True)
class HdfsLocation:
    """Where an `hdfs://` content_store URL points."""
    namenodes: tuple[tuple[str, int], ...]     # (host, WebHDFS port), first is tried first
    root: str                                  # absolute folder on HDFS
    user: str
    roll: RollPolicy = RollPolicy()
    timeout: float = DEFAULT_TIMEOUT
    https: bool = False
    ca: str = ""                               # PEM bundle the servers must chain to (https)

    @property
    def webhdfs_url(self) -> str:
        """The `hdfs` client's URL: namenodes joined by `;`."""
        scheme = "https" if self.https else "http"
        return ";".join(f"{scheme}://{host}:{port}" for host, port in self.namenodes)

    def session(self) -> requests.Session:
        """The HTTP session of one client: over https, verifying against `ca`."""
        session = requests.Session()
        if self.ca:
            session.mount("https://", _VerifyAgainst(self.ca))
        return session

    @classmethod
    def parse(cls, url: str) -> "HdfsLocation":
        shown = redact_url(url)
        parts = urlsplit(url)
        if parts.scheme not in SCHEMES:
            raise ConfigError(f"content_store: {shown!r} is not an hdfs:// or hdfs+https:// URL")
        if "@" in parts.netloc:   # else a password would go on as a namenode's name, and into errors
            raise ConfigError(f"content_store: {shown!r}: no user or password before the namenode: "
                              "WebHDFS writes as ?user=U")
        https = parts.scheme == "hdfs+https"
        default_port = DEFAULT_HTTPS_PORT if https else DEFAULT_PORT
        namenodes = tuple(_namenode(shown, hostport, default_port)
                          for hostport in parts.netloc.split(","))
        root = posixpath.normpath(parts.path) if parts.path.strip("/") else ""
        if not root or ".." in parts.path.split("/"):
            raise ConfigError(f"content_store: {shown!r} needs a folder, "
                              "e.g. hdfs://nn:9870/spiderduck/content?user=U")
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        unknown = set(query) - OPTIONS
        if unknown:
            raise ConfigError(f"content_store: {shown!r}: unknown option(s) "
                              f"{', '.join(sorted(unknown))}")
        if not query.get("user"):
            raise ConfigError(f"content_store: {shown!r} needs ?user=U (the HDFS user to write as)")
        if query.get("ca"):
            if not https:
                raise ConfigError(f"content_store: {shown!r}: ca= needs hdfs+https://")
            tls.client_context("content_store", ca=query["ca"])     # a readable PEM bundle
        try:
            roll = RollPolicy(int(query.get("roll_bytes", DEFAULT_ROLL_BYTES)),
                              float(query.get("roll_seconds", DEFAULT_ROLL_SECONDS)))
            timeout = float(query.get("timeout", DEFAULT_TIMEOUT))
        except ValueError as exc:
            raise ConfigError(f"content_store: {shown!r}: {exc}") from None
        return cls(namenodes, root, query["user"], roll, timeout, https, query.get("ca", ""))


class _VerifyAgainst(HTTPAdapter):
    """HTTPS that verifies against `ca` whatever the environment says: requests lets
    REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE override a session's `verify`, which would trust the
    system's CAs instead of the cluster's (and refuse the cluster where it has its own CA)."""

    def __init__(self, ca: str):
        super().__init__()
        self._ca = ca

    def send(self, request, **kwargs):
        kwargs["verify"] = self._ca
        return super().send(request, **kwargs)


def _namenode(shown: str, hostport: str, default_port: int) -> tuple[str, int]:
    host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "")
    if not host or (port and not port.isdigit()):
        raise ConfigError(f"content_store: {shown!r}: bad namenode {hostport!r}")
    return host, int(port) if port else default_port


class HdfsContentStore(ContentStore):
    def __init__(self, location: HdfsLocation, *, clock=time.time, readers: int = 4,
                 sweep: bool = True, seal_wait: float = FORGET_SEAL_WAIT):
        self._loc = location
        self._seal_wait = seal_wait
        self._forgetting = asyncio.Lock()       # one forget at a time rewrites this store's files
        self._clock = clock
        # Writes and reads use separate clients (so separate HTTP sessions per thread).
        writer = HdfsWriter(self._client(), location.roll, clock)
        self._reader = self._client()
        self._thread = BatchThread("hdfs-write", lambda: writer, batch=HdfsWriter.batch,
                                   close_resource=HdfsWriter.seal)
        self._read_pool = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="hdfs-read")
        self._sweep = sweep
        self._ticker: asyncio.Task | None = None
        self._closed = False

    def _client(self) -> WebHdfsClient:
        return WebHdfsClient(self._loc.webhdfs_url, user=self._loc.user, root=self._loc.root,
                             timeout=self._loc.timeout, session=self._loc.session())

    @classmethod
    def from_url(cls, url: str, *, max_file_age: float = 0.0, **kwargs) -> "HdfsContentStore":
        """`max_file_age` (seconds, 0 = none): roll at least this often, whatever roll_seconds=
        says (retention.content's half, so no file outlives the retention by more)."""
        location = HdfsLocation.parse(url)
        if 0 < max_file_age < location.roll.roll_seconds:
            location = evolve(
                location, roll=RollPolicy(location.roll.roll_bytes, max_file_age))
        return cls(location, **kwargs)

    def __repr__(self) -> str:
        return f"HdfsContentStore({self._loc.webhdfs_url}{self._loc.root})"

    # -- writing ---------------------------------------------------------------------------

    async def append(self, item: FetchedContent) -> str:
        if self._ticker is None:
            self._ticker = asyncio.create_task(self._tick_forever())
        loop = asyncio.get_running_loop()
        data = await loop.run_in_executor(None, warc_record, item)   # igzip releases the GIL
        return await self._thread.call(HdfsWriter.stage, data)

    async def _tick_forever(self) -> None:
        """Sweep orphans once, then seal the current file when it comes of age."""
        if self._sweep:
            await asyncio.to_thread(sweep_orphans, self._client(), self._loc.roll.roll_seconds,
                                    self._clock())
        period = min(self._loc.roll.roll_seconds / TICKS_PER_ROLL, MAX_TICK)
        while True:
            await asyncio.sleep(period)
            try:
                await self._thread.call(HdfsWriter.tick)
            except StoreError:
                pass              # a write of the same batch failed: its callers were told

    # -- reading ---------------------------------------------------------------------------

    def _read(self, ref: ContentRef) -> bytes:
        """Sealed, else still in progress, else sealed in between: a rename never hides it."""
        for path in (ref.path, in_progress(ref.path)):
            try:
                return self._read_at(path, ref)
            except StoreError as error:
                if error.retryable:
                    raise
        return self._read_at(ref.path, ref)

    def _read_at(self, path: str, ref: ContentRef) -> bytes:
        try:
            # chunk_size: iter_content turns urllib3 errors mid-body into requests errors.
            with self._reader.read(path, offset=ref.offset, length=ref.length,
                                   chunk_size=1 << 16) as chunks:
                return b"".join(chunks)
        except FAILURES as exc:
            raise store_error(f"read {ref}", exc) from exc

    async def read(self, content_ref: str) -> tuple[dict[str, str], bytes]:
        ref = ContentRef.parse(content_ref)
        data = await asyncio.get_running_loop().run_in_executor(self._read_pool, self._read, ref)
        return decode_record(ref, data)

    async def read_following(self, content_ref: str, max_bytes: int,
                             max_records: int) -> list[tuple[dict[str, str], bytes]]:
        window = following(ContentRef.parse(content_ref), max_bytes)
        try:
            data = await asyncio.get_running_loop().run_in_executor(self._read_pool, self._read, window)
        except StoreError as exc:
            if exc.retryable:
                raise
            return []             # the ref's record ends its file (WebHDFS refuses an offset at the end)
        return split_records(data, max_records)

    # -- retention and forgetting (spiderduck.stores.hdfs_forget) ------------------------------

    async def expire(self, before: float) -> int:
        """Delete the sealed files whose last write (WebHDFS modificationTime) is before
        `before`; a file in progress is left to its writer, which seals it at its roll age."""
        try:
            gone = await asyncio.to_thread(hdfs_forget.expire, self._client(), self._loc.root, before)
        except FAILURES as exc:
            raise store_error("expire", exc) from exc
        return len(gone)

    async def roll(self) -> None:
        """Seal the file being written now (the next record starts a new one), so a forget can
        rewrite it."""
        await self._thread.call(HdfsWriter.seal)

    async def forget(self, urls: Collection[str], domain: str = "") -> int:
        async with self._forgetting:
            try:
                return await self._forget(Selection(urls, domain))
            except (*FAILURES, OSError, EOFError) as exc:    # retryable: repeating it finishes
                raise StoreError(f"hdfs content store forget: HDFS unreachable or failing ({exc}); "
                                 "repeat the forget") from exc

    async def _forget(self, selection: Selection) -> int:
        client = self._client()
        root, when = self._loc.root, self._clock()
        log = await asyncio.to_thread(hdfs_forget.files, client, root)
        found = await asyncio.to_thread(hdfs_forget.find, client, log, selection)
        if any(f.in_progress for f, _ in found):
            await self.roll()                   # ours, if one of them is: the others' writers
            await self._sealed([f for f, _ in found if f.in_progress], client)   # roll on request
            log = await asyncio.to_thread(hdfs_forget.files, client, root)
            found = await asyncio.to_thread(hdfs_forget.find, client, log, selection)
            if any(f.in_progress for f, _ in found):
                await self._sealed([f for f, _ in found if f.in_progress], client)
        for log_file, hits in reversed(found):  # the last first: see spiderduck.stores.warc_erase
            await asyncio.to_thread(hdfs_forget.rewrite, client, log_file, hits, when)
        return sum(len(hits) for _, hits in found)

    async def _sealed(self, pending: list, client) -> None:
        """Wait (FORGET_SEAL_WAIT) until the in-progress files `pending` are sealed; else raise
        StoreError naming those still written (nothing has been erased: repeat the forget)."""
        deadline = time.monotonic() + self._seal_wait
        while True:
            pending = [f for f in pending if not await asyncio.to_thread(
                client.status, f.path, strict=False)]
            if not pending:
                return
            if time.monotonic() >= deadline:
                raise StoreError("hdfs content store forget: still being written after "
                                 f"{self._seal_wait:g}s, not rewritten: "
                                 f"{', '.join(f.name for f in pending)} (their writers roll them on "
                                 "request or at their roll age; repeat the forget)")
            await asyncio.sleep(FORGET_SEAL_POLL)

    async def close(self) -> None:
        """Write and seal the current file, then let the threads go."""
        if self._closed:
            return
        self._closed = True
        if self._ticker is not None:
            self._ticker.cancel()
            await asyncio.gather(self._ticker, return_exceptions=True)
        await self._thread.stop()
        self._read_pool.shutdown(wait=False)
