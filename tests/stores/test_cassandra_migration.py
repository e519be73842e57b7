"""Upgrading a Cassandra keyspace: schema version 1 (records as JSON text) to 2 (protobuf bytes)
to 3 (first_seen and the share count as plain writes, no lightweight transaction).

Against a real node (the `cassandra_target` fixture, tests/conftest.py): a keyspace is made at
version 1 and filled the way version 1's store wrote it, then at version 2 the way version 2's
did, then upgraded with `schema apply` while a store reads its old rows and writes new ones;
and applies that race.
"""
from __future__ import annotations

import asyncio
import dataclasses
import threading
import uuid

import pytest

from spiderduck.core.errors import ConfigError
from spiderduck.core.record import Video
from spiderduck.core.status import Status
from spiderduck.stores import cassandra_schema
from spiderduck.stores.cassandra_cluster import CassandraOptions, apply_schema, connect
from spiderduck.stores.open import open_metadata_store
from spiderduck.v1 import metadata_pb2
from spiderduck.wire import record_proto
from test_metadata_store import cassandra_test_url, record

ALL = [number for number, _ in cassandra_schema.MIGRATIONS]     # every version, in order


@pytest.fixture
async def bare_keyspace(cassandra_target):
    """(store URL, keyspace, session) of a keyspace no apply has touched, dropped afterwards."""
    url = cassandra_test_url(cassandra_target, f"spiderduck_test_{uuid.uuid4().hex[:16]}")
    options = CassandraOptions.from_url(url)
    cluster, session = await connect(options)
    try:
        yield url, options.keyspace, session
    finally:
        await asyncio.to_thread(session.execute, f"DROP KEYSPACE IF EXISTS {options.keyspace}")
        await asyncio.to_thread(cluster.shutdown)


async def cql(session, statement: str, params=()) -> list[dict]:
    return list(await asyncio.to_thread(session.execute, statement, params))


async def columns(session, keyspace: str, table: str) -> set[str]:
    rows = await cql(session, "SELECT column_name FROM system_schema.columns "
                              "WHERE keyspace_name = %s AND table_name = %s", (keyspace, table))
    return {row["column_name"] for row in rows}


async def version_two_put(session, ks: str, key: str, rec, aliases, shares: int):
    """A record as version 2's store left it: UrlMetadata bytes in `record_pb` (first_seen and
    share_count left out), first_seen in its own cell (set by a lightweight transaction), the
    share count in the counter only."""
    data = record_proto.to_bytes(dataclasses.replace(rec, first_seen=0.0))
    await cql(session, f"INSERT INTO {ks}.records (key, record_pb, first_seen, fetched_at) "
                       "VALUES (%s, %s, %s, %s)",
              (key, data, round(rec.first_seen * 1000), round(rec.fetched_at * 1000)))
    for url in {key, *aliases}:
        await cql(session, f"INSERT INTO {ks}.resolutions (url, key) VALUES (%s, %s)", (url, key))
    await cql(session, f'UPDATE {ks}.shares SET "count" = "count" + %s WHERE key = %s',
              (shares, key))


async def version_one_put(session, ks: str, key: str, rec, aliases, shares: int):
    """A record as version 1's store left it: JSON text in `record` (share_count and first_seen
    as they were at the put), resolution rows, crawl status, then more shares counted."""
    millis = round(rec.first_seen * 1000)
    await cql(session, f"INSERT INTO {ks}.records (key, record, first_seen, fetched_at) "
                       "VALUES (%s, %s, %s, %s)",
              (key, record_proto.to_json(rec), millis, round(rec.fetched_at * 1000)))
    for url in {key, *aliases}:
        await cql(session, f"INSERT INTO {ks}.resolutions (url, key) VALUES (%s, %s)", (url, key))
    await cql(session, f"INSERT INTO {ks}.crawl_status (key, status, fetched_at) "
                       "VALUES (%s, %s, %s)", (key, rec.status.name, round(rec.fetched_at * 1000)))
    await cql(session, f'UPDATE {ks}.shares SET "count" = "count" + %s WHERE key = %s',
              (shares, key))


