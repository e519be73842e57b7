"""FetcherClient's policy over any transport: re-route, back off, give up at the deadline."""
from __future__ import annotations

import asyncio

import pytest

from common.config import SchedulerSettings
from common.errors import DomainBusy, FetcherBusy, FetcherUnavailable, WrongFetcher
from common.fetch import FetchResult
from common.status import Status
from scheduler.fetcher_client import FetcherClient
from scheduler.routing import StaticRouter


class Scripted:
    """A transport answering from a script: an exception to raise, or 'ok'."""

    def __init__(self, *script):
        self.script = list(script)
        self.calls: list[tuple[str, str, float]] = []

    async def fetch(self, address, url, *, purpose, max_body_bytes, timeout):
        self.calls.append((address, url, timeout))
        step = self.script.pop(0) if self.script else "ok"
        if isinstance(step, BaseException):
            raise step
        return FetchResult(url=url, status=Status.OK, http_status=200)

    async def close(self):
        pass


class Router(StaticRouter):
    """Routes to a list of owners in turn: the next one after every lease change."""

    def __init__(self, owners):
        super().__init__(["unused"], 16)
        self.owners = list(owners)
        self.changes = 0

    def route(self, domain):
        return self.owners[min(self.changes, len(self.owners) - 1)]

    async def changed(self, shard, timeout):
        self.changes += 1


def client(transport, router=None, **kw):
    kw.setdefault("max_hops_per_domain", SchedulerSettings().max_hops_per_domain)
    return FetcherClient(router or Router(["f1"]), hop_timeout=kw.pop("hop_timeout", 5.0),
                         backoff=0.01, max_backoff=0.02, transport=transport, **kw)


async def test_wrong_fetcher_reroutes_to_the_new_owner():
    transport = Scripted(WrongFetcher("f1 gave up the shard"))
    router = Router(["f1", "f2"])
    c = client(transport, router)
    result = await c.fetch("http://a.test/")
    assert result.status is Status.OK
    assert [call[0] for call in transport.calls] == ["f1", "f2"] and c.reroutes == 1


async def test_busy_is_retried_after_a_back_off():
    transport = Scripted(FetcherBusy("full"), FetcherBusy("full"))
    result = await client(transport).fetch("http://a.test/")
    assert result.status is Status.OK and len(transport.calls) == 3


async def test_busy_without_waiting_is_domain_busy_at_once():
    transport = Scripted(FetcherBusy("full"))
    with pytest.raises(DomainBusy):
        await client(transport).fetch("http://a.test/", wait_if_busy=False)
    assert len(transport.calls) == 1


async def test_a_timeout_ends_the_hop_as_fetcher_unavailable():
    transport = Scripted(TimeoutError("deadline"))
    with pytest.raises(FetcherUnavailable) as err:
        await client(transport).fetch("http://a.test/")
    assert err.value.retryable and len(transport.calls) == 1


async def test_the_hop_gets_what_is_left_of_its_deadline():
    transport = Scripted()
    await client(transport, hop_timeout=5.0).fetch("http://a.test/", timeout=2.0)
    [(_, _, timeout)] = transport.calls
    assert 1.5 < timeout <= 2.0


async def test_busy_until_the_deadline_gives_up():
    transport = Scripted(*[FetcherBusy("full")] * 1000)
    with pytest.raises(FetcherUnavailable) as err:
        await asyncio.wait_for(client(transport, hop_timeout=0.2).fetch("http://a.test/"), 2)
    assert "full" in str(err.value)
