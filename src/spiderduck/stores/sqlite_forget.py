"""Forgetting in the SQLite metadata store (SqliteMetadataStore.forget, MetadataStore.forget's
contract): what goes, how it goes without holding puts back, and how none of it stays readable.

What goes, for each URL asked for (its lookup_key form): the keys it names (the URL itself and
the key its resolution row points at); of each key, its record, its share count and every
resolution row pointing at it (the URLs that redirected to it, its hops); of each URL its record
names (record.url, the redirect hops, the final URL: forget_scope.chain_urls), that URL's own
record, share count and resolution rows, and the rows pointing at it. Not further: a hop that
now resolves to another page (a later chain passed through it) loses its own row, but that other
page stays. With a domain, every URL of it found in the resolution rows or as a record's key
counts as asked.

How: in the writer thread (spiderduck.stores.batch_thread), _FORGET_URLS asked URLs per call, each
call one savepoint of the writer's transaction, so puts queued meanwhile run between them. A
domain is found by scanning both tables in rowid order, _SCAN_ROWS matches a read, on the reader
connection (a WAL reader waits for no writer), the domain's name sifted by SQL (`instr`) and
checked by its registrable domain in Python.

Nothing stays readable: the writer connection has `secure_delete` on (sqlite_metadata), so a
deleted row, and the old bytes of a record a recrawl replaced, are overwritten with zeros in the
page, and a page freed is zeroed. The write-ahead log still holds the pages as they were before,
until a checkpoint copies the new ones into the database file; `checkpoint` then runs a truncating
one (the log cut to zero bytes). A reader in the middle of a read makes it report busy: it is
tried _CHECKPOINT_TRIES times, each waiting at most _CHECKPOINT_WAIT_MS for readers (puts wait
no longer than that), _CHECKPOINT_PAUSE apart; past that, StoreError says to repeat the forget
(the rows are gone already; the repeat checkpoints again).
"""
from __future__ import annotations

import asyncio
import sqlite3
from typing import Awaitable, Callable, Iterable

from spiderduck.core.errors import StoreError
from spiderduck.stores.forget_scope import chain_urls, in_domain
from spiderduck.wire import record_proto

_FORGET_URLS = 100          # URLs asked for, forgotten per writer call (puts go between calls)
_SCAN_ROWS = 1000           # rows of a domain read per query
_KEYS_PER_STATEMENT = 500   # keys per `IN (...)` (SQLite's default limit of variables is 32766)
_CHECKPOINT_TRIES = 20      # truncating checkpoints tried after a forget before it must be repeated
_CHECKPOINT_WAIT_MS = 200   # each waiting this long at most for readers (and holding puts so long)
_CHECKPOINT_PAUSE = 0.05    # seconds between tries, for the readers to finish
_READER_WAIT_MS = 30000     # the reader connection's busy_timeout (sqlite_metadata), restored after

# Rows of a table whose text column holds a string, in rowid order from a rowid on.
_SCAN = {"resolutions": "SELECT rowid, url FROM resolutions WHERE rowid > ? AND instr(url, ?) > 0 "
                        "ORDER BY rowid LIMIT ?",
         "records": "SELECT rowid, key FROM records WHERE rowid > ? AND instr(key, ?) > 0 "
                    "ORDER BY rowid LIMIT ?"}


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def forget_urls(conn: sqlite3.Connection, urls: list[str]) -> tuple[int, set[str]]:
    """On the writer's connection, in its transaction: delete what `urls` (lookup_key forms) reach
    (the module doc); returns (records deleted, every URL reached)."""
    keys = set(urls)
    for url in urls:
        row = conn.execute("SELECT key FROM resolutions WHERE url = ?", (url,)).fetchone()
        if row is not None:
            keys.add(row[0])
    doomed = set(keys)
    for key in keys:
        row = conn.execute("SELECT record FROM records WHERE key = ?", (key,)).fetchone()
        if row is not None:
            doomed |= chain_urls(record_proto.from_bytes(row[0]))
    reached = set(doomed)
    records = 0
    for chunk in _chunks(sorted(doomed), _KEYS_PER_STATEMENT):
        marks = ",".join("?" * len(chunk))
        reached.update(url for (url,) in conn.execute(
            f"SELECT url FROM resolutions WHERE key IN ({marks})", chunk))
        conn.execute(f"DELETE FROM resolutions WHERE key IN ({marks}) OR url IN ({marks})",
                     chunk + chunk)
        conn.execute(f"DELETE FROM shares WHERE key IN ({marks})", chunk)
        records += conn.execute(f"DELETE FROM records WHERE key IN ({marks})", chunk).rowcount
    return records, reached


def scan_domain(conn: sqlite3.Connection, table: str, domain: str, after: int) -> tuple[list[str], int]:
    """One read of a domain's scan: the URLs of `table` (resolutions, records) of `domain` among
    the next _SCAN_ROWS rows after rowid `after` that name it, and the rowid to go on from (0:
    the end)."""
    rows = conn.execute(_SCAN[table], (after, domain, _SCAN_ROWS)).fetchall()
    found = [url for _, url in rows if in_domain(url, domain)]
    return found, rows[-1][0] if len(rows) == _SCAN_ROWS else 0


def checkpoint(conn: sqlite3.Connection) -> bool:
    """A truncating checkpoint, waiting at most _CHECKPOINT_WAIT_MS for readers; whether it
    completed (the log is then empty)."""
    conn.execute(f"PRAGMA busy_timeout={_CHECKPOINT_WAIT_MS}")
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout={_READER_WAIT_MS}")
    return not busy


class Forgetting:
    """One forget over a store's writer (`write(fn, *args)`: fn on the writer's connection, in its
    transaction) and a connection for reads and the checkpoint (`read(fn, *args)`, outside any
    transaction); `files` False for an in-memory database (no log to empty)."""

    def __init__(self, write: Callable[..., Awaitable], read: Callable[..., Awaitable], *,
                 files: bool, where: str):
        self._write = write
        self._read = read
        self._files = files
        self._where = where
        self.records = 0
        self.reached: set[str] = set()

    async def urls(self, urls: list[str]) -> None:
        for chunk in _chunks(urls, _FORGET_URLS):
            records, reached = await self._write(forget_urls, chunk)
            self.records += records
            self.reached |= reached

    async def domain(self, domain: str) -> None:
        """Every URL of `domain` in either table forgotten as asked for, a read's worth at a time."""
        for table in _SCAN:
            after = 0
            while True:
                found, after = await self._read(scan_domain, table, domain, after)
                await self.urls([url for url in found if url not in self.reached])
                if not after:
                    break

    async def checkpoint(self) -> None:
        """Empty the write-ahead log of the pages as they were (module doc); StoreError when
        readers kept it busy through every try."""
        if not self._files:
            return
        for _ in range(_CHECKPOINT_TRIES):
            if await self._read(checkpoint):
                return
            await asyncio.sleep(_CHECKPOINT_PAUSE)
        raise StoreError(f"sqlite {self._where}: the records are deleted, but readers kept the "
                         f"write-ahead log busy through {_CHECKPOINT_TRIES} checkpoints, so their "
                         "old bytes may still be in it: the forget must be repeated")
