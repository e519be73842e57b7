"""A throwaway keyspace on the Cassandra the tests use (the `cassandra_target` fixture of
tests/conftest.py): the schema applied, dropped afterwards."""
from __future__ import annotations

import asyncio
import contextlib
import uuid


def cassandra_test_url(target: str, keyspace: str) -> str:
    """cassandra://HOSTS/KEYSPACE[?OPTIONS] from a `host1,host2[:port][?options]` target."""
    hosts, sep, query = target.removeprefix("cassandra://").partition("?")
    return f"cassandra://{hosts.rstrip('/')}/{keyspace}" + (f"?{query}" if sep else "")


@contextlib.asynccontextmanager
async def throwaway_keyspace(target: str):
    """A fresh keyspace with the schema applied, dropped afterwards; yields its store URL."""
    from spiderduck.stores.cassandra_cluster import CassandraOptions, apply_schema, connect
    url = cassandra_test_url(target, f"spiderduck_test_{uuid.uuid4().hex[:16]}")
    await apply_schema(url)
    try:
        yield url
    finally:
        options = CassandraOptions.from_url(url)
        cluster, session = await connect(options)
        try:
            await asyncio.to_thread(session.execute,
                                    f"DROP KEYSPACE IF EXISTS {options.keyspace}")
        finally:
            await asyncio.to_thread(cluster.shutdown)
