"""spiderduck_cassandra_requests_total{statement}: the requests the Cassandra metadata store
sends, counted in the store itself (a real node: the `cassandra_target` fixture of
tests/conftest.py), by the numbers bench/stores counts at the driver's session (put 1,
add_share 3, get_many of one URL 2, each alone) and docs/benchmarks.md reports, and what
callers asking in one turn of the loop share (spiderduck.stores.cassandra_batches)."""
from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest
from prometheus_client import REGISTRY

from spiderduck.core.errors import StoreError

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
    async with opened(cassandra_target) as store:
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


async def test_a_forget_counts_its_reads_and_deletes(cassandra_target):
    async with opened(cassandra_target) as store:
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


@contextlib.asynccontextmanager
async def opened(cassandra_target, options: str = ""):
    """A Cassandra store on a throwaway keyspace; `options`: the store URL's query (?batch=8)."""
    async with throwaway_keyspace(cassandra_target) as url:
        store = await open_metadata_store(url + options)
        try:
            yield store
        finally:
            await store.close()


async def put_stories(store, n: int, shared: bool = False) -> list[str]:
    """n records, each under its key with one t.co-like alias (and, `shared`, shared once, so
    reads find shares_seen and read no counter); the aliases."""
    aliases = [f"http://s.test/{i}" for i in range(n)]
    for i, alias in enumerate(aliases):
        await store.put(f"http://news.test/{i}", record(url=alias, title=f"Story {i}",
                                                        first_seen=50.0), [alias])
    if shared:
        await asyncio.gather(*(store.add_share(f"http://news.test/{i}") for i in range(n)))
    return aliases


async def test_concurrent_single_url_reads_share_their_requests(cassandra_target):
    # The API's single-URL calls and the decider's reads before each fetch: the URLs asked for
    # in one turn of the loop go as one IN a table, each caller still getting its own record.
    async with opened(cassandra_target) as store:
        aliases = await put_stories(store, 20)
        moved = Moved()
        asked = [*aliases, "http://unknown.test/", aliases[3]]
        got = await asyncio.gather(*(store.get_many([a]) for a in asked))
        assert [g[0].title if g[0] else None for g in got] == [
            *(f"Story {i}" for i in range(20)), None, "Story 3"]
        # Never shared: each row's counter is read too, coalesced as well.
        assert moved() == {"resolve": 1, "read_record": 1, "read_shares": 1}


@pytest.mark.parametrize("batch, requests", [(1, 20), (8, 3)])
async def test_the_batch_option_bounds_the_keys_of_a_request(cassandra_target, batch, requests):
    async with opened(cassandra_target, f"?batch={batch}") as store:
        aliases = await put_stories(store, 20, shared=True)
        moved = Moved()
        got = await asyncio.gather(*(store.get_many([a]) for a in aliases))
        assert [g[0].share_count for g in got] == [1] * 20
        assert moved() == {"resolve": requests, "read_record": requests}


async def test_concurrent_shares_are_counted_in_one_batch_each_caller_getting_a_total(
        cassandra_target, caplog):
    async with opened(cassandra_target) as store:
        await put_stories(store, 5)
        moved = Moved()
        keys = [KEY] * 10 + [f"http://news.test/{i}" for i in range(5)]
        totals = await asyncio.gather(*(store.add_share(k) for k in keys))
        assert totals == [10] * 10 + [1] * 5          # KEY's ten callers: the total after all
        assert moved() == {"add_shares": 1, "read_shares": 1, "write_shares_seen": 1}
        # 25 keys in a turn: batches of 10 partitions at most, which the node takes without
        # a warning (the driver logs every one it gets).
        with caplog.at_level(logging.WARNING, logger="cassandra"):
            many = [f"http://many.test/{i}" for i in range(25)]
            assert await asyncio.gather(*(store.add_share(k) for k in many)) == [1] * 25
        assert moved() == {"add_shares": 3, "read_shares": 1, "write_shares_seen": 3}
        assert not [r for r in caplog.records if "batch" in r.getMessage().lower()]
        assert await store.add_share(KEY, 2) == 12
        got = await asyncio.gather(*(store.get_many([f"http://s.test/{i}"]) for i in range(5)))
        assert [g[0].share_count for g in got] == [1] * 5
        assert moved()["read_shares"] == 1 and "read_shares" not in moved()


