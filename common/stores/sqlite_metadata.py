"""SQLite metadata store: the embedded default (`sqlite:///PATH`)."""
from __future__ import annotations

import asyncio
import dataclasses
import os
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Sequence

from common import record_proto
from common.errors import StoreError
from common.record import UrlRecord
from common.stores.metadata import MetadataStore

SCHEMA = """
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;   -- WAL + NORMAL: survives a process crash; no fsync per commit
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY,
    record TEXT NOT NULL,          -- the record in protobuf's JSON mapping
    first_seen REAL NOT NULL,
    fetched_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS resolutions (
    url TEXT PRIMARY KEY,          -- any URL seen in a chain
    key TEXT NOT NULL              -- the record it resolves to
);
CREATE TABLE IF NOT EXISTS shares (
    key TEXT PRIMARY KEY,
    count INTEGER NOT NULL
);
"""


class SqliteMetadataStore(MetadataStore):
    """One connection used from one worker thread, so calls never block the loop."""

    def __init__(self, path: str, *, clock=time.time):
        self._path = path
        self._clock = clock
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        self._conn: sqlite3.Connection | None = None

    @classmethod
    async def open(cls, path: str) -> "SqliteMetadataStore":
        store = cls(path)
        await store._run(store._connect)
        return store

    def _connect(self) -> None:
        if self._path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(self._path)), exist_ok=True)
        self._conn = sqlite3.connect(self._path, check_same_thread=False, timeout=30)
        self._conn.executescript(SCHEMA)

    async def _run(self, fn, *args):
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, fn, *args)
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite {self._path}: {exc}") from exc

    async def put(self, key: str, record: UrlRecord, aliases: Iterable[str]) -> UrlRecord:
        return await self._run(self._put, key, record, tuple(aliases))

    def _put(self, key: str, record: UrlRecord, aliases: tuple[str, ...]) -> UrlRecord:
        conn = self._conn
        with conn:
            row = conn.execute("SELECT first_seen FROM records WHERE key=?", (key,)).fetchone()
            first_seen = min(row[0], record.first_seen or self._clock()) if row else (
                record.first_seen or self._clock())
            shares = conn.execute("SELECT count FROM shares WHERE key=?", (key,)).fetchone()
            stored = dataclasses.replace(record, first_seen=first_seen,
                                         share_count=shares[0] if shares else 0)
            conn.execute(
                "INSERT INTO records(key, record, first_seen, fetched_at) VALUES (?,?,?,?) "
                "ON CONFLICT(key) DO UPDATE SET record=excluded.record, "
                "first_seen=excluded.first_seen, fetched_at=excluded.fetched_at",
                (key, record_proto.to_json(stored), first_seen, stored.fetched_at))
            conn.executemany(
                "INSERT INTO resolutions(url, key) VALUES (?, ?) "
                "ON CONFLICT(url) DO UPDATE SET key=excluded.key",
                [(url, key) for url in {key, *aliases} if url])
        return stored

    async def get_many(self, urls: Sequence[str]) -> list[UrlRecord | None]:
        return await self._run(self._get_many, list(urls))

    def _get_many(self, urls: list[str]) -> list[UrlRecord | None]:
        out: list[UrlRecord | None] = []
        for url in urls:
            row = self._conn.execute(
                "SELECT r.record, COALESCE(s.count, 0) FROM resolutions res "
                "JOIN records r ON r.key = res.key LEFT JOIN shares s ON s.key = res.key "
                "WHERE res.url = ?", (url,)).fetchone()
            if row is None:
                out.append(None)
                continue
            rec = record_proto.from_json(row[0])
            out.append(dataclasses.replace(rec, share_count=row[1]))
        return out

    async def add_share(self, key: str, count: int = 1) -> int:
        return await self._run(self._add_share, key, count)

    def _add_share(self, key: str, count: int) -> int:
        with self._conn:
            self._conn.execute(
                "INSERT INTO shares(key, count) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET count = count + excluded.count", (key, count))
            return self._conn.execute("SELECT count FROM shares WHERE key=?", (key,)).fetchone()[0]

    async def close(self) -> None:
        if self._conn is not None:
            await self._run(self._conn.close)
            self._conn = None
        self._pool.shutdown(wait=False)
