"""The web UI's JSON API over a real socket (web.api): /api/v1/explain, /oembed and
/api/v1/preview against the whole service, each error as JSON {"error": ...} with its status."""
from __future__ import annotations

import aiohttp
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.cli.roles import run_metadata_api_and_web
from support.service import Client, RunningService, service_settings, wait_port

PAGE = """<html lang="en"><head><title>Plain title</title>
    <meta property="og:title" content="Ducks explain previews">
    <meta name="author" content="Mallard">
    <meta property="og:site_name" content="The Pond">
    <meta property="og:image" content="{image}"></head><body>x</body></html>"""


def _png(width: int, height: int) -> bytes:
    import io

    from PIL import Image
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 60)).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
async def web(tmp_path, nats_server):
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, **{
        "web.listen": listen, "web.max_url_chars": 200, "min_refresh_interval": 0,
        "metadata_api.resolve_timeout": 20.0})
    async with RunningService(settings), Client(settings) as client, aiohttp.ClientSession() as http:
        await wait_port(listen)
        yield type("Web", (), {"base": f"http://{listen}", "client": client, "http": http})


async def _get(web, path: str, **params) -> tuple[int, dict, dict]:
    async with web.http.get(f"{web.base}{path}", params=params) as response:
        assert response.content_type == "application/json"
        return response.status, await response.json(), dict(response.headers)


async def _crawled(web, localweb, image_size=(600, 300)) -> str:
    image = localweb.page("api.test", "/i.png", _png(*image_size), content_type="image/png")
    url = localweb.page("api.test", "/a", PAGE.format(image=image))
    await web.client.submit_url(url)
    await web.client.events.wait_for(1, timeout=30)
    return url


async def test_explain_gives_the_record_its_fields_sources_and_findings(web, localweb):
    url = await _crawled(web, localweb)
    status, body, _ = await _get(web, "/api/v1/explain", url=url)
    assert status == 200
    assert body["metadata"]["url"] == url and body["metadata"]["title"] == "Ducks explain previews"
    sources = {f["field"]: f.get("source", "") for f in body["fields"]}
    assert sources["title"] == "og:title" and sources["site_name"] == "og:site_name"
    assert sources["image"] == "og:image" and sources["author"] == "author"
    # the stored page extracted again: what lost, and why
    title = next(f for f in body["fields"] if f["field"] == "title")
    assert title["rejected"] == [{"source": "<title>", "value": "Plain title",
                                  "reason": "lower precedence than og:title"}]
    assert "note" not in body
    # A page whose og:image is gone: the crawl logged its probe's 404 after the page, and the
    # explanation reads it back from the content log.
    gone = localweb.page("api.test", "/gone.png", "missing", status=404)
    shown = localweb.page("api.test", "/ok.png", _png(700, 400), content_type="image/png")
    second = localweb.page("api.test", "/b", f"""<html><head><meta property="og:title" content="B">
        <meta property="og:image" content="{gone}"><meta name="twitter:image" content="{shown}"></head></html>""")
    await web.client.submit_url(second)
    await web.client.events.wait_for(2, timeout=30)
    status, body, _ = await _get(web, "/api/v1/explain", url=second)
    image = next(f for f in body["fields"] if f["field"] == "image")
    assert image["source"] == "twitter:image"
    assert image["rejected"] == [{"source": "og:image", "value": gone,
                                  "reason": "failed to load when probed at fetch time: HTTP 404"}]
    # 600x300: under facebook's 600x315 -> its warning, with proto field names
    small = [f for f in body["findings"] if f["platform"] == "facebook" and f["code"] == "image_too_small"]
    assert small and {"platform", "code", "severity", "message"} <= set(small[0])
    assert {f["severity"] for f in body["findings"]} <= {"error", "warning", "info"}


