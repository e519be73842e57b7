"""Content store on the local disk (`file://PATH`): rolling .warc.gz files.

content_ref is `NAME@OFFSET+LENGTH`: the file under the store's folder, the
byte offset of the record's gzip member, and its compressed length. Naming, roll
decisions and refs are shared with the HDFS store (spiderduck.stores.warc_rolling).
"""
from __future__ import annotations

import asyncio
import contextlib
import fcntl
import io
import os
import time
from typing import Collection

from spiderduck.core.errors import StoreError
from spiderduck.stores.batch_thread import BatchThread
from spiderduck.stores.content import ContentStore, FetchedContent, warc_record
from spiderduck.stores.warc_erase import Member, Selection, members, plan
from spiderduck.stores.warc_filler import filler
from spiderduck.stores.warc_rolling import (DEFAULT_ROLL_SECONDS, ContentRef, RollPolicy, decode_record, file_name,
                                        following, is_log_file, split_records)


class WarcFileStore(ContentStore):
    local = True

    def __init__(self, folder: str, *, roll_bytes: int = 1 << 30,
                 roll_seconds: float = DEFAULT_ROLL_SECONDS,
                 clock=time.time):
        self._folder = folder
        self._policy = RollPolicy(roll_bytes, roll_seconds)
        self._clock = clock
        # One thread appends (records land whole and in order); calls queued meanwhile run as a
        # batch, answered with one wake-up of the event loop.
        self._thread = BatchThread("warc", lambda: self)
        self._closed = False
        self._fh = None
        self._name = ""
        self._opened_at = 0.0
        self._serial = 0

    async def _run(self, fn, *args):
        try:
            return await self._thread.call(fn, *args)
        except OSError as exc:
            raise StoreError(f"content store {self._folder}: {exc}") from exc

    def _current(self):
        now = self._clock()
        if self._fh is not None and self._policy.should_roll(self._fh.tell(), self._opened_at, now):
            self._fh.close()
            self._fh = None
        if self._fh is None:
            os.makedirs(self._folder, exist_ok=True)
            self._serial += 1
            self._name = file_name(now, self._serial)
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
        # One hop to the writer thread, which compresses (igzip releases the GIL) and appends.
        return await self._run(WarcFileStore._compress_and_append, item)

    def _compress_and_append(self, item: FetchedContent) -> str:
        return self._append(warc_record(item))

    def _read(self, ref: ContentRef) -> bytes:
        try:
            with open(os.path.join(self._folder, ref.path), "rb") as fh:
                fh.seek(ref.offset)
                return fh.read(ref.length)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
            raise StoreError(f"content_ref {ref}: no such file in {self._folder}",
                             retryable=False) from exc

    async def read(self, content_ref: str) -> tuple[dict[str, str], bytes]:
        ref = ContentRef.parse(content_ref)
        return decode_record(ref, await self._run(WarcFileStore._read, ref))

    async def read_following(self, content_ref: str, max_bytes: int,
                             max_records: int) -> list[tuple[dict[str, str], bytes]]:
        window = following(ContentRef.parse(content_ref), max_bytes)
        return split_records(await self._run(WarcFileStore._read, window), max_records)

    async def expire(self, before: float) -> int:
        # On the writer thread, so the file being written is closed before it goes (a file's
        # last write is its newest record: its mtime).
        return await self._run(WarcFileStore._expire, before)

    def _expire(self, before: float) -> int:
        try:
            names = [name for name in os.listdir(self._folder) if is_log_file(name)]
        except FileNotFoundError:
            return 0
        removed = 0
        for name in names:
            path = os.path.join(self._folder, name)
            try:
                if os.stat(path).st_mtime >= before:
                    continue
                if name == self._name:
                    self._close_file()
                os.remove(path)
            except FileNotFoundError:       # another scheduler's sweep took it first
                continue
            removed += 1
        return removed

    async def forget(self, urls: Collection[str], domain: str = "") -> int:
        # Off the writer thread (a scan of every file takes a while; appends go on meanwhile).
        try:
            return await asyncio.to_thread(forget_in_folder, self._folder, Selection(urls, domain),
                                           self._clock())
        except OSError as exc:
            raise StoreError(f"content store {self._folder}: forget: {exc}") from exc

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._run(WarcFileStore._close_file)
        await self._thread.stop()

    def _close_file(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


# -- forgetting: erasure in place ------------------------------------------------------------

def forget_in_folder(folder: str, selection: Selection, when: float) -> int:
    """Erase the records `selection` takes from every log file of `folder`, each overwritten in
    place by a filler of its length (spiderduck.stores.warc_erase); how many went."""
    try:
        names = sorted(name for name in os.listdir(folder) if is_log_file(name))
    except FileNotFoundError:
        return 0
    found = plan(((name, _opener(os.path.join(folder, name))) for name in names), selection)
    return sum(erase_in_place(os.path.join(folder, name), hits, when)
               for name, hits in reversed(found))


def _opener(path: str):
    @contextlib.contextmanager
    def open_file():
        try:
            fh = open(path, "rb")
        except FileNotFoundError:           # expired since the listing: nothing to erase there
            yield io.BytesIO()
            return
        with fh:
            yield fh
    return open_file


def erase_in_place(path: str, hits: list[Member], when: float) -> int:
    """Overwrite each member of `hits` with a filler of the same length (pwrite, then fsync),
    the last first; a member that is no longer the record found (another forget erased it
    meanwhile) is left. The file's writer may append meanwhile: every byte written here lies
    before the end it had when scanned, and only whole members were found. An exclusive flock
    keeps two forgets from writing one member at once (writers take none)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return 0
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        erased = 0
        for member in sorted(hits, key=lambda m: m.offset, reverse=True):
            if _unchanged(fd, member):
                pos = member.offset
                for piece in filler(member.length, when):
                    pos += _pwrite_all(fd, piece, pos)
                erased += 1
        os.fsync(fd)
        return erased
    finally:
        os.close(fd)


def _pwrite_all(fd: int, data: bytes, pos: int) -> int:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, pos)
        view, pos = view[n:], pos + n
    return len(data)


class _Window(io.RawIOBase):
    """`length` bytes of a file from `offset`, read with pread."""

    def __init__(self, fd: int, offset: int, length: int):
        self._fd, self._pos, self._end = fd, offset, offset + length

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = self._end - self._pos if n < 0 else min(n, self._end - self._pos)
        data = os.pread(self._fd, n, self._pos) if n > 0 else b""
        self._pos += len(data)
        return data


def _unchanged(fd: int, member: Member) -> bool:
    again = next(members(_Window(fd, member.offset, member.length)), None)
    return again is not None and again.length == member.length and again.headers == member.headers
