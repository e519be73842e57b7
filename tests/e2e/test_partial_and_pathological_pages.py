"""Every page a preview (issue 29), through the running service: a page over
fetcher.max_body_bytes is read from its first bytes (`truncated`), a page whose body blows the
extraction budget still gets its head's metadata, and a page labelled with the wrong charset gets
its title in the right one. Bodies that give nothing stay TOO_LARGE or TIMEOUT."""
from __future__ import annotations

import random

from spiderduck.core.config import FetcherSettings
from support.service import Client, RunningService, service_settings

CAP = 1 << 20
HEAD = ('<!doctype html><html><head><title>A big page</title>'
        '<meta property="og:description" content="Its head is fine"></head>').encode()
BIG = HEAD + b"<body>" + b"<p>Lorem ipsum dolor sit amet.</p>\n" * (3 * CAP // 34) + b"</body></html>"
# Binary noise with no markup in it (no '<': a stray "<p>" in noise would be a paragraph).
GARBAGE = random.Random(29).randbytes(3 * CAP).replace(b"<", b".")
# lexbor is quadratic in nesting depth: tens of seconds for 100,000 nested elements.
DEEP = HEAD + b"<body>" + b"<div>" * 100_000 + b"</body></html>"
DEEP_FROM_BYTE_0 = b"<div>" * 100_000 + HEAD
RUSSIAN = "Погода в Москве: облачно, без осадков, около пяти градусов тепла"


async def test_partial_pathological_and_mislabelled_pages(tmp_path, nats_server, localweb):
    assert len(BIG) > 3 * CAP - 100 and len(DEEP) < CAP
    urls = {
        "big": localweb.page("big.test", "/", BIG),
        "garbage": localweb.page("big.test", "/garbage", GARBAGE, content_type="application/octet-stream"),
        "garbage-html": localweb.page("big.test", "/garbage-html", GARBAGE, content_type="text/html"),
        "deep": localweb.page("deep.test", "/", DEEP),
        "deep-from-byte-0": localweb.page("deep.test", "/0", DEEP_FROM_BYTE_0),
        "mislabelled": localweb.page("ru.test", "/", f"<title>{RUSSIAN}</title><p>{RUSSIAN}</p>".encode("cp1251"),
                                     content_type="text/html; charset=utf-8"),
    }
    settings = service_settings(tmp_path, nats_server.url, **{
        "fetcher.max_body_bytes": CAP, "process.workers": 2, "process.extract_timeout": "2s"})
    async with RunningService(settings), Client(settings) as client:
        for url in urls.values():
            await client.submit_url(url)
        await client.events.wait_for(len(urls), timeout=60)
        records = dict(zip(urls, await client.get(list(urls.values()))))

    big = records["big"]
    assert (big["status"], big["title"], big["description"]) == ("OK", "A big page", "Its head is fine")
    assert big["truncated"] is True and big["content_length"] == CAP
    garbage_html = records["garbage-html"]
    assert garbage_html["status"] == "TOO_LARGE", garbage_html
    assert garbage_html["truncated"] is True and "fetcher.max_body_bytes" in garbage_html["error"]
    garbage = records["garbage"]                # a file (issue 41): its head, a card of its name
    assert (garbage["status"], garbage["title"]) == ("OK", "garbage"), garbage
    assert garbage["content_length"] == min(CAP, FetcherSettings().file_head_bytes)

    deep = records["deep"]
    assert (deep["status"], deep["title"], deep["description"]) == ("OK", "A big page", "Its head is fine")
    assert deep["truncated"] is True and "error" not in deep
    stuck = records["deep-from-byte-0"]
    assert stuck["status"] == "TIMEOUT" and not stuck.get("title")
    assert "process.extract_timeout (2s)" in stuck["error"]

    assert (records["mislabelled"]["title"], records["mislabelled"]["charset"]) == (RUSSIAN, "windows-1251")
