"""fetcher.accept_language in a rendered page: the headless browser is given it (its requests'
header, and navigator.languages for the page's scripts), and the requests it makes, fetched by
Fetcher.subresource, carry it to the origin, as the page's own request does. Debian's chromium
renders the page (skipped without it); the origin is a real aiohttp server on loopback."""
from __future__ import annotations

import pytest
from aiohttp import web

from spiderduck.core.settings import RenderSettings
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.ownership import AllShards
from spiderduck.fetcher.render import Renderer
from spiderduck.fetcher.render.renderer import browser_languages
from support.browser import CHROMIUM
from support.fetcher_settings import local_settings

LANGUAGES = "de-DE,de;q=0.9,en;q=0.5"
SHELL = '<!doctype html><html><head></head><body><div id="root"></div><script src="/app.js"></script></body></html>'
# The page's script: the languages it sees, and the data it asks for, into the document.
APP = """fetch('/data').then(r => r.text()).then(data => {
  document.title = navigator.languages.join(' ');
  document.getElementById('root').textContent = 'data: ' + data;
});"""


class Origin:
    """A site that records the Accept-Language of every request, by path."""

    def __init__(self, localweb, host: str):
        self.sent: list[tuple[str, str | None]] = []
        bodies = {"/robots.txt": ("User-agent: *\nAllow: /\n", "text/plain"), "/": (SHELL, "text/html"),
                  "/app.js": (APP, "application/javascript"), "/data": ("seen", "text/plain")}

        async def answer(request):
            self.sent.append((request.path, request.headers.get("Accept-Language")))
            body, content_type = bodies[request.path]
            return web.Response(text=body, content_type=content_type)
        self.url = {path: localweb.route(host, path, answer) for path in bodies}


async def test_a_subresource_request_carries_it(localweb):
    origin = Origin(localweb, "sub.test")
    async with Fetcher(local_settings(**{"fetcher.accept_language": LANGUAGES}), ownership=AllShards()) as f:
        assert (await f.subresource(origin.url["/data"])).http_status == 200
    assert origin.sent == [("/robots.txt", None), ("/data", LANGUAGES)]


@pytest.mark.skipif(not CHROMIUM, reason="Debian's chromium is not installed (bin/test installs it)")
async def test_the_rendered_page_and_its_requests_have_it(localweb):
    origin = Origin(localweb, "shell.test")
    settings = local_settings(**{"fetcher.accept_language": LANGUAGES})

    def renderer(fetch):
        return Renderer(RenderSettings(enabled=True, timeout=8.0), fetch, user_agent=settings.user_agent,
                        accept_language=settings.accept_language)
    async with Fetcher(settings, ownership=AllShards(), renderer=renderer) as f:
        result = await f.fetch(origin.url["/"], render=True)
    assert result.render_outcome == "ok", result
    html = result.rendered.decode()
    assert "<title>de-DE de en</title>" in html and "data: seen" in html
    assert origin.sent == [("/robots.txt", None), ("/", LANGUAGES), ("/app.js", LANGUAGES), ("/data", LANGUAGES)]


@pytest.mark.parametrize("header, languages", [
    ("de-DE,de;q=0.9,en;q=0.5", "de-DE,de,en"), ("en;q=0.5, fr", "fr,en"),
    ("de, *;q=0.1, x-klingon;q=0", "de"), ("", ""), ("*", "")])
def test_the_browser_gets_the_tags_most_wanted_first(header, languages):
    assert browser_languages(header) == languages
