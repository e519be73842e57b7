"""One conformance suite for every MetadataStore: SQLite and Cassandra.

The Cassandra cases run against the `cassandra_target` fixture (tests/conftest.py): the cluster
SPIDERDUCK_TEST_CASSANDRA names, as `host1,host2[:port]` optionally followed by store options
(`10.0.0.5:9042?dc=dc1&consistency=QUORUM`), or else a single node the tests start on loopback
(they skip, saying why, where java or mvn is missing). Each test gets a throwaway keyspace
(schema applied by `apply_schema`, dropped afterwards).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import uuid

import pytest

from spiderduck.core.record import UrlRecord
from spiderduck.core.status import Status
from spiderduck.stores.open import open_metadata_store
from support.cassandra_keyspace import cassandra_test_url, throwaway_keyspace
from support.metadata_backends import record, store  # noqa: F401 -- store is a fixture


@pytest.fixture
async def cassandra_url(cassandra_target):
    async with throwaway_keyspace(cassandra_target) as url:
        yield url


async def test_every_alias_resolves_to_the_record(store):
    rec = record()
    stored = await store.put(rec.final_url, rec, ["http://s.test/a", rec.final_url])
    got = await store.get_many(["http://s.test/a", "http://news.test/story", "http://nope.test/"])
    assert got[0] == got[1] == stored
    assert got[2] is None
    assert got[0].title == "Story" and got[0].image == rec.image
    assert got[0].structured_data == rec.structured_data


async def test_expiry_and_validators_are_kept(store):
    rec = record(expires_at=1600.5, etag='W/"v1"', last_modified=900.0)
    await store.put(rec.final_url, rec, ["http://s.test/a"])
    for got in await store.get_many(["http://s.test/a", rec.final_url]):
        assert (got.expires_at, got.etag, got.last_modified) == (1600.5, 'W/"v1"', 900.0)


async def test_first_seen_is_kept_and_fields_replaced_on_recrawl(store):
    await store.put("k", record(first_seen=50.0), ["a"])
    await store.put("k", record(title="New", first_seen=90.0, fetched_at=2000.0), ["b"])
    a, b = await store.get_many(["a", "b"])
    assert a.title == b.title == "New" and a.fetched_at == 2000.0
    assert a.first_seen == b.first_seen == 50.0


async def test_an_earlier_first_seen_replaces_a_later_one(store):
    await store.put("k", record(first_seen=90.0), ["a"])
    again = await store.put("k", record(first_seen=50.0), ["a"])
    assert again.first_seen == 50.0
    assert (await store.get("a")).first_seen == 50.0


async def test_first_seen_defaults_to_now(store):
    stored = await store.put("k", record(), ["a"])
    assert stored.first_seen > 1_600_000_000
    assert (await store.get("a")).first_seen == stored.first_seen


async def test_shares_count_every_sighting(store):
    await store.put("k", record(), ["a"])
    assert await store.add_share("k") == 1
    assert await store.add_share("k", 2) == 3
    assert (await store.get("a")).share_count == 3
    assert await store.add_share("unseen") == 1     # counted before its record exists


async def test_a_record_put_after_shares_reads_the_count_so_far(store):
    await store.add_share("k", 4)
    await store.put("k", record(), ["a"])
    assert (await store.get("a")).share_count == 4


async def test_concurrent_first_crawls_agree_on_the_earliest_first_seen(store):
    """Twenty schedulers' first crawls of one key, each through its own alias, written in any
    order: every alias reads the earliest first_seen. The earliest is written first, so a store
    where the last write wins (Cassandra with plain write timestamps) fails."""
    seen = [1_700_000_000.0 + 7 * i for i in range(20)]
    rest = seen[1:]
    random.Random(5).shuffle(rest)
    order = [seen[0], *rest]
    await asyncio.gather(*(store.put("k", record(first_seen=t, title=f"T{i}"), [f"alias{i}"])
                           for i, t in enumerate(order)))
    got = await store.get_many([*(f"alias{i}" for i in range(20)), "k"])
    assert {rec.first_seen for rec in got} == {seen[0]}
    assert len({rec.title for rec in got}) == 1         # one record, whichever put was last


async def test_a_large_record_with_long_urls_is_stored(store):
    """60 KB of record and 64 KB of alias URLs: more than Cassandra takes in one batch of several
    partitions (50 KiB), so its put splits them."""
    aliases = [f"http://s.test/{i}/" + "x" * 8_000 for i in range(8)]
    await store.put("k", record(description="d" * 60_000), aliases)
    got = await store.get_many([aliases[0], aliases[-1]])
    assert got[0] == got[1] and len(got[0].description) == 60_000


async def test_an_alias_moves_to_the_newer_chain(store):
    await store.put("k1", record(title="One"), ["shared"])
    await store.put("k2", dataclasses.replace(record(), title="Two"), ["shared"])
    assert (await store.get("shared")).title == "Two"
    assert (await store.get("k1")).title == "One"


async def test_a_failed_fetch_is_a_record_too(store):
    failed = record(status=Status.DNS_ERROR, title="", image=None, structured_data=None,
                    redirects=(), error="no such host")
    await store.put("http://gone.test/", failed, ["http://gone.test/"])
    got = await store.get("http://gone.test/")
    assert got.status is Status.DNS_ERROR and got.error == "no such host"


async def test_get_many_answers_300_urls_in_order(store):
    for i in range(3):
        await store.put(f"key{i}", record(title=f"T{i}"), [f"u{i}-{j}" for j in range(100)])
    urls = [f"u{i % 3}-{i // 3}" for i in range(300)]
    urls[7] = "http://never.test/"
    urls[8] = urls[9]                                   # repeats answer twice
    got = await store.get_many(urls)
    assert len(got) == 300
    assert got[7] is None
    assert got[8] == got[9]
    assert [g.title for i, g in enumerate(got) if i != 7] == \
        [f"T{int(u[1])}" for i, u in enumerate(urls) if i != 7]
    assert await store.get_many([]) == []


async def test_cassandra_schema_apply_is_idempotent(cassandra_url):
    from spiderduck.stores import cassandra_schema
    from spiderduck.stores.cassandra_cluster import apply_schema
    version, applied = await apply_schema(cassandra_url)
    assert version == cassandra_schema.LATEST and applied == []


async def test_cassandra_writes_at_local_quorum_on_a_keyspace_of_one_replica(cassandra_target):
    """Production's consistency on a development keyspace: LOCAL_QUORUM of one replica is that
    replica, so writes and reads succeed."""
    from spiderduck.stores.cassandra_cluster import CassandraOptions, connect
    target = cassandra_target.partition("?")[0]              # the store's defaults, not the target's
    async with throwaway_keyspace(target) as url:
        options = CassandraOptions.from_url(url)
        assert (options.consistency, options.serial_consistency) == ("LOCAL_QUORUM", "LOCAL_SERIAL")
        cluster, session = await connect(options)
        try:
            row = (await asyncio.to_thread(session.execute,
                   "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s",
                   (options.keyspace,))).one()
        finally:
            await asyncio.to_thread(cluster.shutdown)
        assert row["replication"]["replication_factor"] == "1", row
        s = await open_metadata_store(url)
        try:
            stored = await s.put("http://news.test/story", record(), ["http://s.test/a"])
            assert (await s.get("http://s.test/a")) == stored
            await s.put("http://news.test/story", record(fetched_at=2000.0), [])
            again = await s.get("http://s.test/a")
            assert again.fetched_at == 2000.0 and again.first_seen == stored.first_seen
        finally:
            await s.close()


async def test_cassandra_store_refuses_a_keyspace_without_schema(cassandra_target):
    from spiderduck.core.errors import ConfigError
    never_created = f"spiderduck_test_{uuid.uuid4().hex[:16]}"
    url = cassandra_test_url(cassandra_target, never_created)
    with pytest.raises(ConfigError, match="schema apply"):
        await open_metadata_store(url)


async def test_wire_answers_are_the_stored_records_with_their_share_counts(store):
    from spiderduck.v1 import metadata_pb2
    from spiderduck.wire import record_proto

    rec = record()
    await store.put(rec.final_url, rec, ["http://s.test/a"])
    for _ in range(300):
        await store.add_share(rec.final_url)
    records = await store.get_many(["http://s.test/a", "http://nope.test/"])
    wire = await store.get_many_wire(["http://s.test/a", "http://nope.test/"])
    assert wire[1] is None and records[1] is None
    msg = metadata_pb2.UrlMetadata()
    msg.ParseFromString(wire[0])
    assert msg.share_count == 300 == records[0].share_count
    assert record_proto.from_proto(msg) == records[0]


async def test_wire_answers_stop_reading_past_a_byte_budget(store):
    from spiderduck.stores.metadata import AnswerTooLarge

    urls = [f"http://big{i}.test/" for i in range(30)]
    for url in urls:
        await store.put(url, record(url=url, final_url=url, canonical_url=url, redirects=(),
                                    description="d" * 20_000), [])
    # Sizes differ by a byte or two (the varints of each record's timestamps), so measure them.
    sizes = [len(answer) for answer in await store.get_many_wire(urls)]
    three = sum(sizes[:3])
    assert len(await store.get_many_wire(urls[:3], max_bytes=three)) == 3       # fits exactly
    with pytest.raises(AnswerTooLarge) as err:
        await store.get_many_wire(urls, max_bytes=three)
    assert three < err.value.size <= three + max(sizes) + 64   # stopped at the record that passed it
    with pytest.raises(AnswerTooLarge):                 # one URL asked for four times is four answers
        await store.get_many_wire(urls[:1] * 4, max_bytes=3 * sizes[0])


async def test_fetch_mode_and_modified_time_are_kept(store):
    from spiderduck.v1 import metadata_pb2

    rec = record(fetch_mode="static", modified_time="2021-05-06T07:08:09Z")
    await store.put(rec.final_url, rec, ["http://s.test/a"])
    got = await store.get("http://s.test/a")
    assert (got.fetch_mode, got.modified_time) == ("static", "2021-05-06T07:08:09Z")
    msg = metadata_pb2.UrlMetadata.FromString((await store.get_many_wire(["http://s.test/a"]))[0])
    assert msg.fetch_mode == "static" and msg.modified_time.ToJsonString() == "2021-05-06T07:08:09Z"


# A record as the release before issue 31 stored it: modified_time as field 36 (since then
# fetch_mode's number), built from the wire format by hand.
OLD_MODIFIED = "2021-05-06T07:08:09.250Z"


def old_layout_bytes(rec: UrlRecord) -> bytes:
    from google.protobuf.timestamp_pb2 import Timestamp
    from spiderduck.wire import record_proto
    ts = Timestamp()
    ts.FromJsonString(OLD_MODIFIED)
    payload = ts.SerializeToString()
    return record_proto.to_bytes(rec) + b"\xa2\x02" + bytes([len(payload)]) + payload


@pytest.fixture(params=["sqlite", "cassandra"])
async def old_layout_store(request, tmp_path):
    """A store holding, under key "k" (alias "a"), a record in the previous layout: SQLite's
    written at schema version 2 and opened now; Cassandra's record_pb written by CQL."""
    import sqlite3
    rec = record(first_seen=50.0, title="Old")
    async with contextlib.AsyncExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path}/m.db"
            s = await open_metadata_store(url)
            await s.put("k", rec, ["a"])
            await s.close()
            with contextlib.closing(sqlite3.connect(tmp_path / "m.db")) as conn:
                conn.execute("UPDATE records SET record = ? WHERE key = 'k'", (old_layout_bytes(rec),))
                conn.execute("PRAGMA user_version = 2")
                conn.commit()
            s = await open_metadata_store(url)
            stack.push_async_callback(s.close)
        else:
            from spiderduck.stores.cassandra_cluster import CassandraOptions, connect
            url = await stack.enter_async_context(throwaway_keyspace(request.getfixturevalue("cassandra_target")))
            s = await open_metadata_store(url)
            stack.push_async_callback(s.close)
            await s.put("k", rec, ["a"])
            options = CassandraOptions.from_url(url)
            cluster, session = await connect(options)
            try:                                  # as the store writes it: first_seen apart
                await asyncio.to_thread(session.execute, f"UPDATE {options.keyspace}.records SET record_pb = %s "
                                        "WHERE key = 'k'", (old_layout_bytes(dataclasses.replace(rec, first_seen=0.0)),))
            finally:
                await asyncio.to_thread(cluster.shutdown)
        yield s


async def test_a_record_stored_with_modified_time_as_field_36_reads_in_the_current_layout(old_layout_store):
    from spiderduck.v1 import metadata_pb2

    store = old_layout_store
    await store.add_share("k", 3)
    got = await store.get("a")
    assert (got.modified_time, got.fetch_mode, got.title) == (OLD_MODIFIED, "", "Old")
    assert got.first_seen == 50.0 and got.share_count == 3 and got.image == record().image
    [wire] = await store.get_many_wire(["a"])
    msg = metadata_pb2.UrlMetadata.FromString(wire)       # the bytes GetUrlMetadata sends
    assert msg.modified_time.ToJsonString() == OLD_MODIFIED and msg.fetch_mode == ""
    assert msg.title == "Old" and msg.share_count == 3
    await store.put("k", dataclasses.replace(got, fetch_mode="static"), ["a"])    # the next crawl
    again = await store.get("a")
    assert (again.modified_time, again.fetch_mode) == (OLD_MODIFIED, "static")