def parsed(wire: bytes):
    msg = metadata_pb2.UrlMetadata()
    msg.ParseFromString(wire)
    return record_proto.from_proto(msg)


async def test_a_version_one_keyspace_is_upgraded_and_its_rows_read_as_before(bare_keyspace):
    url, ks, session = bare_keyspace
    assert await asyncio.to_thread(cassandra_schema.apply, session, ks, upto=1) == (1, [1])
    assert "record_pb" not in await columns(session, ks, "records")

    story = record(first_seen=1_700_000_000.123, share_count=2, published_time="2024-05-01T10:00:00Z",
                   video=Video("http://news.test/v.mp4", 640, 360, "video/mp4"))
    failed = record(url="http://gone.test/", final_url="", canonical_url="", status=Status.DNS_ERROR,
                    title="", image=None, structured_data=None, redirects=(), content_length=0,
                    error="no such host", first_seen=1_600_000_000.5)
    await version_one_put(session, ks, story.final_url, story, ["http://s.test/a"], shares=7)
    await version_one_put(session, ks, failed.url, failed, [], shares=0)
    expected = {"http://s.test/a": dataclasses.replace(story, share_count=7),
                story.final_url: dataclasses.replace(story, share_count=7),
                failed.url: failed}

    with pytest.raises(ConfigError, match=r"schema version 1, .* `spiderduck schema apply`"):
        await open_metadata_store(url)
    assert await asyncio.to_thread(cassandra_schema.apply, session, ks, upto=2) == (2, [2])
    assert "record_pb" in await columns(session, ks, "records")
    older = record(url="http://v2.test/", final_url="http://v2.test/", canonical_url="",
                   redirects=(), title="Version 2", first_seen=1_650_000_000.25)
    await version_two_put(session, ks, older.final_url, older, ["http://s.test/v2"], shares=5)
    expected["http://s.test/v2"] = dataclasses.replace(older, share_count=5)

    with pytest.raises(ConfigError, match=r"schema version 2, .* `spiderduck schema apply`"):
        await open_metadata_store(url)
    assert await apply_schema(url) == (cassandra_schema.LATEST, ALL[2:])
    assert {"earliest", "shares_seen"} <= await columns(session, ks, "records")

    store = await open_metadata_store(url)
    try:
        urls = [*expected, "http://nope.test/"]
        got = await store.get_many(urls)
        assert got == [*expected.values(), None]          # the counter, without shares_seen
        assert got[0].title == "Story" and got[0].first_seen == 1_700_000_000.123
        assert got[0].structured_data == {"json-ld": [{"@type": "NewsArticle"}]}
        assert await store.get(failed.url) == failed
        wire = await store.get_many_wire(urls)
        assert [parsed(w) for w in wire[:4]] == got[:4] and wire[4] is None

        new = record(url="http://new.test/", final_url="http://new.test/", title="New")
        stored = await store.put("http://new.test/", new, [])
        row = (await cql(session, f"SELECT record, record_pb FROM {ks}.records WHERE key = %s",
                         ("http://new.test/",)))[0]
        assert row["record"] is None
        assert record_proto.from_bytes(row["record_pb"]) == dataclasses.replace(
            stored, first_seen=0.0, share_count=0)            # both have columns of their own
        await store.add_share("http://new.test/", 3)
        [new_wire] = await store.get_many_wire(["http://new.test/"])
        assert new_wire.startswith(row["record_pb"])           # sent as stored, not re-encoded
        assert parsed(new_wire) == await store.get("http://new.test/") == dataclasses.replace(
            stored, share_count=3)

        # Re-crawls of the old rows: the earliest first_seen and the count are kept.
        for old, alias, shares in ((story, "http://s.test/a", 7), (older, "http://s.test/v2", 5)):
            await store.put(old.final_url, dataclasses.replace(
                old, title="Recrawled", first_seen=1_800_000_000.0, fetched_at=3000.0), [])
            row = (await cql(session, f"SELECT record, record_pb FROM {ks}.records WHERE key = %s",
                             (old.final_url,)))[0]
            assert row["record"] is None and row["record_pb"]
            again = await store.get(alias)
            assert (again.title, again.first_seen, again.share_count) == (
                "Recrawled", old.first_seen, shares)
            assert parsed((await store.get_many_wire([alias]))[0]) == again
        assert await store.add_share(older.final_url) == 6
        assert (await store.get("http://s.test/v2")).share_count == 6
    finally:
        await store.close()
    assert await apply_schema(url) == (cassandra_schema.LATEST, [])


