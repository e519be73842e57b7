"""The Cassandra store's reads and share counts, coalesced across callers (stores.coalesce).

Every key the store reads (a URL's resolution, a key's record row, a key's share counter) and
every share it counts is queued, and the keys asked for in one turn of the event loop go as one
request: a single-partition statement for one key, `WHERE k IN ?` for several, at most
`batch` keys a request (the store URL's option; 1: every key its own request, as before). Keys
also wait while `batch_flying` requests of their kind are in flight (2; 0: never), and go
together when one ends. So under load the decider's reads before each fetch, the API's
single-URL calls and the sightings' shares cost a request per turn or per round trip, not per
URL, on the client and on the nodes alike.

A key the node would refuse (over 64 KiB, or not UTF-8) is refused here, to its own callers,
before it can fail the request it would share with others' keys.

Routing: a single key's request is token-aware (it goes to a replica of the key). Several keys
are grouped by the first replica of each (the driver's token map), and each group's request is
routed by its first key, so its coordinator holds every key of the group (with replication 1,
all the data it reads; otherwise the quorum's other replicas are asked as for a single read).

Resolution rows: a put whose record goes alone (over 4 KiB) leaves its URLs' resolution rows to
a coalescer here, which writes those of a turn's puts in unlogged batches; of two puts naming
one URL, the later's row is written.

Shares: the increments of a turn go as counter batches (never retried: an increment is not
idempotent, so a batch's failure reaches each of its keys' callers as a retryable StoreError, as
a single one did, and no other key's),
then the totals are read in one request and written to each record row's `shares_seen` in one
unlogged batch, each cell `USING TIMESTAMP total + 1` (spiderduck.stores.cassandra_metadata's
module doc). Two shares of one key in a turn are one increment of two; both callers get the
total after both. A batch of several partitions holds at most BATCH_PARTITIONS of them and
stays under ONE_BATCH_BYTES, split otherwise: Cassandra warns of an unlogged or counter batch
over 10 partitions (unlogged_batch_across_partitions_warn_threshold) or over 5 KiB, and the
driver logs each such warning.
"""
from __future__ import annotations

import asyncio
import functools
import operator
from typing import TYPE_CHECKING

from spiderduck.core.errors import StoreError
from spiderduck.stores.coalesce import Coalescer

if TYPE_CHECKING:
    from spiderduck.stores.cassandra_metadata import CassandraMetadataStore

# A batch of several partitions stays under ONE_BATCH_BYTES by the bytes of its values: every
# node logs one over 5 KiB (batch_size_warn_threshold) and refuses one over 50 KiB
# (batch_size_fail_threshold). ROW_BYTES: a row's own overhead in that count (its timestamps and
# lengths), generously. A put (cassandra_metadata) sizes its one batch by the same two.
ONE_BATCH_BYTES = 4 * 1024
ROW_BYTES = 64
_LONGEST_KEY = 65_535       # bytes of a partition key (Cassandra's limit)
BATCH_PARTITIONS = 10      # Cassandra's unlogged_batch_across_partitions_warn_threshold

QUERIES = {
    "resolve_in": "SELECT url, key FROM {ks}.resolutions WHERE url IN ?",
    "read_record_in": ("SELECT key, record_pb, record, first_seen, earliest, shares_seen, "
                       "writetime(record_pb) AS pb_at, writetime(record) AS json_at "
                       "FROM {ks}.records WHERE key IN ?"),
    "read_shares_in": 'SELECT key, "count" FROM {ks}.shares WHERE key IN ?',
}


