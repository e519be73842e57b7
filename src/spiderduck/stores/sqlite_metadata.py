"""SQLite metadata store: the embedded default (`sqlite:///PATH`).

Records are kept as protobuf bytes (spiderduck.wire.record_proto.to_bytes), so reading one parses no
JSON, and GetUrlMetadata sends the stored bytes as they are (`get_many_wire`).

Writes: one writer thread owns the write connection and commits the writes queued meanwhile as
one transaction, each write in its own savepoint, answering the event loop with one wake-up per
batch (spiderduck.stores.batch_thread).

Reads run on the caller's event loop, on a connection of their own: in WAL mode a reader never
waits behind the writer, and a lookup (tens of microseconds) costs less than a hop to a thread
and back under the GIL. bench/api measured single-URL calls at 0.79-0.91 of a bare gRPC server
this way, against 0.57-0.60 through a pool of reader threads. The loop's connection does not
wait for locks (busy_timeout 0); in the rare case SQLite reports busy (WAL recovery), the read
goes to a reader thread that may wait.

Forgetting (`forget`, a takedown) is in spiderduck.stores.sqlite_forget: deletes through the writer
in bounded transactions, `secure_delete` on the writer (deleted and replaced bytes are zeroed,
the retention sweep's and a recrawl's too) and a truncating checkpoint after each forget.

Schema versions (PRAGMA user_version): 0 or 1, records as protobuf JSON text (SpiderDuck 0.1);
2, records as protobuf bytes; 3, records whose `modified_time` is UrlMetadata's field 38 (it was
36, now `fetch_mode`'s: src/spiderduck/wire/record_migrations.py). Opening an older database converts it once:
JSON text in one transaction, then the rows holding a field 36 tag rewritten in transactions of
_MIGRATE_ROWS (found by SQL, `instr` on the blob, so the other rows never reach Python); the
version is recorded last, so a conversion cut short runs again, skipping rows already rewritten.
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from typing import Iterable, Sequence

from spiderduck.wire import record_migrations

from spiderduck.core.errors import StoreError
from spiderduck.core.record import UrlRecord
from spiderduck.stores.batch_thread import BatchThread
from spiderduck.stores.forget_scope import asked, domain_form
from spiderduck.stores.metadata import Budget, Forgotten, MetadataStore
from spiderduck.stores.sqlite_forget import Forgetting
from spiderduck.wire import record_proto
from spiderduck.core.frozen import evolve

SCHEMA_VERSION = 3
_CHUNK = 500                   # URLs per SELECT ... IN (...)
_MIGRATE_ROWS = 1000           # rows rewritten per transaction by the version-3 conversion
_EXPIRE_ROWS = 500             # records deleted per transaction by expire (puts wait no longer)
# Page cache of the event loop's read connection, in KiB (SQLite's default is 2 MiB): records
# that miss it are read from the file again, a system call per page. bench/api's 600 records
# (3.5 MB) missed it on every call, ~15 us of each single-URL GetUrlMetadata. Filled only as
# pages are read.
_LOOP_READ_CACHE_KIB = 32 * 1024

SCHEMA = """
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;   -- WAL + NORMAL: survives a process crash; no fsync per commit
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY,
    record BLOB NOT NULL,          -- spiderduck.v1.UrlMetadata bytes, share_count left out
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
-- The retention sweep's: records by age, and the resolution rows of a record.
CREATE INDEX IF NOT EXISTS records_fetched_at ON records(fetched_at);
CREATE INDEX IF NOT EXISTS resolutions_key ON resolutions(key);
"""

_LOOKUP = ("SELECT res.url, r.record, COALESCE(s.count, 0) FROM resolutions res "
           "JOIN records r ON r.key = res.key LEFT JOIN shares s ON s.key = res.key "
           "WHERE res.url IN ({})")
# The statement for each number of URLs, written once: sqlite3 finds its prepared statement by
# the text, which a string made on every call must be hashed for again.
_LOOKUPS = [_LOOKUP.format(",".join("?" * n)) for n in range(_CHUNK + 1)]


def _connect(path: str, *, wait: bool = True) -> sqlite3.Connection:
    """A connection; with wait=False, one that reports a lock at once instead of waiting."""
    conn = sqlite3.connect(path, check_same_thread=False, timeout=30 if wait else 0,
                           isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout={30000 if wait else 0}")
    return conn


def _upgrade(conn: sqlite3.Connection) -> None:
    """Bring an existing database to SCHEMA_VERSION (idempotent)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version >= SCHEMA_VERSION:
        return
    if version < 2:
        with _transaction(conn):
            rows = conn.execute("SELECT key, record FROM records WHERE typeof(record) = 'text'").fetchall()
            for key, text in rows:
                conn.execute("UPDATE records SET record = ? WHERE key = ?",
                             (record_proto.to_bytes(record_proto.from_json(text)), key))
            conn.execute("PRAGMA user_version = 2")
    _move_modified_time(conn)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


