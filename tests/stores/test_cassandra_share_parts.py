"""A share count split into several counter batches, one of which fails: only its keys' callers
get the error (a retryable StoreError: the sighting retries it); the keys of the batches that
were applied get their totals, so a retry never counts them twice. A node cannot be made to fail
one batch of a request and not the other, so the store here is a stand-in that fails the batch
holding a key named bad*; everything else is tests/stores/test_cassandra_requests.py's, on a
real node."""
from __future__ import annotations

import asyncio

from spiderduck.core.errors import StoreError
from spiderduck.stores.cassandra_batches import Batches


class FailingPart:
    """The parts of CassandraMetadataStore that Batches calls, counting in a dict; a counter
    batch holding a key that starts with "bad" fails as a timed-out write would."""
    ttl = 0
    _q = {"add_shares": "add", "write_shares_seen": "seen", "read_shares": "read"}

    def __init__(self):
        self.counted: dict[str, int] = {}

    def counter_batch(self, part):
        return list(part)

    def _batched(self, part):
        return list(part)

    async def _execute(self, name, statement, params=None):
        if name == "add_shares":
            items = statement if params is None else [(statement, params)]
            if any(key.startswith("bad") for _, (_, key) in items):
                raise StoreError("cassandra add_shares: WriteTimeout", retryable=True)
            for _, (count, key) in items:
                self.counted[key] = self.counted.get(key, 0) + count
        return []

    async def _rows(self, name, params):
        key = params[0]
        return [{"key": key, "count": self.counted[key]}] if key in self.counted else []


async def test_a_failed_counter_batch_fails_its_own_keys_only():
    store = FailingPart()
    batches = Batches(store, most=32)
    keys = [f"bad{i}" for i in range(10)] + ["good"]          # two batches: 10 keys, then 1
    answers = await asyncio.gather(*(batches.share(key, 1) for key in keys),
                                   return_exceptions=True)
    assert all(isinstance(a, StoreError) and a.retryable for a in answers[:10])
    assert answers[10] == 1 and store.counted == {"good": 1}
