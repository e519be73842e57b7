"""Cassandra metadata store (`cassandra://[user:password@]h1,h2[:9042]/keyspace[?options]`).

The URL's options, the connection and `schema apply` are in common.stores.cassandra_cluster.
Every statement is prepared once at open.

Reads: `get_many` resolves every URL to its key concurrently (one single-partition read
each: with token-aware routing this beats a multi-partition `IN`, which makes one coordinator
wait for all), then reads each distinct key's record and share counter concurrently. Two
rounds of parallel reads, never one URL after another.

Records (schema version 2, common.stores.cassandra_schema): `put` writes the record's
UrlMetadata bytes to `record_pb` without share_count and first_seen, which reads take from
their own cells (a concurrent put may lower first_seen after this one wrote its record), and
clears the version-1 JSON `record` of a row that still has one. Reads take record_pb, or the
JSON of a row written at version 1; of a row holding both (a version-1 process still writing
during a rolling upgrade) the newer cell, by writetime. `get_many_wire` answers a record_pb row
with its stored bytes, first_seen and the share count appended (protobuf merges concatenated
fields), parsing nothing; a version-1 row is parsed and encoded again.

Writes, and why first_seen uses a lightweight transaction: `put` reads the existing
first_seen and the share count (concurrently). When the key has no first_seen yet it sets one
with `INSERT ... IF NOT EXISTS` (Paxos, once per key in its life); when it loses that race it
takes the winner's value. When the caller's first_seen is earlier than the stored one it lowers
it with `UPDATE ... IF first_seen > ?` (and a row without one gets it `IF first_seen = null`). So concurrent first crawls of a key from two schedulers
agree on the earliest first_seen, and later puts pay no Paxos round. first_seen is written only
by these conditional statements; record_pb, fetched_at, crawl_status and the resolution rows are
plain idempotent writes to other cells (the record first, then the resolution rows
concurrently, one partition each rather than a multi-partition batch). A put that fails half
way is safe to repeat. Timestamps are stored at millisecond precision (CQL `timestamp`), so
first_seen is rounded to milliseconds. Share counts are counters; a counter increment is not
idempotent, so it is never retried by the driver: a failure surfaces as a (retryable)
StoreError and the caller decides.

Errors: cassandra-driver's exceptions become `StoreError` here (retryable, except invalid
requests); a keyspace without the current schema is a `ConfigError` that names
`spiderduck schema apply`.
"""
from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime
import time
from typing import Any, Iterable, Sequence

from common import record_proto
from common.errors import ConfigError, StoreError
from common.record import UrlRecord
from common.stores import cassandra_schema
from common.stores.cassandra_cluster import CassandraOptions, connect, translate
from common.stores.metadata import WIRE_CHUNK, Budget, MetadataStore
from spiderduck.v1 import metadata_pb2

_EPOCH = datetime.datetime(1970, 1, 1)


def _millis(seconds: float) -> int:
    return round(seconds * 1000)


def _epoch_millis(value: datetime.datetime) -> int:
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return round((value - _EPOCH).total_seconds() * 1000)


def _seconds(value: datetime.datetime | None) -> float:
    return 0.0 if value is None else _epoch_millis(value) / 1000


def _stored(row: dict) -> bytes | str | None:
    """The record cell to read: record_pb, or the version-1 JSON when only it is there or it
    was written later (by a version-1 process, during a rolling upgrade); None: no record yet."""
    data, text = row.get("record_pb"), row.get("record")
    if text and (data is None or (row.get("json_at") or 0) > (row.get("pb_at") or 0)):
        return text
    return data


def _record(row: dict, shares: int) -> UrlRecord:
    stored = _stored(row)
    rec = (record_proto.from_bytes(stored) if isinstance(stored, bytes)
           else record_proto.from_json(stored))
    first_seen = _seconds(row.get("first_seen")) or rec.first_seen
    return dataclasses.replace(rec, first_seen=first_seen, share_count=shares)


