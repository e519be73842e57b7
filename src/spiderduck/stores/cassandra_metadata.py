"""Cassandra metadata store (`cassandra://[user:password@]h1,h2[:9042]/keyspace[?options]`).

The URL's options, the connection and `schema apply` are in spiderduck.stores.cassandra_cluster.
Every statement is prepared once at open. No statement is a lightweight transaction (Paxos),
and no write reads first.

Writes: `put` is one request, an unlogged batch of plain writes: the record row (record_pb,
fetched_at, and `record = null`, which replaces a version-1 JSON row without reading it), its
`earliest` cell (first_seen, below), one `aliases` row and one resolution row per alias (the
`crawl_status` table that versions 1 and 2 also wrote is read by nothing, so it is no longer
written). It reads nothing first, so it is idempotent and the driver may retry it. A put whose
rows pass ONE_BATCH_BYTES (4 KiB, most of it the record), or that names 10 URLs or more, goes
as the record's partition (its row and its aliases, one partition key) alone, and its
resolution rows coalesced with those of the other puts of the turn or of a round trip
(spiderduck.stores.cassandra_batches, in batches of at most 10 partitions and 4 KiB): Cassandra
warns about a batch of several partitions over 5 KiB or 10 partitions and refuses one over
50 KiB, never one of a single partition key (test_a_large_record_with_long_urls_is_stored puts
124 KB so). Of two puts of a turn naming one URL, the later's resolution row is written. The rows of a batch may be applied in
any order; reads take a resolution whose record is not there yet as no record.

first_seen without Paxos: of all the puts of a key, the earliest first_seen must win, whatever
order the writes arrive in, from any scheduler. Cassandra keeps, of two writes to one cell, the
one with the higher write timestamp (last write wins). So `earliest` is written with `USING
TIMESTAMP _EARLIEST_CLOCK - first_seen in milliseconds`: the earlier the first_seen, the higher
the timestamp, and the cell converges to the minimum as a min-register would. Nothing else
writes that cell, so no real clock competes; _EARLIEST_CLOCK is far enough ahead of any real
clock (2096) that a row deletion at the current time does not remove the cell.

Shares (coalesced too: counter batches, one read and unlogged writes a turn): the `shares` counter counts them (an increment is not idempotent, so it is never
retried: a failure surfaces as a retryable StoreError and the caller decides). `add_share`
increments it, reads the total (the caller needs it), then writes that total to
`records.shares_seen` with `USING TIMESTAMP total + 1`: totals only grow, so the largest wins
whatever order concurrent add_shares write in (the +1 keeps a total of 0 at a positive
timestamp). Reads take the count from the record row; only a row whose shares_seen is null (from
before version 3, or a key never shared since) costs a read of the counter.

What a put returns: the record as written, first_seen the caller's (or now when unset) and
share_count the caller's. It cannot know an earlier put's first_seen or the share count without
the read it no longer makes; reads give the stored truth (spiderduck.stores.metadata.MetadataStore).

Reads: `get_many` resolves every URL to its key, then reads each distinct key's record row:
two requests for one URL, sent through spiderduck.stores.cassandra_batches, which coalesces the
keys every caller asks for in one turn of the event loop into one request (`WHERE k IN ?`, at
most the URL's `batch` option a request, grouped by replica), so concurrent single-URL reads
(the API's, the decider's before each fetch) share requests. A
record row holds record_pb, or the JSON of a row written at version 1; of a row holding both (a
version-1 process still writing during a rolling upgrade) the newer cell is read, by writetime.
first_seen is the earlier of `earliest` and the legacy `first_seen` cell. `get_many_wire`
answers a record_pb row with its stored bytes, first_seen and the share count appended (protobuf
merges concatenated fields), parsing nothing; a version-1 row is parsed and encoded again.
Timestamps are stored at millisecond precision (CQL `timestamp`), so first_seen is rounded to
milliseconds.

Rolling upgrade from version 2 (`spiderduck schema apply` first, then the processes): a
version-2 process still sets the legacy `first_seen` by its lightweight transactions; reads take
the earlier of that and `earliest`, so first_seen stays the earliest of all puts. A version-2
reader sees first_seen only on rows a version-2 put wrote (version 3 leaves first_seen out of
record_pb, where the appended value could not replace it). Shares a version-2 process counts
reach the counter but not shares_seen: a row a version-3 add_share already gave a shares_seen
reads short by them until its next share counted at version 3.

Records stored before `modified_time` moved from field 36 to 38 (issue 31 gave 36 to
`fetch_mode`): `to_wire` rewrites such bytes as it reads them (src/spiderduck/wire/record_migrations.py), so
`get_many` and `get_many_wire` answer the current layout; puts write it (to_proto), so a record
is fixed for good at its next crawl. Not a schema version that rewrites the table: that is a
scan of every partition (token range by token range) from whichever process runs `schema apply`,
for a change most rows do not need, and during a rolling upgrade a process still at the previous
release would go on writing the old layout after it. The read-side check costs one search for
the tag's two bytes (0xA2 0x02) in a record, which most records do not hold; only those that do
are walked field by field.

Aliases (schema version 4): put also writes (key, url) into `aliases` for each URL it points at
the key, in the record's mutation (same partition key): what a forget reads to find the
resolution rows pointing at a record (spiderduck.stores.cassandra_forget, which also holds the
forget and its domain scan).

Retention (retention.metadata, `open(retention=)`): every plain write of a put (the record row's
cells, `earliest`, the resolution rows, the aliases) and add_share's `shares_seen` carry it as
their TTL, so a record not crawled or refreshed within it expires with its resolution rows, and
each put renews it; `expire` has nothing to sweep. `earliest` is renewed by a put that carries
the same first_seen (the scheduler's renewals do; of two cells with one timestamp and one value
Cassandra keeps the later expiry); a put with a later first_seen loses to the stored cell, which
then expires first, and the record reads first_seen 0 from then on. The `shares` counters take
no TTL (Cassandra allows none on counters): an expired record's counter stays, invisible (a
count is read only for a key with a record), and a record stored again under that key later
starts from it. A forget deletes it.

Requests: each one the store sends (a batch is one, a forget's paged read one a page, the
driver's own retries none) counts in `spiderduck_cassandra_requests_total{statement}`, by the
statement's name in _QUERIES, `put` for a put's batch, `scan` for a page of a forget's domain
scan: what the service's Cassandra work costs, counted in the service (bench/pipeline
--production reads it from /metrics).

Errors: cassandra-driver's exceptions become `StoreError` here (retryable, except invalid
requests); a keyspace without the current schema is a `ConfigError` that names
`spiderduck schema apply`.
"""
from __future__ import annotations

