"""Whether a URL with no record yet is queued or in flight ("pending"), or was never seen.

In flight: its claim is held (spiderduck.bus.claims, bucket spiderduck_url_claims). Queued: a marker in
the KV bucket `spiderduck_url_queued`, written by the metadata-api before it publishes a URL
(ResolveUrl, and the submissions it is asked to queue: `spiderduck submit`, the client's
`submit`; spiderduck.metadata_api.queueing), and dropped by the bucket
`streams.queued_ttl` after it was written; a record, once there, says more than either. Keys are
those of the claims: a digest of the canonical URL (an invalid URL: as given, trimmed), by the
rule of spiderduck.client.keys.

Producers that publish to spiderduck.urls.submit themselves may write the marker too (docs/usage.md
shows how); their URLs otherwise show as pending only once a scheduler claims them.
"""
from __future__ import annotations

import asyncio
from typing import Sequence

from nats.errors import Error as NatsError
from nats.js.api import KeyValueConfig
from nats.js.errors import KeyDeletedError, KeyNotFoundError

from spiderduck.bus.streams import kv_bucket
# The bucket and the key rule are defined once, in the client (its `submit` writes markers too).
from spiderduck.client.keys import key_for
from spiderduck.client.names import QUEUED_BUCKET
from spiderduck.core import urls as urllib
from spiderduck.core.errors import BusError


def url_key(url: str) -> str:
    """The key of a URL as the scheduler claims it: its canonical form's (else as given, trimmed)."""
    try:
        canonical: str | None = urllib.canonicalize(url)
    except urllib.InvalidUrl:
        canonical = None
    return key_for(url, canonical)


async def queued_bucket(js, ttl: float, *, replicas: int = 1):
    return await kv_bucket(js, KeyValueConfig(bucket=QUEUED_BUCKET, ttl=ttl, history=1, replicas=replicas))


async def mark_queued(kv, urls: Sequence[str]) -> None:
    """Mark `urls` queued (before publishing them). Raises BusError."""
    try:
        await asyncio.gather(*(kv.put(url_key(u), b"") for u in dict.fromkeys(urls)))
    except (NatsError, asyncio.TimeoutError) as exc:
        raise BusError(f"cannot mark URLs queued in {QUEUED_BUCKET}: {exc}") from exc


class PendingLookup:
    """Which URLs are pending, from both buckets (two reads per URL, all at once)."""

    def __init__(self, claims_kv, queued_kv):
        self._buckets = (claims_kv, queued_kv)

    async def pending(self, urls: Sequence[str]) -> list[bool]:
        keys = [url_key(u) for u in urls]
        found = await asyncio.gather(*(self._has(kv, k) for k in keys for kv in self._buckets))
        return [found[2 * i] or found[2 * i + 1] for i in range(len(keys))]

    @staticmethod
    async def _has(kv, key: str) -> bool:
        try:
            await kv.get(key)
            return True
        except (KeyNotFoundError, KeyDeletedError):
            return False
        except (NatsError, asyncio.TimeoutError) as exc:
            raise BusError(f"cannot read {key}: {exc}") from exc