async def test_a_record_a_version_one_process_rewrites_after_an_upgrade_reads_newest(bare_keyspace):
    """During a rolling upgrade a version-1 process still writes JSON: the newer cell wins. A
    version-2 process's lightweight transaction sets the legacy first_seen: the earlier wins."""
    url, ks, session = bare_keyspace
    await apply_schema(url)
    store = await open_metadata_store(url)
    try:
        await store.put("k", record(title="From version 2"), ["a"])
        old_process = dataclasses.replace(record(title="From version 1"), first_seen=50.0)
        await cql(session, f"UPDATE {ks}.records SET record = %s WHERE key = %s",
                  (record_proto.to_json(old_process), "k"))
        assert (await store.get("a")).title == "From version 1"
        assert parsed((await store.get_many_wire(["a"]))[0]).title == "From version 1"
        await store.put("k", record(title="Version 2 again"), [])
        assert (await store.get("a")).title == "Version 2 again"

        await store.put("k2", record(first_seen=1_800_000_000.0), ["b"])
        await cql(session, f"UPDATE {ks}.records SET first_seen = %s WHERE key = %s "
                           "IF first_seen = null", (1_750_000_000_000, "k2"))
        assert (await store.get("b")).first_seen == 1_750_000_000.0
        await store.put("k2", record(first_seen=1_700_000_000.0), [])
        assert (await store.get("b")).first_seen == 1_700_000_000.0
    finally:
        await store.close()


class PausedAfterVersionRead:
    """A session whose first read of the schema version calls `pause()` before answering, so a
    test decides what runs while an apply holds the version it read."""

    def __init__(self, session, pause):
        self._session = session
        self._pause = pause
        self._paused = False

    def execute(self, statement, *args):
        result = self._session.execute(statement, *args)
        if not self._paused and statement.startswith("SELECT version"):
            self._paused = True
            self._pause()
        return result


async def test_two_applies_racing_on_a_fresh_keyspace_both_succeed(bare_keyspace):
    url, ks, session = bare_keyspace
    both_read = threading.Barrier(2, timeout=60)     # each saw version 0 before either migrates
    first, second = await asyncio.gather(*(
        asyncio.to_thread(cassandra_schema.apply, PausedAfterVersionRead(session, both_read.wait), ks)
        for _ in range(2)))
    assert first[0] == second[0] == cassandra_schema.LATEST
    assert sorted(first[1] + second[1]) == ALL     # each version recorded by one of them
    assert "record_pb" in await columns(session, ks, "records")
    store = await open_metadata_store(url)
    try:
        stored = await store.put("k", record(), ["a"])
        assert await store.get("a") == stored
    finally:
        await store.close()


async def test_an_apply_that_read_an_older_version_never_lowers_it(bare_keyspace):
    """An older build's apply (up to version 1) that read version 0, then waited while this
    build's apply reached the latest, leaves the keyspace at the latest."""
    url, ks, session = bare_keyspace
    read, resume = threading.Event(), threading.Event()

    def hold() -> None:
        read.set()
        assert resume.wait(60)

    older = asyncio.create_task(asyncio.to_thread(
        cassandra_schema.apply, PausedAfterVersionRead(session, hold), ks, upto=1))
    assert await asyncio.to_thread(read.wait, 60)
    assert await apply_schema(url) == (cassandra_schema.LATEST, ALL)
    resume.set()
    assert await older == (cassandra_schema.LATEST, [])
    assert cassandra_schema.current_version(session, ks) == cassandra_schema.LATEST
    await (await open_metadata_store(url)).close()
