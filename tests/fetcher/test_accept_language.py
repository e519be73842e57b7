"""fetcher.accept_language: sent on page requests (every hop of a chain), not on robots.txt, an
image's probe or an oEmbed document; configurable, '' for none; a value that is not an
Accept-Language header refused at load."""
from __future__ import annotations

import pytest
from aiohttp import web

from spiderduck.core.errors import ConfigError
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from support.fetcher_settings import local_settings as settings


class Origin:
    """A site that records the Accept-Language of every request, by path."""

    def __init__(self, localweb, host: str):
        self.sent: list[tuple[str, str | None]] = []

        async def answer(request):
            self.sent.append((request.path, request.headers.get("Accept-Language")))
            if request.path == "/robots.txt":
                return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")
            if request.path == "/old":
                return web.Response(status=301, headers={"Location": f"http://{host}/page"})
            return web.Response(text="<title>t</title>", content_type="text/html")
        self.url = {path: localweb.route(host, path, answer)
                    for path in ("/robots.txt", "/old", "/page", "/i.png", "/oembed")}


async def test_page_requests_carry_it_and_nothing_else_does(localweb):
    origin = Origin(localweb, "lang.test")
    async with Fetcher(settings(), ownership=AllShards()) as f:
        first = await f.fetch(origin.url["/old"], purpose="page")      # a hop that redirects
        second = await f.fetch(origin.url["/page"])                      # the next hop ("": a page)
        assert first.http_status == 301 and second.http_status == 200
        await f.fetch(origin.url["/i.png"], purpose="image", max_body_bytes=512)
        await f.fetch(origin.url["/oembed"], purpose="oembed")
    assert origin.sent == [("/robots.txt", None), ("/old", "en-US,en;q=0.9"),
                           ("/page", "en-US,en;q=0.9"), ("/i.png", None), ("/oembed", None)]


@pytest.mark.parametrize("value, sent", [("de-DE,de;q=0.9,*;q=0.1", "de-DE,de;q=0.9,*;q=0.1"),
                                         ("", None)])
async def test_it_is_configurable_and_empty_sends_none(localweb, value, sent):
    origin = Origin(localweb, f"lang{len(value)}.test")
    async with Fetcher(settings(**{"fetcher.accept_language": value}), ownership=AllShards()) as f:
        await f.fetch(origin.url["/page"])
    assert origin.sent[-1] == ("/page", sent)


@pytest.mark.parametrize("value", ["en\r\nX-Injected: yes", "en;q=2", "en-US" + ",en" * 100,
                                   "français", "en;q=0.5;q=0.4"])
def test_a_value_that_is_not_an_accept_language_header_is_refused(value):
    with pytest.raises(ConfigError, match="fetcher.accept_language"):
        settings(**{"fetcher.accept_language": value})


def test_a_user_agent_with_a_line_break_is_refused():
    with pytest.raises(ConfigError, match="fetcher.user_agent"):
        settings(**{"fetcher.user_agent": "SpiderDuck/1\r\nX-Injected: yes"})
