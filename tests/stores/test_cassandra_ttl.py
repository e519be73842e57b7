"""retention.metadata on Cassandra: a TTL on every row a put writes, renewed by each put, so a
record not crawled again within it goes with its aliases (a real node: the `cassandra_target`
fixture of tests/conftest.py)."""
from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from spiderduck.core.errors import ConfigError
from spiderduck.stores.cassandra_cluster import CassandraOptions, connect
from spiderduck.stores.open import open_metadata_store
from support.cassandra_keyspace import throwaway_keyspace
from support.metadata_backends import record
from support.service import wait_until

KEY, ALIAS = "http://news.test/story", "http://s.test/a"


@contextlib.asynccontextmanager
async def cql(url: str):
    """A plain session on the store's keyspace, to read what the store wrote as it is."""
    options = CassandraOptions.from_url(url)
    cluster, session = await connect(options)
    try:
        yield lambda query, *args: asyncio.to_thread(
            lambda: list(session.execute(query.format(ks=options.keyspace), args)))
    finally:
        await asyncio.to_thread(cluster.shutdown)


async def test_a_record_not_crawled_again_within_the_retention_expires_with_its_aliases(cassandra_target):
    async with throwaway_keyspace(cassandra_target) as url, cql(url) as query:
        store = await open_metadata_store(url, retention=3)
        try:
            async def ttls() -> dict:
                [row] = await query("SELECT TTL(record_pb) AS pb, TTL(earliest) AS earliest "
                                    "FROM {ks}.records WHERE key = %s", KEY)
                [res] = await query("SELECT TTL(key) AS res FROM {ks}.resolutions WHERE url = %s", ALIAS)
                return {**row, **res}

            await store.put(KEY, record(first_seen=50.0), [ALIAS])
            await store.add_share(KEY)
            assert set((await ttls()).values()) <= {2, 3}
            # Once the rows have aged, the next crawl (the same first_seen, as the scheduler's
            # renewals carry it) renews every one of them.
            await wait_until(lambda: _aged(ttls), timeout=10, what="the TTLs to tick down")
            await store.put(KEY, record(first_seen=50.0, title="Again"), [ALIAS])
            assert set((await ttls()).values()) <= {2, 3}
            again = await store.get(ALIAS)
            assert (again.title, again.first_seen, again.share_count) == ("Again", 50.0, 1)
            assert await store.expire(time.time()) == 0          # nothing to sweep: the TTL does it

            async def gone() -> bool:
                return await store.get_many([KEY, ALIAS]) == [None, None]
            await wait_until(gone, timeout=15, what="the record to expire")
            for table in ("records", "resolutions", "aliases"):
                assert await query(f"SELECT * FROM {{ks}}.{table}") == [], table
        finally:
            await store.close()


async def _aged(ttls) -> bool:
    return max((await ttls()).values()) <= 1


async def test_the_retention_sweep_leaves_cassandra_to_its_ttl_quietly(cassandra_target, caplog):
    """No sweep to run and no warning: the sweeper counts nothing removed and goes on (the TTL
    deletes), where it once said at WARNING that Cassandra kept every record."""
    import logging

    from spiderduck.core.settings_retention import RetentionSettings
    from spiderduck.stores.retention import RetentionSweeper
    caplog.set_level(logging.DEBUG, "spiderduck.retention")
    async with throwaway_keyspace(cassandra_target) as url:
        store = await open_metadata_store(url, retention=60)
        try:
            sweeper = RetentionSweeper(RetentionSettings(metadata=60), store, None)
            assert await sweeper.sweep() == {"metadata": 0} and sweeper.active
            said = [r for r in caplog.records if r.name == "spiderduck.retention"]
            assert [r.getMessage() for r in said if r.levelno >= logging.WARNING] == []
        finally:
            await store.close()


async def test_a_retention_longer_than_cassandra_keeps_a_row_is_refused():
    with pytest.raises(ConfigError, match="retention.metadata"):
        await open_metadata_store("cassandra://127.0.0.1:1/ks", retention=30 * 365 * 86400.0)
