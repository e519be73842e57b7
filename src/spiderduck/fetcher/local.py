"""FetcherService in-process: the transport a scheduler uses for the fetcher it shares a process
with (`spiderduck up`), with the gRPC adapter's semantics and none of its copies.

The fetcher's refusals are the scheduler's own (spiderduck.core.errors: FetcherBusy, WrongFetcher, which
src/spiderduck/fetcher/server.py sends as gRPC codes and src/spiderduck/scheduler/fetcher_client.py reads back), named here
with the fetcher's address as the gRPC client names them; it bounds the hop by the caller's `timeout` as a gRPC
deadline would. Hops for any other address go to `fallback` (the gRPC transport). With traces
on (src/spiderduck/core/telemetry.py), each hop is a `Fetch` span, as src/spiderduck/fetcher/server.py makes one.
"""
from __future__ import annotations

import asyncio

from spiderduck.core import telemetry
from spiderduck.core.errors import FetcherBusy, WrongFetcher
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Validators
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.core.frozen import evolve


class LocalTransport:
    def __init__(self, address: str, fetcher: "asyncio.Future[Fetcher]", fallback):
        self._address = address
        self._fetcher = fetcher          # set once the fetcher role has opened it
        self._fallback = fallback

    async def fetch(self, address: str, url: str, *, purpose: str, max_body_bytes: int,
                    timeout: float, validators: Validators | None = None, render: bool = False,
                    range: str = "", profile: str = "", cookie: str = "") -> FetchResult:
        if address != self._address:
            return await self._fallback.fetch(address, url, purpose=purpose, max_body_bytes=max_body_bytes,
                                              timeout=timeout, validators=validators,
                                              **({"render": True} if render else {}),
                                              **({"range": range} if range else {}),
                                              **({"profile": profile} if profile else {}),
                                              **({"cookie": cookie} if cookie else {}))
        async with asyncio.timeout(timeout):
            fetcher = await asyncio.shield(self._fetcher)
            try:
                with telemetry.span("Fetch", attributes={"url.full": url, "spiderduck.purpose": purpose}):
                    result = await fetcher.fetch(url, max_body_bytes=max_body_bytes, purpose=purpose,
                                                 max_wait=timeout, validators=validators, render=render,
                                                 range=range, profile=profile, cookie=cookie)
            except (FetcherBusy, WrongFetcher) as exc:
                raise type(exc)(f"{address}: {exc}") from exc
        # As the gRPC client does, the result names the URL asked for, not its canonical form.
        return result if result.url == url else evolve(result, url=url)

    async def close(self) -> None:
        await self._fallback.close()