async def test_a_key_the_node_refuses_fails_its_own_caller_only(cassandra_target):
    # Cassandra refuses a partition key over 64 KiB, and with it the whole IN or batch it is
    # in (a counter batch counting the others first); the driver, a string it cannot encode.
    # Such keys are refused before they are sent, to their own callers.
    for huge in ("http://huge.test/" + "a" * 70_000, "http://huge.test/" + "\u00e9" * 40_000,
                 "http://bad.test/\ud800"):
        await refused_alone(cassandra_target, huge)


async def refused_alone(cassandra_target, huge: str):
    async with opened(cassandra_target) as store:
        aliases = await put_stories(store, 2)
        got = await asyncio.gather(store.get_many([aliases[0]]), store.get_many([huge]),
                                   store.get_many([aliases[1]]), return_exceptions=True)
        assert got[0][0].title == "Story 0" and got[2][0].title == "Story 1"
        assert isinstance(got[1], StoreError) and not got[1].retryable
        shares = await asyncio.gather(store.add_share("http://news.test/0"),
                                      store.add_share(huge), return_exceptions=True)
        assert shares[0] == 1 and isinstance(shares[1], StoreError)
        [again] = await store.get_many([aliases[0]])
        assert again.share_count == 1                 # the huge key never reached the batch


@pytest.mark.parametrize("flying", [0, 1])
async def test_callers_one_turn_apart_share_requests_while_one_is_in_flight(cassandra_target, flying):
    # The decider's reads: each task asks as it starts, one turn after the other. With
    # batch_flying they wait while a read is in flight and go as one when it ends.
    async with opened(cassandra_target, f"?batch_flying={flying}") as store:
        aliases = await put_stories(store, 20, shared=True)
        moved = Moved()
        calls = []
        for alias in aliases:
            calls.append(asyncio.ensure_future(store.get_many([alias])))
            await asyncio.sleep(0)                    # the next caller, a turn later
        got = await asyncio.gather(*calls)
        assert [g[0].title for g in got] == [f"Story {i}" for i in range(20)]
        requests = moved()["resolve"]
        assert requests == 20 if not flying else requests <= 3


async def test_large_records_resolution_rows_go_together_and_no_batch_draws_a_warning(
        cassandra_target, caplog):
    # A record over 4 KiB goes alone (its partition); the resolution rows of the puts of a turn
    # go together, at most 10 partitions a batch, and a chain of 12 URLs is split the same way.
    async with opened(cassandra_target) as store:
        moved = Moved()
        with caplog.at_level(logging.WARNING, logger="cassandra"):
            await asyncio.gather(*(
                store.put(f"http://big.test/{i}", record(url=f"http://s.test/big{i}",
                                                         description="d" * 6_000),
                          [f"http://s.test/big{i}"]) for i in range(12)))
            chain = [f"http://hop.test/{i}" for i in range(11)]
            await store.put("http://small.test/", record(title="Small"), chain)
        assert not [r for r in caplog.records if "batch" in r.getMessage().lower()]
        counts = moved()
        # 12 records alone, 24 rows in 3 batches; then the chain's record and 12 rows in 2.
        assert counts == {"put": 13, "write_resolution": 5}, counts
        got = await asyncio.gather(*(store.get_many([f"http://s.test/big{i}"]) for i in range(12)))
        assert all(g[0] is not None and len(g[0].description) == 6_000 for g in got)
        assert (await store.get_many([chain[-1]]))[0].title == "Small"


async def test_opening_a_store_logs_no_warning(cassandra_target, caplog):
    # The driver warns of every protocol version the node declines while it negotiates (four
    # lines at each start against Cassandra 5): an operator would read them as trouble.
    with caplog.at_level(logging.WARNING):
        async with throwaway_keyspace(cassandra_target) as url:
            store = await open_metadata_store(url)
            await store.close()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