class Batches:
    """`resolve(url)`, `record(key)`, `count(key)`, `share(key, n)`: awaitables of one key's
    answer (a key, a record row, a counter's value, the total after the share), coalesced."""

    def __init__(self, store: "CassandraMetadataStore", most: int, flying: int = 0):
        self._store = store
        self.resolve = Coalescer(self._resolve, most=most, flying=flying)
        self.record = Coalescer(self._records, most=most, flying=flying)
        self.count = Coalescer(self._counts, most=most, flying=flying)
        self.share = Coalescer(self._shares, most=most, merge=operator.add, flying=flying)
        self.resolution = Coalescer(self._resolutions, most=most, merge=_later, flying=flying)

    async def _resolve(self, asked: dict) -> dict:
        rows, refused = await self._read("resolve", list(asked))
        return {**{row["url"]: row["key"] for row in rows}, **refused}

    async def _records(self, asked: dict) -> dict:
        rows, refused = await self._read("read_record", list(asked))
        return {**{row["key"]: row for row in rows}, **refused}

    async def _counts(self, asked: dict) -> dict:
        rows, refused = await self._read("read_shares", list(asked))
        return {**{row["key"]: int(row["count"] or 0) for row in rows}, **refused}

    async def _read(self, name: str, keys: list[str]) -> tuple[list[dict], dict]:
        """The rows of `name` for keys (one single-key request, or an IN per replica group),
        and the error of each key the node refused."""
        store = self._store
        keys, refused = _fitting(keys)
        if len(keys) <= 1:
            return (await store._rows(name, (keys[0],)) if keys else []), refused
        statement = store._q[name + "_in"]
        answers = await asyncio.gather(*(store._execute(name, _routed(statement, group))
                                         for group in store.replica_groups(keys)))
        return [row for rows in answers for row in rows], refused

    async def _resolutions(self, asked: dict) -> dict:
        """Write each URL's resolution row (to its key): a put's, when it goes apart from its
        record (cassandra_metadata's put)."""
        store = self._store
        fitting, refused = _fitting(list(asked))
        writes = [(store._q["write_resolution"], (url, asked[url], store.ttl)) for url in fitting]
        await self._write("write_resolution", writes, [url + asked[url] for url in fitting])
        return refused

    async def _shares(self, asked: dict) -> dict:
        store, q = self._store, self._store._q
        fitting, refused = _fitting(list(asked))
        asked = {key: asked[key] for key in fitting}
        increments = [(q["add_shares"], (count, key)) for key, count in asked.items()]
        if len(increments) <= 1:
            for increment in increments:
                await store._execute("add_shares", *increment)
        else:              # a part that fails fails its own keys' callers, not the others'
            parts = _parts(increments, list(asked))
            answers = await asyncio.gather(*(store._execute("add_shares", store.counter_batch(part))
                                             for part in parts), return_exceptions=True)
            for part, answer in zip(parts, answers):
                if isinstance(answer, BaseException):
                    if not isinstance(answer, Exception):
                        raise answer
                    refused.update({key: answer for _, (_, key) in part})
            asked = {key: count for key, count in asked.items() if key not in refused}
            if not asked:
                return refused
        counts = await self._counts(asked)
        totals = {key: counts.get(key, count) for key, count in asked.items()}
        writes = [(q["write_shares_seen"], (max(total, 0) + 1, store.ttl, total, key))
                  for key, total in totals.items() if not isinstance(total, BaseException)]
        await self._write("write_shares_seen", writes, [w[1][3] for w in writes])
        return {**totals, **refused}

    async def _write(self, name: str, writes: list, keys: list[str]) -> None:
        """Plain writes (one per key, in keys' order): one alone, else unlogged batches (_parts)."""
        store = self._store
        if len(writes) == 1:
            await store._execute(name, *writes[0])
        elif writes:
            await asyncio.gather(*(store._execute(name, store._batched(part))
                                   for part in _parts(writes, keys)))


def _later(_, later):
    return later


def _fitting(keys: list[str]) -> tuple[list[str], dict]:
    """The keys a node takes, and a StoreError for each that would fail the whole IN or batch
    it is in: over 64 KiB, or not encodable as UTF-8 (a lone surrogate)."""
    if all(key.isascii() and len(key) <= _LONGEST_KEY for key in keys):   # the common case
        return keys, {}
    fitting, refused = [], {}
    for key in keys:
        try:
            size = len(key.encode("utf-8"))
        except UnicodeEncodeError:
            refused[key] = StoreError("cassandra: a key that is not valid UTF-8 "
                                      "(a lone surrogate)", retryable=False)
            continue
        if size > _LONGEST_KEY:
            refused[key] = StoreError(f"cassandra: a key of {size:,} bytes is longer than a "
                                      f"partition key may be ({_LONGEST_KEY:,})", retryable=False)
        else:
            fitting.append(key)
    return fitting, refused


def _routed(statement, keys: list[str]):
    """The IN statement bound to keys and routed as a read of the first: the driver routes a
    statement by its routing key, which it derives only for `k = ?`, never for `k IN ?`."""
    bound = _routed_class()(statement).bind((keys,))
    bound._routing_key = keys[0].encode()        # a text partition key: its UTF-8 bytes
    return bound


@functools.cache
def _routed_class():
    from cassandra.query import BoundStatement

    class Routed(BoundStatement):
        @property
        def routing_key(self):
            return self._routing_key

    return Routed


def _parts(statements: list, keys: list[str]) -> list[list]:
    """statements (one per key, in keys' order: the key, or what the row holds) in runs of at
    most BATCH_PARTITIONS keys that stay under ONE_BATCH_BYTES."""
    parts, part, size = [], [], 0
    for statement, key in zip(statements, keys):
        row = len(key) + ROW_BYTES
        if part and (size + row > ONE_BATCH_BYTES or len(part) == BATCH_PARTITIONS):
            parts.append(part)
            part, size = [], 0
        part.append(statement)
        size += row
    if part:
        parts.append(part)
    return parts