async def test_explain_errors_are_json(web):
    status, body, _ = await _get(web, "/api/v1/explain", url="http://never.test/")
    assert status == 404 and body == {"error": "http://never.test/ has never been seen"}
    status, body, _ = await _get(web, "/api/v1/explain")
    assert status == 400 and "missing" in body["error"]
    status, body, _ = await _get(web, "/api/v1/explain", url="http://long.test/" + "a" * 300)
    assert status == 400 and "at most 200" in body["error"]


async def test_oembed_is_a_link_document_with_the_cards_thumbnail(web, localweb):
    url = await _crawled(web, localweb)
    status, body, _ = await _get(web, "/oembed", url=url, format="json")
    assert status == 200
    image = localweb.url("api.test", "/i.png")
    assert body == {"version": "1.0", "type": "link", "title": "Ducks explain previews",
                    "author_name": "Mallard", "provider_name": "The Pond",
                    "provider_url": f"http://api.test:{localweb.port}/",
                    "thumbnail_url": image, "thumbnail_width": 600, "thumbnail_height": 300}
    status, same, _ = await _get(web, "/oembed", url=url)          # format defaults to json
    assert status == 200 and same == body


async def test_oembed_errors(web, localweb):
    url = await _crawled(web, localweb)
    status, body, _ = await _get(web, "/oembed", url=url, format="xml")
    assert status == 501 and "only json" in body["error"]
    status, body, _ = await _get(web, "/oembed", url="http://never.test/x")
    assert status == 404 and "never been seen" in body["error"]
    status, body, _ = await _get(web, "/oembed", url="")
    assert status == 400


async def test_oembed_of_a_page_without_an_image_has_no_thumbnail(web, localweb):
    url = localweb.page("bare.test", "/", "<title>Bare</title>")
    await web.client.submit_url(url)
    await web.client.events.wait_for(1, timeout=30)
    status, body, _ = await _get(web, "/oembed", url=url)
    assert status == 200
    assert body == {"version": "1.0", "type": "link", "title": "Bare",
                    "provider_url": f"http://bare.test:{localweb.port}/"}


async def test_preview_crawls_an_unseen_url_then_answers_it_fresh(web, localweb):
    url = localweb.page("preview.test", "/p", "<title>Previewed</title>")
    status, body, headers = await _get(web, "/api/v1/preview", url=url)
    assert status == 200 and headers["SpiderDuck-Resolution"] == "CRAWLED"
    assert body["url"] == url and body["title"] == "Previewed" and body["status"] == "OK"
    status, again, headers = await _get(web, "/api/v1/preview", url=url)
    assert status == 200 and headers["SpiderDuck-Resolution"] == "FRESH" and again["title"] == "Previewed"
    assert len(localweb.hits_for("preview.test", "/p")) == 1
    # max_age 0: too old for this caller: fetched again
    status, again, headers = await _get(web, "/api/v1/preview", url=url, max_age="0")
    assert status == 200 and headers["SpiderDuck-Resolution"] != "FRESH"
    assert len(localweb.hits_for("preview.test", "/p")) == 2
    status, again, headers = await _get(web, "/api/v1/preview", url=url, refresh="1")
    assert status == 200 and len(localweb.hits_for("preview.test", "/p")) == 3


async def test_preview_errors_are_json(web):
    for params, message in (({}, "missing"), ({"url": "http://x.test/" + "a" * 300}, "at most 200"),
                            ({"url": "not a url"}, "not a fetchable URL"),
                            ({"url": "http://x.test/", "max_age": "-1"}, "max_age"),
                            ({"url": "http://x.test/", "max_age": "soon"}, "max_age")):
        status, body, _ = await _get(web, "/api/v1/preview", **params)
        assert status == 400 and message in body["error"], (params, body)


async def test_preview_without_nats_answers_503_for_what_it_cannot_resolve(tmp_path):
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, "", **{"web.listen": listen})
    async with RunningService(settings, roles=(run_metadata_api_and_web,)), aiohttp.ClientSession() as http:
        await wait_port(listen)
        async with http.get(f"http://{listen}/api/v1/preview", params={"url": "http://x.test/"}) as response:
            assert response.status == 503 and "needs NATS" in (await response.json())["error"]
