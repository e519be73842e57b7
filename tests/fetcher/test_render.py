"""src/spiderduck/fetcher/render in Debian's headless Chromium (issue 31): a shell renders to its full document,
every request the page makes goes through the fetcher's guard (a canary off the guard's allowed
network sees nothing), media is never fetched, and hostile pages cost at most the timeout.

One renderer (and browser) is shared by the module; the sites are real aiohttp servers on
loopback (tests/support/render_sites.py)."""
from __future__ import annotations

import asyncio
import time

import pytest
import pytest_asyncio
from prometheus_client import REGISTRY

from spiderduck.core.settings import RenderSettings
from spiderduck.fetcher.render import MAX_SUBREQUESTS, Rendered, Renderer
from support.browser import CHROMIUM
from support.render_sites import USER_AGENT, fetch, site  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.skipif(not CHROMIUM, reason="Debian's chromium is not installed "
                                                       "(bin/test installs it)")]

TIMEOUT = 4.0        # a busy CI machine (two test workers and Chromium on two cores) took 2 s for a page
MARGIN = 2.5        # past the timeout: the context disposed, the answer handed back


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def renderer(fetch):
    settings = RenderSettings(enabled=True, timeout=TIMEOUT, max_concurrent=2)
    async with Renderer(settings, fetch[0], user_agent=USER_AGENT) as running:
        yield running


async def render(renderer: Renderer, site, path: str, fetch=None) -> Rendered:
    """The page's static answer (fetched as the fetcher would, when `fetch` is given), rendered."""
    if fetch is None:
        return await renderer.render(site.origin(path), site.page(path),
                                     [("Content-Type", "text/html; charset=utf-8")])
    get, asked = fetch
    static = await get(site.origin(path))
    asked.clear()
    return await renderer.render(static.url, static.body, static.headers, static.http_status)


async def test_a_shell_renders_to_the_document_its_script_builds(renderer, site):
    rendered = await render(renderer, site, "/shell")
    assert rendered.outcome == "ok", rendered
    assert "<title>Rendered Title</title>" in rendered.html
    assert '<meta property="og:title" content="Rendered Title">' in rendered.html
    assert f'<meta property="og:image" content="{site.origin("/card.png")}">' in rendered.html
    assert '<div id="root">Hello from JavaScript</div>' in rendered.html
    assert rendered.requests == 2       # app.js, data.json (the favicon is blocked)
    assert site.hits["/shell"] == 0                             # the static answer was given
    assert rendered.seconds > 0


async def test_nothing_the_page_asks_for_reaches_past_the_guard(renderer, site, fetch):
    """fetch(), an image, a script, an iframe, a WebSocket, a beacon, a POST and two redirects on
    the origin, all aimed at a canary on 127.0.0.3: the guard allows 127.0.0.2 only, the dead
    proxy takes what interception does not see (the WebSocket), and a 3xx's Location is asked
    for through the guard again."""
    _, asked = fetch
    asked.clear()
    rendered = await render(renderer, site, "/canary", fetch)
    assert rendered.outcome == "ok", rendered
    assert "<title>canary page</title>" in rendered.html
    assert site.hits["/redirect"] == 2 and site.hits["/canary"] == 1     # the static fetch
    assert f"{site.canary}/redirected" in asked and f"{site.canary}/redirected-script" in asked
    assert f"{site.canary}/fetch" in asked and f"{site.canary}/frame" in asked
    assert rendered.requests == 2 and rendered.blocked >= 7
    assert sum(site.canary_hits.values()) == 0, site.canary_hits


async def test_images_fonts_and_media_are_never_requested(renderer, site, fetch):
    _, asked = fetch
    rendered = await render(renderer, site, "/media", fetch)
    assert rendered.outcome == "ok", rendered
    assert "<title>media page</title>" in rendered.html
    for path in ("/img.png", "/video.mp4", "/audio.mp3", "/font.woff2", "/bg.png", "/pic.webp",
                 "/pic.jpg", "/favicon.ico"):
        assert site.hits[path] == 0, path
    assert asked == [] and rendered.requests == 0


async def test_a_page_that_never_ends_costs_the_timeout_and_nothing_after(renderer, site):
    """/loop never fires its load event; /late-loop does, then keeps its renderer busy for good,
    so the outerHTML asked for is never answered."""
    for path in ("/loop", "/late-loop"):
        started = time.monotonic()
        rendered = await render(renderer, site, path)
        assert rendered.outcome == "timeout" and rendered.html == "", path
        assert TIMEOUT <= time.monotonic() - started < TIMEOUT + MARGIN, path
    assert (await render(renderer, site, "/shell")).outcome == "ok"


async def test_popups_are_closed_and_dialogs_dismissed(renderer, site):
    started = time.monotonic()
    rendered = await render(renderer, site, "/popups")
    assert time.monotonic() - started < TIMEOUT + MARGIN
    assert rendered.outcome == "ok", rendered
    assert "<title>popups done</title>" in rendered.html     # past alert() and confirm()
    assert site.hits["/popup"] == 0
    browser = renderer._browser
    targets = await browser.cdp.send("Target.getTargets", timeout=5)
    assert [t for t in targets["targetInfos"] if t["type"] == "page" and t["url"] != "about:blank"] == []


async def test_a_download_or_a_redirect_away_leaves_the_page_where_it_is(renderer, site):
    """An <a download> clicked and `location.href` set: neither is fetched, the page stays."""
    rendered = await render(renderer, site, "/download")
    assert rendered.outcome == "ok", rendered
    assert "<title>download</title>" in rendered.html and site.hits["/file.bin"] == 0
    assert (await render(renderer, site, "/shell")).outcome == "ok"


async def test_requests_past_the_cap_are_failed(renderer, site, fetch):
    extra = 10
    script = "".join(f"fetch('/data.json?{i}').catch(() => {{}});" for i in range(MAX_SUBREQUESTS + extra))
    body = f"<title>many</title><script>{script}</script>".encode()
    rendered = await renderer.render(site.origin("/many"), body, [("Content-Type", "text/html")])
    assert rendered.outcome == "ok", rendered
    assert rendered.requests == MAX_SUBREQUESTS
    assert extra <= rendered.blocked <= extra + 1       # and the favicon


async def test_a_closed_renderer_refuses_and_each_outcome_is_counted(fetch, site):
    def refused() -> float:
        return REGISTRY.get_sample_value("spiderduck_renders_total", {"outcome": "refused"}) or 0

    before = refused()
    settings = RenderSettings(enabled=True, timeout=TIMEOUT)
    renderer = Renderer(settings, fetch[0], user_agent=USER_AGENT)
    assert (await render(renderer, site, "/shell")).outcome == "refused"
    async with renderer:
        pass
    assert (await render(renderer, site, "/shell")).outcome == "refused"
    assert refused() == before + 2

