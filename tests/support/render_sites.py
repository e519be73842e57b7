"""The sites tests/fetcher/test_render*.py render: an origin on 127.0.0.2 (the only address the
test's guard allows) serving shells and hostile pages, and a canary on 127.0.0.3 that counts every
hit (HTTP and WebSocket alike). Both count hits per path; the origin also the most requests of
/slow.js it had in flight at once."""
from __future__ import annotations

import asyncio
import collections
import contextlib

import pytest_asyncio
from aiohttp import web

from spiderduck.cli.nats_server import free_port

ORIGIN_HOST, CANARY_HOST = "127.0.0.2", "127.0.0.3"
SLOW_SECONDS = 0.6


def _page(head: str, body: str) -> str:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"


APP_JS = """
fetch('/data.json').then(r => r.json()).then(d => {
  document.title = d.title;
  const meta = document.createElement('meta');
  meta.setAttribute('property', 'og:title'); meta.setAttribute('content', d.title);
  document.head.appendChild(meta);
  const image = document.createElement('meta');
  image.setAttribute('property', 'og:image'); image.setAttribute('content', d.image);
  document.head.appendChild(image);
  document.getElementById('root').textContent = d.text;
});
"""

CANARY_JS = """
const c = '{canary}';
fetch(c + '/fetch').catch(() => {{}});
const img = new Image(); img.src = c + '/img.png'; document.body.appendChild(img);
const s = document.createElement('script'); s.src = c + '/script.js'; document.head.appendChild(s);
const f = document.createElement('iframe'); f.src = c + '/frame'; document.body.appendChild(f);
try {{ new WebSocket('{ws}/ws'); }} catch (e) {{}}
try {{ navigator.sendBeacon(c + '/beacon', 'x'); }} catch (e) {{}}
fetch('/redirect').catch(() => {{}});
const r = document.createElement('script'); r.src = '/redirect?script'; document.head.appendChild(r);
fetch(c + '/post', {{method: 'POST', body: 'x'}}).catch(() => {{}});
document.title = 'canary page';
"""

PAGES = {
    "/shell": _page("", "<div id=root></div><script src=/app.js></script>"),
    "/media": _page("<style>@font-face { font-family: F; src: url(/font.woff2); } "
                    "body { font-family: F; background: url(/bg.png); }</style>"
                    "<link rel=icon href=/favicon.ico>",
                    "<img src=/img.png><video src=/video.mp4 autoplay></video>"
                    "<audio src=/audio.mp3 autoplay></audio><picture><source srcset=/pic.webp>"
                    "<img src=/pic.jpg></picture><p>text</p>"
                    "<script>document.title = 'media page';</script>"),
    "/loop": _page("<title>loop</title>", "<script>while (true) {}</script>"),
    "/late-loop": _page("<title>late loop</title>",
                        "<script>onload = () => setTimeout(() => { while (true) {} }, 0);</script>"),
    "/popups": _page("<title>popups</title>",
                     "<a id=a href=/popup?link target=_blank>x</a><script>"
                     "for (let i = 0; i < 30; i++) window.open('/popup?' + i);"
                     "window.open('/popup?noopener', '_blank', 'noopener');"
                     "document.getElementById('a').click(); alert('hi'); confirm('sure?');"
                     "document.title = 'popups done';</script>"),
    "/download": _page("<title>download</title>",
                       "<a id=a href=/file.bin download>x</a><script>"
                       "document.getElementById('a').click();"
                       "setTimeout(() => { location.href = '/file.bin'; }, 50);</script>"),
    "/slow-page": _page("<title>slow</title>", "<script src=/slow.js></script>"),
}


