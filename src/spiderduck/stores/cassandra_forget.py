"""Forgetting in the Cassandra metadata store (CassandraMetadataStore.forget, MetadataStore.forget's
contract).

What goes, as on SQLite (spiderduck.stores.sqlite_forget): for each URL asked for (its lookup_key
form), the keys it names (itself and the key its resolution row points at); of each key, its
record, its share counter, and every resolution row pointing at it; of each URL its record names
(forget_scope.chain_urls), that URL's own record, counter and resolution row, and the rows
pointing at it. With a domain, every URL of it in `resolutions` or as a key of `records` counts
as asked.

Finding the resolution rows that point at a key: `resolutions` is keyed by URL, so they cannot
be read by key. Each put (schema version 4) also writes (key, url) into `aliases` for every URL
it points at the key, in the same mutation as the record row (one partition key, so no extra
replica, no batch across partitions), each with the row's TTL: a put writes one small row more
per URL, and a forget reads one partition. An alias that a newer chain has taken since (its row
now points elsewhere) is left alone: each is read before its row is deleted. A scan of
`resolutions` for every forget would cost nothing on the hot path but a full table read per
takedown. Puts from before version 4 wrote no aliases: for those records a forget finds their
own chain (the URL first submitted, the hops, the final URL) but not other URLs that redirected
to them, until the record's next put; a forget by domain scans and finds them all.

A domain: `resolutions` and then `records` are read whole, page by page (_SCAN_ROWS rows, in
token order, by the driver's paging), each page's URLs of the domain forgotten before the next
page is read: memory holds one page and the URLs reached. An admin action; puts are not held.

Deleting: plain deletes at the current time (rows, the record row, its `aliases` partition, the
counter). `earliest` is written with timestamps ahead of any clock (cassandra_metadata), so a
delete now leaves it: it is deleted at its own write timestamp. A first_seen later than the
forgotten one then reads as none until compaction purges that tombstone (gc_grace_seconds); a
record crawled again after an unforget reads first_seen 0 meanwhile. A counter deleted and
counted again may read short until compaction (Cassandra's counters). Cassandra deletes by
writing tombstones: no read answers the data from then on, but its bytes leave the SSTables only
at a compaction after gc_grace_seconds (10 days by default), as for any delete; the partition
keys (the URLs) stay in the tombstones until then.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Sequence

from spiderduck.stores.cassandra_cluster import translate
from spiderduck.stores.cassandra_rows import stored_cell
from spiderduck.stores.forget_scope import asked, chain_urls, domain_form, in_domain
from spiderduck.stores.metadata import Forgotten
from spiderduck.wire import record_proto

if TYPE_CHECKING:
    from spiderduck.stores.cassandra_metadata import CassandraMetadataStore

_FORGET_URLS = 100       # URLs asked for, forgotten together (their reads and deletes concurrent)
_SCAN_ROWS = 1000        # rows a page of a domain's scan

QUERIES = {
    "forget_read": ("SELECT record_pb, record, writetime(earliest) AS earliest_at "
                    "FROM {ks}.records WHERE key = ?"),
    "forget_aliases": "SELECT url FROM {ks}.aliases WHERE key = ?",
    "delete_record": "DELETE FROM {ks}.records WHERE key = ?",
    "delete_earliest": "DELETE earliest FROM {ks}.records USING TIMESTAMP ? WHERE key = ?",
    "delete_aliases": "DELETE FROM {ks}.aliases WHERE key = ?",
    "delete_resolution": "DELETE FROM {ks}.resolutions WHERE url = ?",
    "delete_shares": "DELETE FROM {ks}.shares WHERE key = ?",
}
# What a domain's scan reads: the URLs of each table.
_SCANS = ("SELECT url FROM {ks}.resolutions", "SELECT key AS url FROM {ks}.records")


async def forget(store: "CassandraMetadataStore", urls: Sequence[str], domain: str) -> Forgotten:
    forgetting = _Forgetting(store)
    await forgetting.urls(asked(urls))
    if domain := domain_form(domain):
        await forgetting.domain(domain)
    return Forgotten(forgetting.records, frozenset(forgetting.reached))


class _Forgetting:
    def __init__(self, store: "CassandraMetadataStore"):
        self._store = store
        self._session = store._session
        self._q = store._q
        self.records = 0
        self.reached: set[str] = set()

    async def urls(self, urls: list[str]) -> None:
        for start in range(0, len(urls), _FORGET_URLS):
            await self._forget(urls[start:start + _FORGET_URLS])

    async def domain(self, domain: str) -> None:
        keyspace = self._store.options.keyspace
        for cql in _SCANS:
            async for page in self._pages(cql.format(ks=keyspace)):
                found = [row["url"] for row in page if in_domain(row["url"], domain)]
                await self.urls([url for url in found if url not in self.reached])

    async def _forget(self, urls: list[str]) -> None:
        keys = set(urls) | set((await self._store._resolve(urls)).values())
        found = dict(zip(keys, await asyncio.gather(*(self._read(key) for key in keys))))
        hops = set().union(*(chain for _, chain, _ in found.values())) - keys
        found.update(zip(hops, await asyncio.gather(*(self._read(hop) for hop in hops))))
        aliases = await self._pointing(found)
        rows = set(found) | aliases                   # every resolution row that goes
        deletes = [("delete_resolution", (url,)) for url in rows]
        for key, (row, _, _) in found.items():
            deletes += [("delete_record", (key,)), ("delete_aliases", (key,)),
                        ("delete_shares", (key,))]
            if row is not None and row.get("earliest_at") is not None:
                deletes.append(("delete_earliest", (row["earliest_at"], key)))
        await asyncio.gather(*(self._store._rows(name, params) for name, params in deletes))
        self.records += sum(1 for row, _, _ in found.values()
                            if row is not None and stored_cell(row) is not None)
        self.reached |= rows

    async def _read(self, key: str) -> tuple[dict | None, set[str], list[str]]:
        """(the record row or None, the URLs its record names, the URLs its aliases name)."""
        rows, aliases = await asyncio.gather(self._store._rows("forget_read", (key,)),
                                             self._all("forget_aliases", (key,)))
        row = rows[0] if rows else None
        data = None if row is None else stored_cell(row)
        if isinstance(data, bytes):
            chain = chain_urls(record_proto.from_bytes(data))
        elif data:
            chain = chain_urls(record_proto.from_json(data))
        else:
            chain = set()
        return row, chain, [alias["url"] for alias in aliases]

    async def _pointing(self, found: dict) -> set[str]:
        """The aliases of the keys found whose resolution rows still point at those keys."""
        candidates = {url: key for key, (_, _, aliases) in found.items() for url in aliases}
        points = await self._store._resolve(list(candidates))
        return {url for url, key in candidates.items() if points.get(url) == key}

    async def _all(self, name: str, params: tuple) -> list[dict]:
        """Every row of a prepared read, all its pages (a worker thread follows them)."""
        sent = self._store.sent[name]

        def read() -> list[dict]:
            result = self._session.execute(self._q[name], params)
            sent.inc()
            rows = list(result.current_rows)
            while result.has_more_pages:
                result.fetch_next_page()
                sent.inc()
                rows += result.current_rows
            return rows
        try:
            return await asyncio.to_thread(read)
        except Exception as exc:
            raise translate(exc, name) from exc

    async def _pages(self, cql: str):
        """The rows of a whole-table read, a page at a time."""
        from cassandra.query import SimpleStatement
        statement = SimpleStatement(cql, fetch_size=_SCAN_ROWS)
        sent = self._store.sent["scan"]
        try:
            result = await asyncio.to_thread(self._session.execute, statement)
            while True:
                sent.inc()
                yield result.current_rows
                if not result.has_more_pages:
                    return
                await asyncio.to_thread(result.fetch_next_page)
        except Exception as exc:
            raise translate(exc, f"scan: {cql}") from exc
