"""Issue 29 through the whole service over real sockets: a day stated only in the URL's path, a
byline whose entities were escaped twice, and a JSON-LD author written as a JSON string come
back in the record as a reader would say them. Every page is written here."""
from __future__ import annotations

import json

from support.service import Client, RunningService, service_settings

HEAD = '<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>{head}</head>'
BODY = '<body><article><h1>{title}</h1>{body}<p>The story.</p></article></body></html>'


def story(web, path: str, title: str, head: str = "", body: str = "") -> str:
    return web.page("news.test", path, HEAD.format(title=title, head=head) + BODY.format(title=title, body=body))


async def test_dates_and_authors_through_the_service(tmp_path, nats_server, localweb):
    author_as_string = json.dumps({"@type": "Person", "name": "Jane Doe"})
    ld = json.dumps({"@type": "NewsArticle", "headline": "Budget", "author": author_as_string})
    pages = {
        "url-day": story(localweb, "/2020/01/13/council-votes/", "Council votes"),
        "entity-byline": story(localweb, "/opinion/rain", "Rain",
                               head='<meta name="author" content="Redacci&amp;oacute;n">',
                               body='<span class="date">13.01.2020</span>'),
        "json-string-author": story(localweb, "/economy/budget", "Budget",
                                    head=f'<script type="application/ld+json">{ld}</script>'),
    }
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.dns_overrides": {"*.test": "127.0.0.1"},
        "fetcher.rate_overrides": {"news.test": 50.0}})
    async with RunningService(settings), Client(settings) as client:
        for url in pages.values():
            await client.submit_url(url)
        events = await client.events.wait_for(len(pages), timeout=30)
        got = dict(zip(pages, await client.get(list(pages.values()))))

    # Read from the fetched HTML (issue 31's fetch_mode), in the record and in its event.
    assert {r["fetch_mode"] for r in got.values()} == {e["fetch_mode"] for e in events} == {"static"}

    assert got["url-day"]["status"] == "OK"
    assert got["url-day"]["published_time"] == "2020-01-13T12:00:00Z" and "author" not in got["url-day"]
    assert (got["entity-byline"]["author"], got["entity-byline"]["published_time"]) == (
        "Redacción", "2020-01-13T12:00:00Z")
    assert got["json-string-author"]["author"] == "Jane Doe"
    assert "modified_time" not in got["json-string-author"]