_OLD_LAYOUT = ("SELECT rowid, record FROM records WHERE rowid > ? AND typeof(record) = 'blob' "
               f"AND instr(record, X'{record_migrations.TAG_WAS.hex()}') > 0 ORDER BY rowid LIMIT ?")


def _move_modified_time(conn: sqlite3.Connection) -> int:
    """Version 3: each record whose field 36 holds a Timestamp rewritten (modified_time as field
    38), _MIGRATE_ROWS rows a transaction; returns how many were. Rows that merely hold the tag's
    two bytes (in a title, say) are read and left as they are."""
    rewritten, after = 0, 0
    while True:
        with _transaction(conn):
            rows = conn.execute(_OLD_LAYOUT, (after, _MIGRATE_ROWS)).fetchall()
            for rowid, data in rows:
                moved = record_migrations.moved_modified_time(data)
                if moved is not data:
                    conn.execute("UPDATE records SET record = ? WHERE rowid = ?", (moved, rowid))
                    rewritten += 1
        if len(rows) < _MIGRATE_ROWS:
            return rewritten
        after = rows[-1][0]


def _lookup(conn: sqlite3.Connection, urls: list[str], max_bytes: int = 0) -> dict[str, tuple[bytes, int]]:
    """Each URL's stored record and share count; with max_bytes, AnswerTooLarge as soon as the
    rows read pass it (the rest are never read)."""
    found: dict[str, tuple[bytes, int]] = {}
    budget = Budget(max_bytes)
    for i in range(0, len(urls), _CHUNK):
        chunk = urls[i:i + _CHUNK]
        for url, data, shares in conn.execute(_LOOKUPS[len(chunk)], chunk):
            found[url] = (budget.take(data), shares)
    return found


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection):
    # IMMEDIATE: take the write lock first (waiting up to busy_timeout for another writer);
    # a deferred BEGIN that reads and then writes gets "database is locked" at once instead.
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        # Also when COMMIT itself failed (disk full, I/O error): left open, the transaction
        # would make every later batch fail with "cannot start a transaction within a transaction".
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def _savepoint(conn: sqlite3.Connection):
    conn.execute("SAVEPOINT one")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK TO one")
        conn.execute("RELEASE one")
        raise
    conn.execute("RELEASE one")