def _wire(row: dict, shares: int) -> bytes:
    """The record as a GetUrlMetadata answer: record_pb as stored plus first_seen and the share
    count, unparsed; a version-1 row's JSON parsed and encoded."""
    stored = _stored(row)
    if not isinstance(stored, bytes):
        return record_proto.to_proto(_record(row, shares)).SerializeToString()
    tail = b""
    if row.get("first_seen") is not None:
        first_seen = metadata_pb2.UrlMetadata()
        first_seen.first_seen.FromMilliseconds(_epoch_millis(row["first_seen"]))
        tail = first_seen.SerializeToString()
    return stored + record_proto.with_share_count(tail, shares)


_QUERIES = {
    "resolve": "SELECT key FROM {ks}.resolutions WHERE url = ?",
    "read_record": ("SELECT record_pb, record, first_seen, writetime(record_pb) AS pb_at, "
                    "writetime(record) AS json_at FROM {ks}.records WHERE key = ?"),
    "read_first_seen": ("SELECT first_seen, writetime(record) AS json_at FROM {ks}.records "
                        "WHERE key = ?"),
    "read_shares": 'SELECT "count" FROM {ks}.shares WHERE key = ?',
    "claim_first_seen": "INSERT INTO {ks}.records (key, first_seen) VALUES (?, ?) IF NOT EXISTS",
    "lower_first_seen": "UPDATE {ks}.records SET first_seen = ? WHERE key = ? IF first_seen > ?",
    "fill_first_seen": "UPDATE {ks}.records SET first_seen = ? WHERE key = ? IF first_seen = null",
    "write_record": "UPDATE {ks}.records SET record_pb = ?, fetched_at = ? WHERE key = ?",
    "replace_record": ("UPDATE {ks}.records SET record_pb = ?, record = null, fetched_at = ? "
                       "WHERE key = ?"),                        # a row with version 1's JSON
    "write_status": "INSERT INTO {ks}.crawl_status (key, status, fetched_at) VALUES (?, ?, ?)",
    "write_resolution": "INSERT INTO {ks}.resolutions (url, key) VALUES (?, ?)",
    "add_shares": 'UPDATE {ks}.shares SET "count" = "count" + ? WHERE key = ?',
}
_IDEMPOTENT = {"resolve", "read_record", "read_first_seen", "read_shares", "write_record",
               "replace_record", "write_status", "write_resolution"}