import asyncio
import collections
import math
import time
from typing import Iterable, Sequence

from spiderduck.core import metrics
from spiderduck.core.errors import ConfigError
from spiderduck.core.record import UrlRecord
from spiderduck.stores import cassandra_forget, cassandra_schema
from spiderduck.stores.cassandra_batches import (BATCH_PARTITIONS, ONE_BATCH_BYTES, QUERIES as BATCH_QUERIES,
                                                  ROW_BYTES, Batches)
from spiderduck.stores.cassandra_cluster import CassandraOptions, connect, translate
from spiderduck.stores.cassandra_handoff import Handoff
from spiderduck.stores.cassandra_rows import millis, stored_cell, to_record, to_wire
from spiderduck.stores.metadata import WIRE_CHUNK, Budget, Forgotten, MetadataStore
from spiderduck.wire import record_proto
from spiderduck.core.frozen import evolve

# The write timestamp of `earliest` is _EARLIEST_CLOCK minus first_seen in milliseconds (see the
# module doc): 4e15 microseconds is October 2096, ahead of every real write timestamp. first_seen
# is clamped to 1970..2096, so the timestamp stays between 0 and _EARLIEST_CLOCK.
_EARLIEST_CLOCK = 4_000_000_000_000_000
_LATEST_FIRST_SEEN_MS = _EARLIEST_CLOCK // 1000
_LONGEST_TTL = 20 * 365 * 24 * 3600   # Cassandra's (MAX_TTL): retention.metadata may not pass it