class SqliteMetadataStore(MetadataStore):
    def __init__(self, path: str, *, clock=time.time):
        self._path = path
        self._clock = clock
        self._writer: BatchThread | None = None
        self._reader: BatchThread | None = None           # for reads that find the database busy
        self._loop_reads: sqlite3.Connection | None = None

    @classmethod
    async def open(cls, path: str) -> "SqliteMetadataStore":
        store = cls(path)
        await store._start()
        return store

    async def _start(self) -> None:
        if self._path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(self._path)), exist_ok=True)

        def open_writer() -> sqlite3.Connection:
            conn = _connect(self._path)
            # Deleted rows, and the bytes a recrawl's record replaced, overwritten with zeros
            # (and freed pages zeroed): what a forget or the retention sweep removes is not left
            # readable in the file (spiderduck.stores.sqlite_forget).
            conn.execute("PRAGMA secure_delete=ON")
            conn.executescript(SCHEMA)
            _upgrade(conn)
            return conn

        self._writer = BatchThread("sqlite-writer", open_writer, batch=_transaction, each=_savepoint,
                                   close_resource=sqlite3.Connection.close)
        await self._guard(self._writer.started())
        if self._path == ":memory:":                 # another connection would be another database
            self._reader = self._writer
            return
        self._reader = BatchThread("sqlite-reader", lambda: _connect(self._path),
                                   close_resource=sqlite3.Connection.close)
        await self._guard(self._reader.started())
        self._loop_reads = await self._guard(self._reader.call(lambda _: self._loop_connection()))

    def _loop_connection(self) -> sqlite3.Connection:
        conn = _connect(self._path, wait=False)
        conn.execute(f"PRAGMA cache_size=-{_LOOP_READ_CACHE_KIB}")
        return conn

    async def _guard(self, awaitable):
        try:
            return await awaitable
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite {self._path}: {exc}") from exc

    async def _lookup(self, urls: Sequence[str], max_bytes: int = 0) -> dict[str, tuple[bytes, int]]:
        urls = list(urls)
        if self._loop_reads is not None:
            try:
                return _lookup(self._loop_reads, urls, max_bytes)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise StoreError(f"sqlite {self._path}: {exc}") from exc
            except sqlite3.Error as exc:
                raise StoreError(f"sqlite {self._path}: {exc}") from exc
        return await self._guard(self._reader.call(_lookup, urls, max_bytes))

    async def put(self, key: str, record: UrlRecord, aliases: Iterable[str]) -> UrlRecord:
        first_seen = record.first_seen or self._clock()
        record = evolve(record, first_seen=first_seen)
        # Encoded here, on the caller's thread, so the writer thread holds the GIL less.
        data = record_proto.to_bytes(record)
        urls = tuple({key, *aliases} - {""})
        first_seen, shares = await self._guard(self._writer.call(self._put, key, record, data, urls))
        return evolve(record, first_seen=first_seen, share_count=shares)

    @staticmethod
    def _put(conn: sqlite3.Connection, key: str, record: UrlRecord, data: bytes,
             urls: tuple[str, ...]) -> tuple[float, int]:
        row = conn.execute("SELECT first_seen FROM records WHERE key=?", (key,)).fetchone()
        first_seen = record.first_seen
        if row is not None and row[0] < first_seen:           # seen before: keep the earliest
            first_seen = row[0]
            data = record_proto.to_bytes(evolve(record, first_seen=first_seen))
        shares = conn.execute("SELECT count FROM shares WHERE key=?", (key,)).fetchone()
        conn.execute(
            "INSERT INTO records(key, record, first_seen, fetched_at) VALUES (?,?,?,?) "
            "ON CONFLICT(key) DO UPDATE SET record=excluded.record, "
            "first_seen=excluded.first_seen, fetched_at=excluded.fetched_at",
            (key, data, first_seen, record.fetched_at))
        conn.executemany(
            "INSERT INTO resolutions(url, key) VALUES (?, ?) "
            "ON CONFLICT(url) DO UPDATE SET key=excluded.key", [(url, key) for url in urls])
        return first_seen, shares[0] if shares else 0

    async def get_many(self, urls: Sequence[str]) -> list[UrlRecord | None]:
        return await self._answers(urls, record_proto.from_bytes)

    async def get_many_wire(self, urls: Sequence[str], max_bytes: int = 0) -> list[bytes | None]:
        return await self._answers(urls, record_proto.with_share_count, max_bytes)

    async def _answers(self, urls: Sequence[str], make, max_bytes: int = 0) -> list:
        """make(stored bytes, share count) for each URL that resolves, None for the others."""
        found = await self._lookup(urls, max_bytes)
        # A URL asked for twice is answered twice: count it so, before copying (with each URL
        # asked once, the lookup counted every answer already).
        if max_bytes and len(urls) > 1 and len(set(urls)) < len(urls):
            budget = Budget(max_bytes)
            for url in urls:
                if (hit := found.get(url)) is not None:
                    budget.take(hit[0])
        return [None if (hit := found.get(url)) is None else make(*hit) for url in urls]

    async def add_share(self, key: str, count: int = 1) -> int:
        return await self._guard(self._writer.call(self._add_share, key, count))

    @staticmethod
    def _add_share(conn: sqlite3.Connection, key: str, count: int) -> int:
        conn.execute(
            "INSERT INTO shares(key, count) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET count = count + excluded.count", (key, count))
        return conn.execute("SELECT count FROM shares WHERE key=?", (key,)).fetchone()[0]

    async def expire(self, before: float) -> int:
        removed = 0
        while True:       # in transactions of _EXPIRE_ROWS, so puts queued meanwhile go between
            n = await self._guard(self._writer.call(self._expire, before, _EXPIRE_ROWS))
            removed += n
            if n < _EXPIRE_ROWS:
                return removed

    @staticmethod
    def _expire(conn: sqlite3.Connection, before: float, limit: int) -> int:
        keys = [key for (key,) in conn.execute(
            "SELECT key FROM records WHERE fetched_at < ? LIMIT ?", (before, limit))]
        if keys:
            marks = ",".join("?" * len(keys))
            for table in ("resolutions", "shares", "records"):
                conn.execute(f"DELETE FROM {table} WHERE key IN ({marks})", keys)
        return len(keys)

    async def forget(self, urls: Sequence[str], domain: str = "") -> Forgotten:
        """MetadataStore.forget; what goes and how: spiderduck.stores.sqlite_forget."""
        forgetting = Forgetting(lambda fn, *args: self._guard(self._writer.call(fn, *args)),
                                lambda fn, *args: self._guard(self._reader.call(fn, *args)),
                                files=self._path != ":memory:", where=self._path)
        await forgetting.urls(asked(urls))
        if domain := domain_form(domain):
            await forgetting.domain(domain)
        await forgetting.checkpoint()
        return Forgotten(forgetting.records, frozenset(forgetting.reached))

    async def close(self) -> None:
        if self._loop_reads is not None:
            self._loop_reads.close()
            self._loop_reads = None
        threads = {t for t in (self._reader, self._writer) if t is not None}
        self._reader = self._writer = None
        for thread in threads:
            await thread.stop()
