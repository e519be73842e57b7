"""What only the SQLite store does: records as bytes, old databases converted, reads beside writes."""
from __future__ import annotations

import asyncio
import sqlite3

import pytest

from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.stores.sqlite_metadata import SCHEMA_VERSION, SqliteMetadataStore
from spiderduck.wire import record_proto

# The schema of SpiderDuck 0.1: records as protobuf JSON text, user_version never set.
V1_SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE records (key TEXT PRIMARY KEY, record TEXT NOT NULL, first_seen REAL NOT NULL,
                      fetched_at REAL NOT NULL);
CREATE TABLE resolutions (url TEXT PRIMARY KEY, key TEXT NOT NULL);
CREATE TABLE shares (key TEXT PRIMARY KEY, count INTEGER NOT NULL);
"""


def story(**kw) -> UrlRecord:
    values = dict(url="http://s.test/a", status=Status.OK, final_url="http://news.test/story",
                  title="Story", fetched_at=1000.0, first_seen=900.0,
                  structured_data={"json-ld": [{"@type": "NewsArticle", "name": "Story"}]})
    values.update(kw)
    return UrlRecord(**values)


async def test_a_database_of_json_records_is_converted_on_open(tmp_path):
    path = str(tmp_path / "old.db")
    old = sqlite3.connect(path)
    old.executescript(V1_SCHEMA)
    rec = story()
    old.execute("INSERT INTO records VALUES (?,?,?,?)",
                ("http://news.test/story", record_proto.to_json(rec), 900.0, 1000.0))
    old.executemany("INSERT INTO resolutions VALUES (?,?)",
                    [("http://s.test/a", "http://news.test/story"),
                     ("http://news.test/story", "http://news.test/story")])
    old.execute("INSERT INTO shares VALUES (?, 7)", ("http://news.test/story",))
    old.commit()
    old.close()

    store = await SqliteMetadataStore.open(path)
    try:
        got = await store.get("http://s.test/a")
    finally:
        await store.close()
    assert got.title == "Story" and got.share_count == 7
    assert got.structured_data == rec.structured_data and got.first_seen == 900.0
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert check.execute("SELECT typeof(record) FROM records").fetchall() == [("blob",)]


async def test_records_are_stored_as_protobuf_bytes(tmp_path):
    store = await SqliteMetadataStore.open(str(tmp_path / "m.db"))
    try:
        await store.put("http://news.test/story", story(), ["http://s.test/a"])
    finally:
        await store.close()
    [(data,)] = sqlite3.connect(str(tmp_path / "m.db")).execute("SELECT record FROM records").fetchall()
    assert isinstance(data, bytes) and record_proto.from_bytes(data).title == "Story"


async def test_reads_answer_while_a_write_waits_for_the_lock(tmp_path):
    path = str(tmp_path / "m.db")
    store = await SqliteMetadataStore.open(path)
    try:
        await store.put("http://news.test/story", story(), ["http://s.test/a"])
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")           # another process holds the write lock
        waiting = asyncio.create_task(store.put("http://news.test/2", story(title="Two"), []))
        # The store's own write now waits for the lock; reads go on meanwhile.
        for _ in range(20):
            got = await asyncio.wait_for(store.get("http://s.test/a"), 5)
            assert got.title == "Story"
        assert not waiting.done()
        other.execute("ROLLBACK")
        stored = await asyncio.wait_for(waiting, 30)
        assert stored.title == "Two"
    finally:
        await store.close()


async def test_a_failed_write_in_a_batch_undoes_only_itself(tmp_path):
    store = await SqliteMetadataStore.open(str(tmp_path / "m.db"))
    try:
        def explode(conn):
            conn.execute("INSERT INTO shares(key, count) VALUES ('half-done', 1)")
            raise RuntimeError("boom")
        results = await asyncio.gather(
            store.add_share("a"), store._writer.call(explode), store.add_share("b"),
            return_exceptions=True)
        assert results[0] == 1 and results[2] == 1 and isinstance(results[1], RuntimeError)
        rows = sqlite3.connect(str(tmp_path / "m.db")).execute("SELECT key FROM shares").fetchall()
        assert sorted(rows) == [("a",), ("b",)]
    finally:
        await store.close()


class Refusing:
    """A connection answering every statement with `error` (SQLite's busy answer cannot be
    forced on a WAL reader from outside: every open connection holds a shared lock)."""

    def __init__(self, error: str):
        self.error = error

    def execute(self, *args):
        raise sqlite3.OperationalError(self.error)

    def close(self):
        pass


async def test_a_read_that_finds_the_database_busy_is_done_by_the_reader_thread(tmp_path):
    from spiderduck.core.errors import StoreError

    store = await SqliteMetadataStore.open(str(tmp_path / "m.db"))
    try:
        await store.put("http://news.test/story", story(), ["http://s.test/a"])
        store._loop_reads = Refusing("database is locked")
        assert (await store.get("http://s.test/a")).title == "Story"
        assert (await store.get_many_wire(["http://s.test/a"]))[0] is not None
        store._loop_reads = Refusing("disk I/O error")        # anything else is the store's error
        with pytest.raises(StoreError, match="disk I/O error"):
            await store.get("http://s.test/a")
    finally:
        await store.close()


def test_a_failed_commit_leaves_no_transaction_open():
    from spiderduck.stores.sqlite_metadata import _transaction

    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript("PRAGMA foreign_keys=ON; CREATE TABLE parent(id INTEGER PRIMARY KEY);"
                       "CREATE TABLE child(p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);")
    with pytest.raises(sqlite3.IntegrityError):
        with _transaction(conn):
            conn.execute("INSERT INTO child VALUES (42)")    # fails only at COMMIT
    assert not conn.in_transaction
    with _transaction(conn):                                 # the next batch goes on
        conn.execute("INSERT INTO parent VALUES (1)")
    assert conn.execute("SELECT count(*) FROM parent").fetchone() == (1,)


async def test_records_with_modified_time_as_field_36_are_rewritten_once_in_batches(tmp_path, monkeypatch):
    """Version 3: field 36 was modified_time (a Timestamp) before issue 31 gave it to fetch_mode;
    the rows that hold one are rewritten at open, a few rows a transaction, the others untouched."""
    from google.protobuf.timestamp_pb2 import Timestamp
    from spiderduck.stores import sqlite_metadata

    ts = Timestamp(seconds=1_620_284_889)
    old_field = b"\xa2\x02" + bytes([ts.ByteSize()]) + ts.SerializeToString()
    path = str(tmp_path / "m.db")
    store = await SqliteMetadataStore.open(path)
    try:
        for i in range(12):
            await store.put(f"http://n.test/{i}", story(title=f"T{i} \xa2\x02", fetch_mode="static"), [])
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    current = dict(conn.execute("SELECT key, record FROM records").fetchall())
    old = {key: story_bytes + old_field for key, story_bytes in current.items() if int(key.rsplit("/")[-1]) % 2}
    conn.executemany("UPDATE records SET record = ? WHERE key = ?", [(v, k) for k, v in old.items()])
    conn.execute("PRAGMA user_version = 2")
    conn.commit()

    monkeypatch.setattr(sqlite_metadata, "_MIGRATE_ROWS", 4)
    store = await SqliteMetadataStore.open(path)
    try:
        got = await store.get_many([f"http://n.test/{i}" for i in range(12)])
    finally:
        await store.close()
    assert [r.modified_time for r in got] == ["" if i % 2 == 0 else "2021-05-06T07:08:09Z" for i in range(12)]
    assert {r.fetch_mode for r in got} == {"static"}
    after = dict(conn.execute("SELECT key, record FROM records").fetchall())
    for key, data in after.items():
        assert data == (current[key] + b"\xb2\x02" + old_field[2:] if key in old else current[key])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    assert sqlite_metadata._move_modified_time(conn) == 0            # idempotent: nothing left
