"""The in-process transport of `spiderduck up`: a real Fetcher against a local web, with the
gRPC adapter's meaning for every refusal."""
from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from spiderduck.core.errors import FetcherBusy, WrongFetcher
from spiderduck.core.freshness import Validators
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.local import LocalTransport
from spiderduck.fetcher.ownership import AllShards
from support.fetcher_settings import local_settings as settings

ADDRESS = "127.0.0.1:50052"


class Elsewhere:
    """The fallback transport: records the hops sent to other addresses."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []
        self.validators: list[Validators | None] = []
        self.closed = False

    async def fetch(self, address, url, *, purpose, max_body_bytes, timeout, validators=None):
        self.calls.append((address, url))
        self.validators.append(validators)
        return "from elsewhere"

    async def close(self):
        self.closed = True


async def transport_for(fetcher: Fetcher, fallback=None) -> LocalTransport:
    ready = asyncio.get_running_loop().create_future()
    ready.set_result(fetcher)
    return LocalTransport(ADDRESS, ready, fallback or Elsewhere())


async def test_a_hop_is_fetched_by_the_fetcher_in_this_process(localweb):
    url = localweb.page("a.test", "/page", "<title>here</title>")
    async with Fetcher(settings(), ownership=AllShards()) as fetcher:
        transport = await transport_for(fetcher)
        result = await transport.fetch(ADDRESS, url, purpose="page", max_body_bytes=5, timeout=10)
    assert (result.status, result.http_status, result.body, result.truncated) == (Status.OK, 200, b"<titl", True)
    assert result.url == url
    assert len(localweb.hits_for("a.test", "/page")) == 1


async def test_the_url_keeps_the_form_it_was_asked_in(localweb):
    localweb.page("a.test", "/page", "<title>here</title>")
    asked = f"HTTP://A.test:{localweb.port}/page"
    async with Fetcher(settings(), ownership=AllShards()) as fetcher:
        result = await (await transport_for(fetcher)).fetch(ADDRESS, asked, purpose="page",
                                                            max_body_bytes=0, timeout=10)
    assert result.status is Status.OK and result.url == asked


async def test_another_address_goes_to_the_fallback():
    elsewhere = Elsewhere()
    async with Fetcher(settings(), ownership=AllShards()) as fetcher:
        transport = await transport_for(fetcher, elsewhere)
        assert await transport.fetch("10.0.0.9:50052", "http://b.test/", purpose="page",
                                     max_body_bytes=0, timeout=1) == "from elsewhere"
        await transport.close()
    assert elsewhere.calls == [("10.0.0.9:50052", "http://b.test/")] and elsewhere.closed


async def test_a_shard_not_held_is_wrong_fetcher():
    class NoShards:
        def owns(self, domain):
            return False

    async with Fetcher(settings(), ownership=NoShards()) as fetcher:
        with pytest.raises(WrongFetcher):
            await (await transport_for(fetcher)).fetch(ADDRESS, "http://c.test/", purpose="page",
                                                       max_body_bytes=0, timeout=5)


async def test_a_turn_past_the_deadline_is_fetcher_busy(localweb):
    for n in range(2):
        localweb.page("slow.test", f"/{n}", "<title>x</title>")
    async with Fetcher(settings(**{"fetcher.rate_overrides": {"slow.test": 0.5}}),
                       ownership=AllShards()) as fetcher:
        transport = await transport_for(fetcher)
        first = await transport.fetch(ADDRESS, localweb.url("slow.test", "/0"), purpose="page",
                                      max_body_bytes=0, timeout=10)
        assert first.status is Status.OK
        # The next turn is 2 s away, past a 1 s deadline: refused at once, as RESOURCE_EXHAUSTED is.
        with pytest.raises(FetcherBusy):
            await asyncio.wait_for(transport.fetch(ADDRESS, localweb.url("slow.test", "/1"),
                                                   purpose="page", max_body_bytes=0, timeout=1), 0.5)


async def test_a_hop_that_outlives_its_deadline_is_a_timeout(localweb):
    gate = asyncio.Event()

    async def hang(request):
        await gate.wait()

    localweb.route("hang.test", "/", hang)
    async with Fetcher(settings(), ownership=AllShards()) as fetcher:
        transport = await transport_for(fetcher)
        with pytest.raises(TimeoutError):
            await transport.fetch(ADDRESS, localweb.url("hang.test", "/"), purpose="page",
                                  max_body_bytes=0, timeout=0.5)
        gate.set()


async def test_a_fetcher_not_open_yet_is_waited_for_within_the_deadline():
    never = asyncio.get_running_loop().create_future()
    transport = LocalTransport(ADDRESS, never, Elsewhere())
    with pytest.raises(TimeoutError):
        await transport.fetch(ADDRESS, "http://d.test/", purpose="page", max_body_bytes=0, timeout=0.2)
    assert not never.cancelled()       # still there for the next hop


async def test_validators_reach_the_origin_and_the_fallback(localweb):
    etag, since = '"r2"', "Sun, 06 Nov 1994 08:49:37 GMT"
    seen: list[tuple[str | None, str | None]] = []

    async def page(request):
        seen.append((request.headers.get("If-None-Match"), request.headers.get("If-Modified-Since")))
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(text="<title>r2</title>", content_type="text/html", headers={"ETag": etag})

    url = localweb.route("v.test", "/page", page)
    validators = Validators(etag, since)
    elsewhere = Elsewhere()
    async with Fetcher(settings(), ownership=AllShards()) as fetcher:
        transport = await transport_for(fetcher, elsewhere)
        conditional = await transport.fetch(ADDRESS, url, purpose="page", max_body_bytes=0, timeout=10,
                                            validators=validators)
        plain = await transport.fetch(ADDRESS, url, purpose="page", max_body_bytes=0, timeout=10)
        await transport.fetch("10.0.0.9:50052", url, purpose="page", max_body_bytes=0, timeout=1,
                              validators=validators)
        await transport.fetch("10.0.0.9:50052", url, purpose="page", max_body_bytes=0, timeout=1)
    assert (conditional.status, conditional.http_status, conditional.header("etag")) == (Status.OK, 304, etag)
    assert plain.http_status == 200
    assert seen == [(etag, since), (None, None)]
    assert elsewhere.validators == [validators, None]