_QUERIES = {
    # Each names its key, as its IN form in cassandra_batches does.
    "resolve": "SELECT url, key FROM {ks}.resolutions WHERE url = ?",
    "read_record": ("SELECT key, record_pb, record, first_seen, earliest, shares_seen, "
                    "writetime(record_pb) AS pb_at, writetime(record) AS json_at "
                    "FROM {ks}.records WHERE key = ?"),
    "read_shares": 'SELECT key, "count" FROM {ks}.shares WHERE key = ?',
    # Every plain write carries the retention's TTL (0: none; see the module doc).
    "write_record": ("UPDATE {ks}.records USING TTL ? SET record_pb = ?, record = null, "
                     "fetched_at = ? WHERE key = ?"),
    "write_earliest": ("UPDATE {ks}.records USING TIMESTAMP ? AND TTL ? SET earliest = ? "
                       "WHERE key = ?"),
    "write_alias": "INSERT INTO {ks}.aliases (key, url) VALUES (?, ?) USING TTL ?",
    "write_resolution": "INSERT INTO {ks}.resolutions (url, key) VALUES (?, ?) USING TTL ?",
    "add_shares": 'UPDATE {ks}.shares SET "count" = "count" + ? WHERE key = ?',
    "write_shares_seen": ("UPDATE {ks}.records USING TIMESTAMP ? AND TTL ? SET shares_seen = ? "
                          "WHERE key = ?"),
    **cassandra_forget.QUERIES,
}
_NOT_IDEMPOTENT = {"add_shares"}
# spiderduck_cassandra_requests_total{statement}: one series per name here, made once per store.
_REQUESTS = metrics.recorder("cassandra")
_COUNTED = (*_QUERIES, "put", "scan")


def ttl_of(retention: float) -> int:
    """retention.metadata as a TTL in whole seconds (rounded up; 0: none)."""
    ttl = math.ceil(retention)
    if not 0 <= ttl <= _LONGEST_TTL:
        raise ConfigError(f"retention.metadata: {retention:g}s is more than Cassandra keeps a row "
                          f"({_LONGEST_TTL}s, 20 years); 0 keeps records forever")
    return ttl


