"""The benches' origin: the pages of ../shared/corpus/metascraper served on one loopback port for
every host name (bench/pipeline, bench/api), by the number at the end of the path, cycled; each
page request counted by who asked (PAGE_REQUESTS: the crawler, or a browser's second look, issue 43)."""
from __future__ import annotations

import json
import pathlib
import sys
from urllib.parse import urlsplit

from aiohttp import web

from spiderduck.cli.nats_server import free_port

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "metascraper"

# A 1x1 PNG: what the pages' own-host images (relative og:image URLs) and anything else
# that is not a numbered page get, so their related fetches find an image to probe.
PIXEL = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                      "1f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4520000000049454e44ae426082")


def corpus_pages() -> list[bytes]:
    cases_path = CORPUS / "cases.json"
    if not cases_path.exists():
        sys.exit(f"{CORPUS} not found: the benchmark reads ../shared/corpus beside the repo")
    cases = json.loads(cases_path.read_text("utf-8"))
    return [(CORPUS / c["html"]).read_bytes() for c in cases]


def corpus_hosts() -> list[str]:
    """Each corpus page's own host name, in the cases' order (page N's is [N % len])."""
    cases = json.loads((CORPUS / "cases.json").read_text("utf-8"))
    return [urlsplit(c["url"]).hostname for c in cases]


# Page requests the origin answered, by who asked (a browser profile's User-Agent names Chrome).
PAGE_REQUESTS = {"crawler": 0, "browser": 0}


async def serve(pages: list[bytes]) -> tuple[web.AppRunner, int]:
    async def page(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        last = request.path.rsplit("/", 1)[-1] or "0"
        if not last.isdigit():
            return web.Response(body=PIXEL, content_type="image/png")
        PAGE_REQUESTS["browser" if "Chrome/" in request.headers.get("User-Agent", "") else "crawler"] += 1
        return web.Response(body=pages[int(last) % len(pages)], content_type="text/html", charset="utf-8")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
    return runner, port
