"""The web UI as a person sees it, in Debian's headless chromium against the whole service.

Each test takes screenshots and DOM dumps (tests/support/browser.py) and asserts what the page
shows: the rendered text, the image actually loaded, what a click does. The crawled sites are
aiohttp on loopback; `.test` names resolve to it in the fetcher and in the browser alike."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from spiderduck.cli.nats_server import free_port
from support.browser import Browser, skip_without_chromium
from support.service import Client, RunningService, service_settings, wait_port

TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    skip_without_chromium()
    b = Browser(str(tmp_path_factory.mktemp("screens")))
    yield b
    b.quit()


def png(width: int, height: int, color=(29, 111, 165)) -> bytes:
    out = io.BytesIO()
    shade = Image.linear_gradient("L").resize((width, height))     # the colour, fading to amber
    Image.composite(Image.new("RGB", (width, height), color),
                    Image.new("RGB", (width, height), (240, 180, 60)), shade).save(out, "PNG")
    return out.getvalue()


class Service:
    def __init__(self, tmp_path, nats_url: str, **overrides):
        self.web = f"127.0.0.1:{free_port()}"
        self.settings = service_settings(tmp_path, nats_url, **{"web.listen": self.web, **overrides})

    def url(self, path: str) -> str:
        return f"http://{self.web}{path}"

    async def __aenter__(self):
        self._service = RunningService(self.settings)
        await self._service.__aenter__()
        self.client = await Client(self.settings).__aenter__()
        await wait_port(self.web)
        return self

    async def __aexit__(self, *exc):
        await self.client.__aexit__(*exc)
        await self._service.__aexit__(*exc)


def article_sites(localweb) -> str:
    """a.test -301-> b.test -302-> c.test/article, a page with an image, a favicon and a site."""
    image = localweb.page("c.test", "/cover.png", png(600, 300), content_type="image/png")
    localweb.page("c.test", "/favicon.ico", png(16, 16, (200, 60, 40)), content_type="image/png")
    final = localweb.page("c.test", "/article", f"""<html lang="en"><head>
        <title>Ducks resolve links</title>
        <meta property="og:title" content="Ducks resolve every link">
        <meta property="og:description" content="How a crawler follows redirects politely.">
        <meta property="og:site_name" content="The Pond Gazette">
        <meta property="og:image" content="{image}">
        <link rel="icon" href="/favicon.ico"></head><body><p>text</p></body></html>""")
    localweb.redirect("b.test", "/go", final, status=302)
    return localweb.redirect("a.test", "/s", localweb.url("b.test", "/go"), status=301)


async def test_the_card_of_a_crawled_url_with_a_two_hop_redirect_chain(tmp_path, nats_server, localweb, browser):
    start = article_sites(localweb)
    async with Service(tmp_path, nats_server.url) as svc:
        await svc.client.submit_url(start)
        await svc.client.events.wait_for(1, timeout=30)
        await browser.open(svc.url(f"/url?u={start}"))
        shot = await browser.capture("card")

        assert await browser.text(".card-title") == "Ducks resolve every link"
        assert await browser.text(".card-description") == "How a crawler follows redirects politely."
        assert await browser.text(".card-site") == "The Pond Gazette"
        # The image and the favicon really loaded, from the record's URLs, under the page's CSP.
        sizes = await browser.script(
            "return [...document.querySelectorAll('.card img')].map(i => [i.className, i.naturalWidth])")
        assert sorted(sizes) == [["card-image", 600], ["favicon", 16]]
        chain = await browser.texts("#chain li")
        assert chain == [f"301 {start}", f"302 {localweb.url('b.test', '/go')}",
                         f"200 {localweb.url('c.test', '/article')}"]
        assert (await browser.text("#freshness")).startswith("fresh: expires")
        assert await browser.text("#status") == "OK"
        assert '"title": "Ducks resolve every link"' in await browser.text("#record-json")
        # Why this preview: each field's value and source, and the findings per platform
        rows = await browser.script("return [...document.querySelectorAll('#why-fields tbody tr')]"
                                    ".map(r => [...r.cells].map(c => c.textContent))")
        assert ["title", "Ducks resolve every link", "og:title"] in [r[:3] for r in rows]
        assert ["site_name", "The Pond Gazette", "og:site_name"] in [r[:3] for r in rows]
        # ... and what lost, from the stored page extracted again: the <title>, below og:title
        losers = await browser.script("return [...document.querySelectorAll('#why-fields tbody tr')]"
                                      ".map(r => [r.cells[0].textContent, [...r.cells[3].querySelectorAll('li')]"
                                      ".map(li => li.textContent)])")
        assert dict(losers)["title"] == ["<title> Ducks resolve links: lower precedence than og:title"]
        assert await browser.script("return document.getElementById('why-note') === null")
        findings = await browser.script("return [...document.querySelectorAll('#why-findings tbody tr')]"
                                        ".map(r => [...r.cells].map(c => c.textContent))")
        assert ["facebook", "warning", "image_too_small"] in [f[:3] for f in findings]   # 600x300 < 600x315
        await browser.capture("why")
        # Without web.admin_token the refresh button is there but off.
        assert await browser.script("return document.querySelector('form[action=\"/admin/refresh\"] button').disabled")
        with open(shot, "rb") as fh:
            picture = Image.open(fh)
            assert picture.format == "PNG" and picture.size[0] == 1200


async def test_the_lookup_lists_processed_urls_live_and_looks_one_up(tmp_path, nats_server, localweb, browser):
    first = localweb.page("live.test", "/one", "<title>First duck</title>")
    second = localweb.page("live.test", "/two", "<title>Second duck</title>")
    async with Service(tmp_path, nats_server.url) as svc:
        await svc.client.submit_url(first)
        await svc.client.events.wait_for(1, timeout=30)
        await browser.open(svc.url("/"))
        assert "First duck" in await browser.text("#recent")        # from the stream's end
        await browser.wait_for(lambda d: d.find_element("id", "recent").get_attribute("data-live") == "open",
                               what="the live list to connect")
        await svc.client.submit_url(second)                         # arrives without a reload
        await browser.wait_text("#recent li:first-child", "Second duck")
        await browser.capture("lookup")
        items = await browser.texts("#recent li a")
        assert items[:2] == ["Second duck", "First duck"]

        def look_up(driver):
            box = driver.find_element("id", "u")
            box.send_keys(second)
            box.submit()
        await browser.run(look_up, browser.driver)
        await browser.wait_text(".card-title", "Second duck")
        assert await browser.script("return location.pathname + location.search") == \
            "/url?u=" + second.replace(":", "%3A").replace("/", "%2F")


async def test_a_url_never_seen_is_submitted_from_its_page(tmp_path, nats_server, localweb, browser):
    url = localweb.page("new.test", "/fresh", "<title>Newly seen duck</title>")
    async with Service(tmp_path, nats_server.url, **{"web.admin_token": TOKEN}) as svc:
        await browser.open(svc.url(f"/url?u={url}"))
        await browser.capture("not-seen")
        assert await browser.text("#unseen h1") == "Not seen"
        assert url in await browser.text("#unseen")

        def submit(driver):
            driver.find_element("id", "admin-token").send_keys(TOKEN)
            driver.find_element("id", "submit").click()
        await browser.run(submit, browser.driver)
        await browser.wait_text("#unseen output", "queued")
        await svc.client.events.wait_for(1, timeout=30)
        await browser.open(svc.url(f"/url?u={url}"))
        assert await browser.text(".card-title") == "Newly seen duck"

        # A wrong token is refused, and the page says why.
        await browser.open(svc.url("/url?u=http://other.test/"))

        def wrong(driver):
            token = driver.find_element("id", "admin-token")
            token.clear()
            token.send_keys("not-the-token")
            driver.find_element("id", "submit").click()
        await browser.run(wrong, browser.driver)
        assert "Authorization: Bearer" in await browser.wait_text("#unseen output", "need")


async def test_the_domain_table_shows_queues_states_and_owners(tmp_path, nats_server, localweb, browser):
    start = article_sites(localweb)
    async with Service(tmp_path, nats_server.url, **{"web.admin_token": TOKEN}) as svc:
        await svc.client.submit_url(start)
        await svc.client.events.wait_for(1, timeout=30)
        await browser.open(svc.url("/domains"))
        rows = {r.split()[0]: r for r in await browser.texts("#domains tbody tr")}
        assert {"a.test", "b.test", "c.test"} <= set(rows)
        assert "active" in rows["c.test"]

        def pause(driver):
            driver.find_element("id", "admin-token").send_keys(TOKEN)
            row = next(r for r in driver.find_elements("css selector", "#domains tbody tr")
                       if r.text.startswith("b.test"))
            row.find_element("css selector", "form[action='/admin/pause'] input[name=for]").send_keys("10m")
            row.find_element("css selector", "form[action='/admin/pause'] button").click()
        await browser.run(pause, browser.driver)
        await browser.wait_text("#domains output", "b.test: paused")
        await browser.open(svc.url("/domains"))
        rows = {r.split()[0]: r for r in await browser.texts("#domains tbody tr")}
        assert "paused by an operator" in rows["b.test"]
        headers = await browser.texts("#domains thead th")
        assert headers[:8] == ["Domain", "State", "Queue", "Rate/s", "Requests", "Errors", "Statuses", "Owner"]
        await browser.capture("domains")


async def test_a_hostile_page_is_shown_inert(tmp_path, nats_server, localweb, browser):
    """Its title, description and site name are scripts and handlers: they show as text, run
    nowhere (no alert, no change to the page), and a javascript: image is not loaded."""
    url = localweb.page("xss.test", "/", """<html><head>
        <title>&lt;script&gt;alert(1)&lt;/script&gt;</title>
        <meta property="og:description" content="&lt;img src=x onerror=document.body.dataset.pwned=1&gt;">
        <meta name="description" content="&lt;b onmouseover=alert(5)&gt;lost&lt;/b&gt;">
        <meta property="og:site_name" content="&quot;&gt;&lt;svg onload=alert(2)&gt;">
        <meta property="og:image" content="javascript:alert(3)">
        </head><body>x</body></html>""")
    async with Service(tmp_path, nats_server.url) as svc:
        await browser.open(svc.url("/"))
        await browser.wait_for(lambda d: d.find_element("id", "recent").get_attribute("data-live") == "open",
                               what="the live list to connect")
        await svc.client.submit_url(url)
        await svc.client.events.wait_for(1, timeout=30)
        await browser.wait_text("#recent li", "<script>alert(1)</script>")   # the live list: text too
        await browser.open(svc.url(f"/url?u={url}"))
        await browser.capture("hostile")
        assert await browser.text(".card-title") == "<script>alert(1)</script>"
        assert await browser.text(".card-description") == "<img src=x onerror=document.body.dataset.pwned=1>"
        assert await browser.text(".card-site") == '"><svg onload=alert(2)>'
        # ... and in "Why this preview": the values as text, the source `<title>` as text
        rows = await browser.script("return [...document.querySelectorAll('#why-fields tbody tr')]"
                                    ".map(r => [...r.cells].map(c => c.textContent))")
        assert ["title", "<script>alert(1)</script>", "<title>"] in [r[:3] for r in rows]
        assert ["description", "<img src=x onerror=document.body.dataset.pwned=1>", "og:description"] in [
            r[:3] for r in rows]
        assert [r[3] for r in rows if r[0] == "description"] == [
            "description <b onmouseover=alert(5)>lost</b>: lower precedence than og:description"]
        assert not await browser.run(browser.alert_open)
        assert await browser.script("return document.body.dataset.pwned === undefined")
        assert await browser.script("return [...document.scripts].map(s => s.getAttribute('src'))") == ["/static/app.js"]
        assert await browser.script("return document.querySelectorAll('svg, .card img').length") == 0