class CassandraMetadataStore(MetadataStore):
    """The MetadataStore over cassandra-driver; open with `await CassandraMetadataStore.open(url)`."""

    def __init__(self, options: CassandraOptions, cluster, session, prepared: dict, *,
                 clock=time.time, retention: float = 0):
        from cassandra.query import BatchStatement, BatchType
        self.options = options
        self.ttl = ttl_of(retention)                  # seconds; 0: rows are kept forever
        self._cluster = cluster
        self._session = session
        self._q = prepared
        self._clock = clock
        self._limit = asyncio.Semaphore(options.concurrency)
        self._handoff: Handoff | None = None
        self._batch = lambda: BatchStatement(batch_type=BatchType.UNLOGGED)
        self._counters = lambda: BatchStatement(batch_type=BatchType.COUNTER)
        self._batches = Batches(self, options.batch, options.batch_flying)
        self.sent = {name: _REQUESTS.counter("requests", statement=name) for name in _COUNTED}

    async def expire(self, before: float) -> int:
        """Nothing to sweep: the rows expire by their TTL (retention.metadata, given to open);
        shares are counters, which take no TTL (the module doc says what becomes of them)."""
        return 0

    async def forget(self, urls: Sequence[str], domain: str = "") -> Forgotten:
        """MetadataStore.forget; what is found and how: spiderduck.stores.cassandra_forget."""
        return await cassandra_forget.forget(self, urls, domain)

    @classmethod
    async def open(cls, url: str, *, clock=time.time, retention: float = 0) -> "CassandraMetadataStore":
        """`retention` (retention.metadata, seconds; 0 = forever): the TTL of every row a put
        writes, renewed by each put."""
        ttl_of(retention)                             # refused before connecting
        options = CassandraOptions.from_url(url)
        cluster, session = await connect(options)
        try:
            prepared = await asyncio.to_thread(cls._prepare, session, options.keyspace)
        except BaseException:
            await asyncio.to_thread(cluster.shutdown)
            raise
        return cls(options, cluster, session, prepared, clock=clock, retention=retention)

    @staticmethod
    def _prepare(session, keyspace: str) -> dict:
        try:
            version = cassandra_schema.current_version(session, keyspace)
        except Exception as exc:
            from cassandra import InvalidRequest
            if isinstance(exc, InvalidRequest):       # no keyspace or no schema_version table
                version = 0
            else:
                raise translate(exc, f"read schema version of {keyspace}") from exc
        if version < cassandra_schema.LATEST:
            raise ConfigError(
                f"cassandra keyspace {keyspace} is at schema version {version}, this build needs "
                f"{cassandra_schema.LATEST}: run `spiderduck schema apply`")
        prepared = {}
        try:
            for name, cql in {**_QUERIES, **BATCH_QUERIES}.items():
                statement = session.prepare(cql.format(ks=keyspace))
                statement.is_idempotent = name not in _NOT_IDEMPOTENT
                prepared[name] = statement
        except Exception as exc:
            raise translate(exc, f"prepare statements in {keyspace}") from exc
        return prepared

    async def _execute(self, name: str, statement, params: tuple | None = None) -> list[dict]:
        """The rows of one request (a prepared statement and its parameters, or a batch).

        `Session.execute_async` answers on the driver's thread, which hands the rows to the
        event loop (Handoff). At most `concurrency` requests are in flight.
        """
        loop = asyncio.get_running_loop()
        handoff = self._handoff
        if handoff is None or handoff.loop is not loop:
            handoff = self._handoff = Handoff(loop)
        async with self._limit:
            future = loop.create_future()
            self.sent[name].inc()
            try:
                response = self._session.execute_async(statement, params)
                response.add_callbacks(handoff.ok, handoff.error,
                                       callback_args=(future,), errback_args=(future,))
                return await future
            except Exception as exc:
                raise translate(exc, name) from exc

    def _batched(self, statements: list, batch=None):
        """An unlogged batch of (prepared statement, parameters), marked idempotent (plain
        writes only: no counter, no condition)."""
        batch = batch if batch is not None else self._batch()
        for statement, params in statements:
            batch.add(statement, params)
        batch.is_idempotent = True
        return batch

    def counter_batch(self, statements: list):
        """A counter batch of (add_shares, parameters): not idempotent, never retried."""
        batch = self._counters()
        for statement, params in statements:
            batch.add(statement, params)
        return batch

    def replica_groups(self, keys: list[str]) -> list[list[str]]:
        """keys by the first replica of each (one group on a one-node cluster)."""
        metadata = self._cluster.metadata
        if len(metadata.all_hosts()) <= 1:
            return [keys]
        groups: dict = {}
        for key in keys:
            replicas = metadata.get_replicas(self.options.keyspace, key.encode())
            groups.setdefault(replicas[0] if replicas else None, []).append(key)
        return list(groups.values())

    def _rows(self, name: str, params: tuple):
        return self._execute(name, self._q[name], params)

    async def put(self, key: str, record: UrlRecord, aliases: Iterable[str]) -> UrlRecord:
        urls = [url for url in dict.fromkeys([key, *aliases]) if url]
        first_ms = min(max(millis(record.first_seen or self._clock()), 0), _LATEST_FIRST_SEEN_MS)
        written = (record if record.first_seen == first_ms / 1000
                   else evolve(record, first_seen=first_ms / 1000))
        msg = record_proto.to_proto(record)           # as to_bytes, first_seen left out too
        msg.ClearField("first_seen")
        msg.ClearField("share_count")
        data = msg.SerializeToString()
        fetched = millis(record.fetched_at)
        q, ttl = self._q, self.ttl
        record_part = self._batched([                 # one partition key: the records row and
            (q["write_record"], (ttl, data, fetched, key)),               # the aliases
            (q["write_earliest"], (_EARLIEST_CLOCK - first_ms, ttl, first_ms, key)),
            *((q["write_alias"], (key, url, ttl)) for url in urls)])
        rest_bytes = sum(len(url) + len(key) + ROW_BYTES for url in urls)
        if (len(urls) < BATCH_PARTITIONS
                and len(data) + len(key) + ROW_BYTES + 2 * rest_bytes <= ONE_BATCH_BYTES):
            rest = [(q["write_resolution"], (url, key, ttl)) for url in urls]
            await self._execute("put", self._batched(rest, record_part))   # the common case
        else:              # the record's partition alone; its resolution rows with other puts'
            resolution = self._batches.resolution
            await asyncio.gather(self._execute("put", record_part),
                                 *(resolution(url, key) for url in urls))
        return written

    async def get_many(self, urls: Sequence[str]) -> list[UrlRecord | None]:
        key_of = await self._resolve(urls)
        found = await self._read(list(dict.fromkeys(key_of.values())))
        by_key = {key: to_record(row, shares) for key, (row, shares) in found.items()}
        return [by_key.get(key_of.get(url, "")) for url in urls]

    async def get_many_wire(self, urls: Sequence[str], max_bytes: int = 0) -> list[bytes | None]:
        """With max_bytes, the records are read WIRE_CHUNK keys at a time and counted (once per
        URL asking) as they come, so a call stops soon after passing the budget."""
        key_of = await self._resolve(urls)
        keys = list(dict.fromkeys(key_of.values()))
        asked = collections.Counter(key_of.get(url) for url in urls)
        budget = Budget(max_bytes)
        step = WIRE_CHUNK if max_bytes else max(len(keys), 1)
        by_key: dict[str, bytes] = {}
        for start in range(0, len(keys), step):
            for key, (row, shares) in (await self._read(keys[start:start + step])).items():
                by_key[key] = to_wire(row, shares)
                for _ in range(asked[key]):
                    budget.take(by_key[key])
        return [by_key.get(key_of.get(url, "")) for url in urls]

    async def _resolve(self, urls: Sequence[str]) -> dict[str, str]:
        """The key each URL resolves to (URLs without a resolution row left out)."""
        unique = list(dict.fromkeys(urls))
        resolve = self._batches.resolve
        if len(unique) == 1:
            found = [await resolve(unique[0])]
        else:
            found = await asyncio.gather(*(resolve(url) for url in unique))
        return {url: key for url, key in zip(unique, found) if key is not None}

    async def _read(self, keys: list[str]) -> dict[str, tuple[dict, int]]:
        """(record row, share count) of each key that has a record, in order, the rows read
        concurrently (a resolution written before its record finds none); the counter only for
        a row without shares_seen."""
        read, count = self._batches.record, self._batches.count
        if len(keys) == 1:
            records = [await read(keys[0])]
        else:
            records = await asyncio.gather(*(read(key) for key in keys))
        found = {key: row for key, row in zip(keys, records)
                 if row is not None and stored_cell(row) is not None}
        uncounted = [key for key, row in found.items() if row.get("shares_seen") is None]
        counters = await asyncio.gather(*(count(key) for key in uncounted))
        counted = {key: total or 0 for key, total in zip(uncounted, counters)}
        return {key: (row, counted[key] if key in counted else int(row["shares_seen"]))
                for key, row in found.items()}

    async def add_share(self, key: str, count: int = 1) -> int:
        return await self._batches.share(key, count)

    async def close(self) -> None:
        if self._cluster is not None:
            cluster, self._cluster = self._cluster, None
            await asyncio.to_thread(cluster.shutdown)
