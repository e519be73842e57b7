"""The requests a page makes while rendered (issue 31): Fetcher.subresource, the SubFetch the
fetcher gives its renderer. Each passes the address guard; on a domain this fetcher owns it takes
a turn on the domain's politeness slot, elsewhere on a local bucket at render.subresource_rate
(a fake clock shows the spacing; the other controls: test_render_request_controls.py); a halted
domain, a busy one and a URL that is none answer with a failed result, never an exception. And
the decision: only a whole 200 HTML shell is rendered."""
from __future__ import annotations

import pytest

from spiderduck.core.config import FetcherSettings
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher, politeness_for
from spiderduck.fetcher.render_hop import wants_render
from spiderduck.fetcher.subresource_pace import LocalBuckets
from support.clock import FakeClock

SHELL = b'<!doctype html><html><head></head><body><div id="root"></div><script src="/app.js"></script></body></html>'


class OwnsOne:
    def owns(self, domain: str) -> bool:
        return domain == "own.test"


@pytest.fixture
async def fetcher(localweb):
    for host in ("own.test", "cdn.test"):
        localweb.page(host, "/a.js", "1", content_type="application/javascript")
        localweb.page(host, "/b.js", "2", content_type="application/javascript")
    clock = FakeClock()
    settings = FetcherSettings(allowed_networks=["127.0.0.1/32"],
                               dns_overrides={"*.test": "127.0.0.1", "private.test": "10.1.2.3"})
    async with Fetcher(settings, ownership=OwnsOne(),
                       politeness=politeness_for(FetcherSettings(default_rate=0.5), clock=clock, sleep=clock.sleep),
                       buckets=LocalBuckets(4.0, clock=clock, sleep=clock.sleep)) as f:
        yield f, clock, localweb


async def test_requests_on_an_owned_domain_take_turns_at_its_rate_and_others_at_the_local_one(fetcher):
    f, clock, web = fetcher
    starts = []
    for path in ("/a.js", "/b.js"):
        result = await f.subresource(web.url("own.test", path))
        assert (result.status, result.http_status) == (Status.OK, 200)
        starts.append(clock.now)
    assert starts[1] - starts[0] >= 2.0                     # 1 / 0.5 requests a second
    starts = []
    for path in ("/a.js", "/b.js"):                          # a CDN's domain: another fetcher owns it
        assert (await f.subresource(web.url("cdn.test", path))).http_status == 200
        starts.append(clock.now)
    assert starts[1] - starts[0] == pytest.approx(0.25)     # 1 / render.subresource_rate
    for host in ("own.test", "cdn.test"):                    # and each robots.txt, read first
        assert [h.path for h in web.hits_for(host)] == ["/robots.txt", "/a.js", "/b.js"]


async def test_the_guard_refuses_and_failures_are_results(fetcher):
    f, clock, web = fetcher
    refused = await f.subresource("http://private.test/x.js")
    assert refused.status is Status.BLOCKED_ADDRESS
    assert (await f.subresource("not a url")).status is Status.INVALID_URL
    f.politeness.slot("own.test").halt("operator")
    halted = await f.subresource(web.url("own.test", "/a.js"))
    assert halted.status is Status.CONNECTION_ERROR and not web.hits_for("own.test")


def answer(body: bytes = SHELL, status: int = 200, content_type: str = "text/html; charset=utf-8",
           truncated: bool = False) -> FetchResult:
    return FetchResult("http://own.test/", Status.OK, status, (("Content-Type", content_type),), body,
                       truncated=truncated)


def test_only_a_whole_200_html_shell_is_rendered():
    assert wants_render(answer())
    assert not wants_render(answer(status=404))
    assert not wants_render(answer(content_type="application/json"))
    assert not wants_render(answer(truncated=True))                  # read in part: its text may follow
    assert not wants_render(answer(SHELL.replace(b"<head>", b'<head><title>T</title>'
                                                b'<meta property="og:title" content="T">')))