class Sites:
    """Both servers; `origin(path)` and `canary_hits` for the test."""

    def __init__(self):
        self.origin_port = free_port(ORIGIN_HOST)
        self.canary_port = free_port(CANARY_HOST)
        self.hits: collections.Counter[str] = collections.Counter()      # origin path -> hits
        self.canary_hits: collections.Counter[str] = collections.Counter()
        self.in_flight = 0
        self.most_in_flight = 0
        self._runners: list[web.AppRunner] = []

    def origin(self, path: str) -> str:
        return f"http://{ORIGIN_HOST}:{self.origin_port}{path}"

    @property
    def canary(self) -> str:
        return f"http://{CANARY_HOST}:{self.canary_port}"

    def page(self, path: str) -> bytes:
        return PAGES[path].encode()

    async def __aenter__(self) -> "Sites":
        origin = web.Application()
        origin.router.add_route("*", "/{tail:.*}", self._origin)
        canary = web.Application()
        canary.router.add_route("*", "/{tail:.*}", self._canary)
        for app, host, port in ((origin, ORIGIN_HOST, self.origin_port),
                                (canary, CANARY_HOST, self.canary_port)):
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, host, port).start()
            self._runners.append(runner)
        return self

    async def __aexit__(self, *exc) -> None:
        for runner in self._runners:
            await runner.cleanup()

    async def _canary(self, request: web.Request) -> web.StreamResponse:
        self.canary_hits[request.path] += 1
        return web.Response(text="canary", content_type="text/plain")

    async def _origin(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        self.hits[path] += 1
        if path in PAGES:
            return web.Response(text=PAGES[path], content_type="text/html")
        if path == "/app.js":
            return web.Response(text=APP_JS, content_type="application/javascript")
        if path == "/data.json":
            return web.json_response({"title": "Rendered Title", "text": "Hello from JavaScript",
                                      "image": self.origin("/card.png")})
        if path == "/canary":
            ws = self.canary.replace("http://", "ws://")
            script = CANARY_JS.format(canary=self.canary, ws=ws)
            return web.Response(text=_page("", f"<script>{script}</script>"), content_type="text/html")
        if path == "/redirect":
            raise web.HTTPFound(self.canary + "/redirected" + ("-script" if request.query_string else ""))
        if path == "/file.bin":
            return web.Response(body=b"\0" * 1024, content_type="application/octet-stream",
                                headers={"Content-Disposition": "attachment; filename=file.bin"})
        if path == "/slow.js":
            return await self._slow()
        return web.Response(status=404, text="not here")

    async def slow_render_in_flight(self, renderer) -> asyncio.Task:
        """A render of /slow-page started on `renderer`, once the page waits for /slow.js (within
        5 s); the render's task."""
        task = asyncio.create_task(renderer.render(self.origin("/slow-page"), self.page("/slow-page"),
                                                   [("Content-Type", "text/html")]))
        async with asyncio.timeout(5):
            while self.in_flight == 0:
                await asyncio.sleep(0.02)
        return task

    async def _slow(self) -> web.Response:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(SLOW_SECONDS)
        finally:
            self.in_flight -= 1
        return web.Response(text="document.title = 'slow done';", content_type="application/javascript")


@contextlib.asynccontextmanager
async def sites():
    async with Sites() as running:
        yield running


@contextlib.asynccontextmanager
async def guarded_fetch():
    """The SubFetch of the tests: a real HttpClient whose guard allows the origin's address only
    (127.0.0.2/32), never following redirects; yields (fetch, the URLs it was asked for)."""
    from spiderduck.core.config import FetcherSettings
    from spiderduck.fetcher.guard import AddressGuard
    from spiderduck.fetcher.http import HttpClient, Limits
    from spiderduck.fetcher.resolver import GuardedResolver

    guard = AddressGuard(allowed_networks=[f"{ORIGIN_HOST}/32"])
    asked: list[str] = []
    async with HttpClient(user_agent=USER_AGENT, guard=guard, resolver=GuardedResolver(guard),
                          limits=Limits(FetcherSettings().max_body_bytes, connect_timeout=2.0, total_timeout=5.0)) as http:
        async def fetch(url: str):
            asked.append(url)
            return await http.get(url, accept="*/*")
        yield fetch, asked


USER_AGENT = "SpiderDuckTest/1.0 (render)"


# The module-scoped fixtures of both test files (imported there by name).

@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site():
    async with sites() as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def fetch():
    """(SubFetch, the URLs it was asked for)."""
    async with guarded_fetch() as pair:
        yield pair
