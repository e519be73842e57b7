"""The scheduler's side of FetcherService: send each hop to the fetcher owning its domain.

A transport carries one hop to one fetcher: GrpcTransport (here) for fetchers in other
processes, or fetcher.local.LocalTransport for the fetcher in this process (`spiderduck up`),
which skips gRPC's copies of every page (1.2 ms of CPU per 280 KB page, measured). Both raise
the same errors, handled here within the hop's deadline (`scheduler.hop_timeout`):
FetcherBusy (RESOURCE_EXHAUSTED: the domain's queue is full) backs off with jitter and
retries; WrongFetcher (FAILED_PRECONDITION: not the owner; UNAVAILABLE: the fetcher is gone)
waits for the shard's lease to change hands, then re-routes; a domain whose shard has no owner
waits for one. Past the deadline the hop raises FetcherUnavailable (retryable: the message is
redelivered later). The waits double from `scheduler.hop_backoff_base` up to `hop_backoff_max`
(hop_backoff). The scheduler also bounds the hops in flight per domain
(`scheduler.max_hops_per_domain`, and as many again waiting): past that a hop raises
DomainBusy and the consumer defers the message, so one slow domain never takes every
slot of the scheduler. With traces on (src/spiderduck/core/telemetry.py) each hop is a `fetch hop` span, and
the gRPC call's metadata carries its traceparent to the fetcher's `Fetch` span.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time

import grpc
from opentelemetry.trace import SpanKind

from spiderduck.wire import fetch_proto

from spiderduck.core import telemetry

from spiderduck.core import urls
from spiderduck.core.backoff import Backoff
from spiderduck.core.config import SchedulerSettings, TlsSettings
from spiderduck.core.errors import DomainBusy, FetcherBusy, FetcherUnavailable, WrongFetcher
from spiderduck.core.fetch import FetchResult
from spiderduck.core.freshness import Validators
from spiderduck.rpc.server import MAX_MESSAGE_BYTES
from spiderduck.rpc.tls import client_files, open_channel
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc

log = logging.getLogger("spiderduck.scheduler")

REROUTE = (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.UNAVAILABLE)


def hop_backoff(s: SchedulerSettings) -> Backoff:
    """scheduler.hop_backoff_base doubling up to hop_backoff_max; a busy fetcher's wait is drawn
    from half to one and a half of the step (a re-route waits the step itself, or less)."""
    return Backoff(s.hop_backoff_base, s.hop_backoff_max, jitter_from=0.5, jitter=1.0)


class KeyedLimit:
    """At most `limit` holders per key and `backlog` more waiting; past that, DomainBusy.

    A key's entry lives only while someone uses it."""

    def __init__(self, limit: int, backlog: int | None = None):
        self._limit = limit
        self._backlog = limit if backlog is None else backlog
        self._entries: dict[str, list] = {}     # key -> [users, semaphore]

    @contextlib.asynccontextmanager
    async def hold(self, key: str):
        entry = self._entries.setdefault(key, [0, asyncio.Semaphore(self._limit)])
        if entry[0] >= self._limit + self._backlog:
            raise DomainBusy(f"{entry[0]} hops of {key} already in flight or waiting here")
        entry[0] += 1
        try:
            async with entry[1]:
                yield
        finally:
            entry[0] -= 1
            if entry[0] == 0:
                del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)


class GrpcTransport:
    """FetcherService over gRPC: one channel per fetcher address; gRPC codes become our errors.
    With TLS, tls.cert, tls.key and tls.ca are looked at every tls.reload_interval seconds (when a
    hop is sent); once they changed and load, new channels are opened with them, and the old
    ones are closed when the longest hop timeout seen has passed (their calls end first)."""

    def __init__(self, tls: TlsSettings | None = None):
        self._tls = tls                 # config `tls`: TLS to the fetchers, this process's certificate
        self._files = client_files(tls) if tls is not None and tls.client_on else None
        self._looked = time.monotonic()
        self._longest = 0.0             # the longest hop timeout seen: a retired channel's grace
        self._stubs: dict[str, fetcher_pb2_grpc.FetcherServiceStub] = {}
        self._channels: list[grpc.aio.Channel] = []
        self._retiring: dict[asyncio.Task, grpc.aio.Channel] = {}   # closing once their calls end

    def _stub(self, address: str) -> fetcher_pb2_grpc.FetcherServiceStub:
        self._look_at_files()
        stub = self._stubs.get(address)
        if stub is None:
            channel = open_channel(address, self._tls, options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)],
                credentials=self._files.current if self._files is not None else None)
            self._channels.append(channel)
            stub = self._stubs[address] = fetcher_pb2_grpc.FetcherServiceStub(channel)
        return stub

    def _look_at_files(self) -> None:
        if self._files is None or time.monotonic() - self._looked < self._tls.reload_interval:
            return
        self._looked = time.monotonic()
        if self._files.refresh():
            for channel in self._channels:
                task = asyncio.ensure_future(channel.close(self._longest))
                self._retiring[task] = channel
                task.add_done_callback(self._retiring.pop)
            self._channels, self._stubs = [], {}

    async def fetch(self, address: str, url: str, *, purpose: str, max_body_bytes: int,
                    timeout: float, validators: Validators | None = None, render: bool = False,
                    range: str = "", profile: str = "", cookie: str = "") -> FetchResult:
        """One hop by the fetcher at `address`; `validators` travel as FetchRequest.if_none_match
        and .if_modified_since, `render` as FetchRequest.render, `range` as FetchRequest.range,
        `profile` and `cookie` as FetchRequest.profile and .cookie. Raises WrongFetcher, FetcherBusy,
        TimeoutError (no answer within `timeout`) or FetcherUnavailable (INVALID_ARGUMENT among
        others: an unknown profile, a cookie that cannot be sent)."""
        self._longest = max(self._longest, timeout)
        request = fetcher_pb2.FetchRequest(url=url, purpose=purpose, max_body_bytes=max_body_bytes,
                                           deadline_seconds=timeout, render=render, range=range,
                                           profile=profile, cookie=cookie)
        if validators:
            request.if_none_match = validators.if_none_match
            request.if_modified_since = validators.if_modified_since
        try:
            response = await self._stub(address).Fetch(request, timeout=timeout,
                                                       metadata=telemetry.grpc_metadata())
        except grpc.aio.AioRpcError as exc:
            code = exc.code()
            detail = f"{address}: {code.name}: {exc.details()}"
            if code in REROUTE:
                raise WrongFetcher(detail) from exc
            if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise FetcherBusy(detail) from exc
            if code is grpc.StatusCode.DEADLINE_EXCEEDED:
                raise TimeoutError(detail) from exc
            raise FetcherUnavailable(f"fetch {url}: {detail}") from exc
        return fetch_proto.from_proto(url, response)

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()
        for task, channel in list(self._retiring.items()):
            task.cancel()
            await channel.close()
        self._channels.clear()
        self._stubs.clear()


