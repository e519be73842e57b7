"""Content store on the local disk (`file://PATH`): rolling .warc.gz files.

content_ref is `NAME@OFFSET+LENGTH`: the file under the store's folder, the
byte offset of the record's gzip member, and its compressed length.
"""
from __future__ import annotations

import asyncio
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor

from common.errors import StoreError
from common.stores.content import ContentStore, FetchedContent, read_warc_record, warc_record

_REF = re.compile(r"^([\w.\-]+)@(\d+)\+(\d+)$")


class WarcFileStore(ContentStore):
    def __init__(self, folder: str, *, roll_bytes: int = 1 << 30, roll_seconds: float = 3600.0,
                 clock=time.time):
        self._folder = folder
        self._roll_bytes = roll_bytes
        self._roll_seconds = roll_seconds
        self._clock = clock
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warc")
        self._fh = None
        self._name = ""
        self._opened_at = 0.0
        self._serial = 0

    async def _run(self, fn, *args):
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
        except OSError as exc:
            raise StoreError(f"content store {self._folder}: {exc}") from exc

    def _current(self):
        now = self._clock()
        if self._fh is not None and (self._fh.tell() >= self._roll_bytes
                                     or now - self._opened_at >= self._roll_seconds):
            self._fh.close()
            self._fh = None
        if self._fh is None:
            os.makedirs(self._folder, exist_ok=True)
            self._serial += 1
            stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(now))
            self._name = f"spiderduck-{stamp}-{os.getpid()}-{self._serial:05d}.warc.gz"
            self._fh = open(os.path.join(self._folder, self._name), "ab")
            self._opened_at = now
        return self._fh

    def _append(self, data: bytes) -> str:
        fh = self._current()
        offset = fh.tell()
        fh.write(data)
        fh.flush()
        return f"{self._name}@{offset}+{len(data)}"

    async def append(self, item: FetchedContent) -> str:
        # Compressing runs on the loop's default executor (zlib releases the GIL); the
        # single writer thread only appends, so records land whole and in order.
        try:
            data = await asyncio.get_running_loop().run_in_executor(None, warc_record, item)
        except OSError as exc:
            raise StoreError(f"content store {self._folder}: {exc}") from exc
        return await self._run(self._append, data)

    def _read(self, ref: str) -> bytes:
        m = _REF.match(ref)
        if not m:
            raise StoreError(f"not a content_ref of this store: {ref!r}", retryable=False)
        with open(os.path.join(self._folder, m.group(1)), "rb") as fh:
            fh.seek(int(m.group(2)))
            return fh.read(int(m.group(3)))

    async def read(self, content_ref: str) -> tuple[dict[str, str], bytes]:
        return read_warc_record(await self._run(self._read, content_ref))

    async def close(self) -> None:
        if self._fh is not None:
            await self._run(self._fh.close)
            self._fh = None
        self._pool.shutdown(wait=False)