class CassandraMetadataStore(MetadataStore):
    """The MetadataStore over cassandra-driver; open with `await CassandraMetadataStore.open(url)`."""

    def __init__(self, options: CassandraOptions, cluster, session, prepared: dict, *,
                 clock=time.time):
        self.options = options
        self._cluster = cluster
        self._session = session
        self._q = prepared
        self._clock = clock
        self._limit = asyncio.Semaphore(options.concurrency)

    @classmethod
    async def open(cls, url: str, *, clock=time.time) -> "CassandraMetadataStore":
        options = CassandraOptions.from_url(url)
        cluster, session = await connect(options)
        try:
            prepared = await asyncio.to_thread(cls._prepare, session, options.keyspace)
        except BaseException:
            await asyncio.to_thread(cluster.shutdown)
            raise
        return cls(options, cluster, session, prepared, clock=clock)

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
            for name, cql in _QUERIES.items():
                statement = session.prepare(cql.format(ks=keyspace))
                statement.is_idempotent = name in _IDEMPOTENT
                prepared[name] = statement
        except Exception as exc:
            raise translate(exc, f"prepare statements in {keyspace}") from exc
        return prepared

    async def _execute(self, name: str, params: tuple) -> tuple[list[dict], Any]:
        """(rows, ResultSet) of one prepared statement.

        `Session.execute_async` answers on a driver thread; its callbacks hand the result to
        the event loop with `call_soon_threadsafe`. At most `concurrency` requests are in flight.
        """
        async with self._limit:
            loop = asyncio.get_running_loop()
            future: asyncio.Future = loop.create_future()

            def settle(result, exc) -> None:
                if future.done():
                    return
                if exc is not None:
                    future.set_exception(translate(exc, name))
                else:
                    future.set_result(result)

            def from_driver(result=None, exc=None) -> None:   # runs on a driver thread
                try:
                    loop.call_soon_threadsafe(settle, result, exc)
                except RuntimeError:                          # the loop is gone
                    pass

            try:
                response = self._session.execute_async(self._q[name], params)
            except Exception as exc:
                raise translate(exc, name) from exc
            def on_rows(_rows) -> None:
                try:
                    from_driver(result=response.result())     # done: returns the ResultSet
                except Exception as exc:
                    from_driver(exc=exc)

            response.add_callbacks(on_rows, lambda exc: from_driver(exc=exc))
            result = await future
            return list(result.current_rows), result

    async def _rows(self, name: str, params: tuple) -> list[dict]:
        rows, _ = await self._execute(name, params)
        return rows

    async def put(self, key: str, record: UrlRecord, aliases: Iterable[str]) -> UrlRecord:
        aliases = [url for url in dict.fromkeys([key, *aliases]) if url]
        wanted = _millis(record.first_seen or self._clock()) / 1000
        existing, shares = await asyncio.gather(
            self._rows("read_first_seen", (key,)), self._rows("read_shares", (key,)))
        row = existing[0] if existing else {}
        first_seen = await self._settle_first_seen(key, wanted, _seconds(row.get("first_seen")))
        stored = dataclasses.replace(record, first_seen=first_seen,
                                     share_count=int(shares[0]["count"]) if shares else 0)
        data = record_proto.to_bytes(dataclasses.replace(stored, first_seen=0.0))
        fetched = _millis(stored.fetched_at)
        await asyncio.gather(
            self._rows("replace_record" if row.get("json_at") else "write_record",
                       (data, fetched, key)),
            self._rows("write_status", (key, stored.status.name, fetched)))
        await asyncio.gather(*(self._rows("write_resolution", (url, key)) for url in aliases))
        return stored

    async def _settle_first_seen(self, key: str, wanted: float, existing: float) -> float:
        """The earliest first_seen, set by lightweight transactions (see the module doc)."""
        if existing and existing <= wanted:
            return existing
        millis = _millis(wanted)
        attempt = (("lower_first_seen", (millis, key, millis)) if existing
                   else ("claim_first_seen", (key, millis)))
        for _ in range(3):               # each failed condition returns the value that won
            rows, result = await self._execute(*attempt)
            if result.was_applied:
                return wanted
            current = _seconds(rows[0].get("first_seen")) if rows else 0.0
            if current and current <= wanted:
                return current
            attempt = (("lower_first_seen", (millis, key, millis)) if current
                       else ("fill_first_seen", (millis, key)))
        raise StoreError(f"cassandra: first_seen of {key!r} kept changing; try again")

    async def get_many(self, urls: Sequence[str]) -> list[UrlRecord | None]:
        key_of = await self._resolve(urls)
        found = await self._read(list(dict.fromkeys(key_of.values())))
        by_key = {key: _record(row, shares) for key, (row, shares) in found.items()}
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
                by_key[key] = _wire(row, shares)
                for _ in range(asked[key]):
                    budget.take(by_key[key])
        return [by_key.get(key_of.get(url, "")) for url in urls]

    async def _resolve(self, urls: Sequence[str]) -> dict[str, str]:
        """The key each URL resolves to (URLs without a resolution row left out)."""
        unique = list(dict.fromkeys(urls))
        found = await asyncio.gather(*(self._rows("resolve", (url,)) for url in unique))
        return {url: rows[0]["key"] for url, rows in zip(unique, found) if rows}

    async def _read(self, keys: list[str]) -> dict[str, tuple[dict, int]]:
        """(record row, share count) of each key that has a record, in order, the records and
        counters read concurrently (a resolution written before its record finds none)."""
        records, shares = await asyncio.gather(
            asyncio.gather(*(self._rows("read_record", (k,)) for k in keys)),
            asyncio.gather(*(self._rows("read_shares", (k,)) for k in keys)))
        return {key: (rec_rows[0], int(share_rows[0]["count"] or 0) if share_rows else 0)
                for key, rec_rows, share_rows in zip(keys, records, shares)
                if rec_rows and _stored(rec_rows[0]) is not None}

    async def add_share(self, key: str, count: int = 1) -> int:
        await self._rows("add_shares", (count, key))
        rows = await self._rows("read_shares", (key,))
        return int(rows[0]["count"]) if rows else count

    async def close(self) -> None:
        if self._cluster is not None:
            cluster, self._cluster = self._cluster, None
            await asyncio.to_thread(cluster.shutdown)