class FetcherClient:
    def __init__(self, router, *, hop_timeout: float, max_hops_per_domain: int,
                 backoff: Backoff, clock=time.monotonic, transport=None,
                 render_timeout: float = 0.0):
        self._router = router
        # render.timeout when render.enabled (else 0): a page hop asks the fetcher to render a
        # shell, and its deadline allows for it.
        self._render_timeout = render_timeout
        self._transport = transport or GrpcTransport()
        self._hop_timeout = hop_timeout
        self._backoff = backoff         # hop_backoff(settings.scheduler)
        self._clock = clock
        self._per_domain = KeyedLimit(max_hops_per_domain)
        self.reroutes = 0

    async def fetch(self, url: str, *, purpose: str = "page", max_body_bytes: int = 0,
                    timeout: float = 0.0, wait_if_busy: bool = True,
                    validators: Validators | None = None, range: str = "", profile: str = "",
                    cookie: str = "") -> FetchResult:
        """One hop through the fetcher owning the URL's domain.

        `purpose` ("page", "image", "oembed") labels it in the fetcher's metrics;
        `max_body_bytes` > 0 reads at most that much of the body; `timeout` > 0 shortens the
        hop's deadline (scheduler.hop_timeout). With `wait_if_busy` False a busy domain (its
        queue full, or its turn past the deadline) raises DomainBusy at once instead of
        backing off and trying again: for fetches that are worth little late. `validators`
        (a re-fetch of a stored page) make the hop conditional: the fetcher sends them as
        If-None-Match / If-Modified-Since, and a 304 comes back as the hop's answer. `range`
        ("bytes=START-END", spiderduck.core.byte_ranges) asks for a file's part (purpose "file").
        `profile` "browser" sends the hop as a person's browser (issue 43's second look; purpose
        "page", rendered as any page hop is), with `cookie` as its Cookie
        (src/spiderduck/fetcher/browser_profile.py); "" is our crawler."""
        domain = urls.registrable_domain(urls.host_of(url))
        limit = min(timeout, self._hop_timeout) if timeout > 0 else self._hop_timeout
        render = purpose == "page" and self._render_timeout > 0
        if render:
            limit += self._render_timeout
        async with self._per_domain.hold(domain):
            with telemetry.span("fetch hop", kind=SpanKind.CLIENT,
                                attributes={"url.full": url, "spiderduck.purpose": purpose}):
                return await self._fetch(url, domain, purpose, max_body_bytes, limit, wait_if_busy,
                                         validators, render, range, profile, cookie)

    async def _fetch(self, url: str, domain: str, purpose: str, max_body_bytes: int,
                     limit: float, wait_if_busy: bool, validators: Validators | None,
                     render: bool = False, range: str = "", profile: str = "",
                     cookie: str = "") -> FetchResult:
        shard = self._router.shard(domain)
        deadline = self._clock() + limit
        attempt = 0
        last = "no fetcher owns the domain's shard"
        while (remaining := deadline - self._clock()) > 0:
            address = self._router.route(domain)
            if address is None:
                await self._router.changed(shard, min(remaining, self._backoff.step(attempt)))
                attempt += 1
                continue
            try:
                return await self._transport.fetch(address, url, purpose=purpose, max_body_bytes=max_body_bytes,
                                                   timeout=remaining, validators=validators,
                                                   **({"render": True} if render else {}),
                                                   **({"range": range} if range else {}),
                                                   **({"profile": profile} if profile else {}),
                                                   **({"cookie": cookie} if cookie else {}))
            except WrongFetcher as exc:
                last = str(exc)
                self.reroutes += 1
                log.info("fetch %s: %s; re-routing", url, last)
                await self._router.changed(shard, min(deadline - self._clock(), self._backoff.step(attempt)))
            except FetcherBusy as exc:
                last = str(exc)
                if not wait_if_busy:
                    raise DomainBusy(f"fetch {url}: {last}") from exc
                await asyncio.sleep(min(max(0.0, deadline - self._clock()),
                                        self._backoff.delay(attempt, random.random())))
            except TimeoutError as exc:
                last = str(exc) or "deadline exceeded"
                break
            attempt += 1
        raise FetcherUnavailable(f"fetch {url}: no answer within {limit:g}s ({last})")

    async def close(self) -> None:
        await self._transport.close()
