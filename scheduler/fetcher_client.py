"""The scheduler's side of FetcherService: route a hop to the fetcher owning its domain.

gRPC errors are translated here: RESOURCE_EXHAUSTED (the domain's queue is full)
backs off and retries; UNAVAILABLE / DEADLINE_EXCEEDED become FetcherUnavailable
(retryable, so the message is redelivered later); FAILED_PRECONDITION re-routes.
"""
from __future__ import annotations

import asyncio
import logging
import random

import grpc

from common import fetch_proto, urls
from common.errors import FetcherUnavailable
from common.fetch import FetchResult
from common.grpc_server import MAX_MESSAGE_BYTES
from common.shards import shard_of
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc

log = logging.getLogger("spiderduck.scheduler")


class StaticRouter:
    """Shards spread over a fixed list of fetchers (`scheduler.fetchers`)."""

    def __init__(self, addresses: list[str], shards: int):
        if not addresses:
            raise ValueError("at least one fetcher address is needed")
        self.addresses = list(addresses)
        self.shards = shards

    def route(self, domain: str) -> str:
        return self.addresses[shard_of(domain, self.shards) % len(self.addresses)]


class FetcherClient:
    def __init__(self, router: StaticRouter, *, hop_timeout: float, attempts: int = 8,
                 backoff: float = 0.2, max_backoff: float = 5.0):
        self._router = router
        self._hop_timeout = hop_timeout
        self._attempts = attempts
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._stubs: dict[str, fetcher_pb2_grpc.FetcherServiceStub] = {}
        self._channels: list[grpc.aio.Channel] = []

    def _stub(self, address: str) -> fetcher_pb2_grpc.FetcherServiceStub:
        stub = self._stubs.get(address)
        if stub is None:
            channel = grpc.aio.insecure_channel(address, options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)])
            self._channels.append(channel)
            stub = self._stubs[address] = fetcher_pb2_grpc.FetcherServiceStub(channel)
        return stub

    async def fetch(self, url: str) -> FetchResult:
        domain = urls.registrable_domain(urls.host_of(url))
        delay = self._backoff
        last = ""
        for _ in range(self._attempts):
            address = self._router.route(domain)
            try:
                response = await self._stub(address).Fetch(
                    fetcher_pb2.FetchRequest(url=url, purpose="page"), timeout=self._hop_timeout)
                return fetch_proto.from_proto(url, response)
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
                last = f"{address}: {code.name}: {exc.details()}"
                if code not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE,
                                grpc.StatusCode.FAILED_PRECONDITION):
                    raise FetcherUnavailable(f"fetch {url}: {last}") from exc
                log.debug("fetch %s: %s; retrying in %.2fs", url, last, delay)
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, self._max_backoff)
        raise FetcherUnavailable(f"fetch {url}: gave up after {self._attempts} attempts ({last})")

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()
        self._channels.clear()
        self._stubs.clear()
