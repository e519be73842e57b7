"""spiderduck_cassandra_requests_total{statement}: the requests the Cassandra metadata store
sends, counted in the store itself (a real node: the `cassandra_target` fixture of
tests/conftest.py), by the numbers bench/stores counts at the driver's session (put 1,
add_share 3, get_many of one URL 2) and docs/benchmarks.md reports."""
from __future__ import annotations

from prometheus_client import REGISTRY

from spiderduck.stores.open import open_metadata_store
from support.cassandra_keyspace import throwaway_keyspace
from support.metadata_backends import record

KEY, ALIAS = "http://news.test/story", "http://s.test/a"


def sent() -> dict[str, float]:
    """The counter's series now, by statement (series at 0 left out)."""
    return {sample.labels["statement"]: sample.value
            for metric in REGISTRY.collect() if metric.name == "spiderduck_cassandra_requests"
            for sample in metric.samples if sample.name.endswith("_total") and sample.value}


class Moved:
    """What the counter moved by since the last call."""

    def __init__(self):
        self.last = sent()

    def __call__(self) -> dict[str, float]:
        now = sent()
        moved = {name: now[name] - self.last.get(name, 0) for name in now
                 if now[name] != self.last.get(name, 0)}
        self.last = now
        return moved


async def test_a_put_and_a_read_of_one_url_count_their_requests(cassandra_target):
    async with throwaway_keyspace(cassandra_target) as url:
        store = await open_metadata_store(url)
        try:
            moved = Moved()
            await store.put(KEY, record(first_seen=50.0), [ALIAS])
            assert moved() == {"put": 1}                  # one unlogged batch
            # A record never shared has no shares_seen: the read also reads its counter.
            [got] = await store.get_many([ALIAS])
            assert got.title == "Story"
            assert moved() == {"resolve": 1, "read_record": 1, "read_shares": 1}
            assert await store.add_share(KEY) == 1
            assert moved() == {"add_shares": 1, "read_shares": 1, "write_shares_seen": 1}
            for asked in (ALIAS, KEY):                    # a t.co-like alias, and the key itself
                [got] = await store.get_many([asked])
                assert got.share_count == 1
                assert moved() == {"resolve": 1, "read_record": 1}, asked
            assert await store.get_many(["http://unknown.test/"]) == [None]
            assert moved() == {"resolve": 1}              # no resolution row: nothing more read
        finally:
            await store.close()


async def test_a_forget_counts_its_reads_and_deletes(cassandra_target):
    async with throwaway_keyspace(cassandra_target) as url:
        store = await open_metadata_store(url)
        try:
            await store.put(KEY, record(first_seen=50.0), [ALIAS])
            moved = Moved()
            forgotten = await store.forget([KEY], "")
            assert forgotten.records == 1
            counts = moved()
            # The key and the URLs its record names (the alias): each read, then deleted.
            assert counts["forget_read"] == counts["forget_aliases"] == counts["delete_record"] >= 2
            assert counts["delete_resolution"] == 2 and "put" not in counts
            moved()
            await store.forget([], "news.test")
            assert moved()["scan"] >= 2                   # a page at least of each table
        finally:
            await store.close()
