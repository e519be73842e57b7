"""bench/render: what rendering a JavaScript shell costs (issue 31), against a bare static fetch.

A shell (an empty `#root`, a script that fetches /data.json and writes the title, the og tags
and the text) is served on 127.0.0.2 by aiohttp. Measured in one run, interleaved:

  static      the page fetched by the fetcher's HttpClient (guard, body cap): what every page costs
  rendered    Renderer.render of that page (Debian's chromium, render.* defaults), its two
              subresources fetched through the same HttpClient

It prints each one's median and p90 latency, the added latency of a rendered page (rendered
minus static), and renders per second with render.max_concurrent 1 and 2 (the default) over
`--pages` renders each. Also the share of the metascraper corpus's pages that would be rendered
(spiderduck.extract.shell). Exits 0 with a message, measuring nothing, without chromium.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import pathlib
import shutil
import statistics
import sys
import time

from aiohttp import web

import tree  # noqa: E402
tree.use_this_tree()
from spiderduck.cli.nats_server import free_port
from spiderduck.core.config import FetcherSettings, RenderSettings
from spiderduck.extract import shell
from spiderduck.fetcher.guard import AddressGuard
from spiderduck.fetcher.http import HttpClient, Limits
from spiderduck.fetcher.render import Renderer
from spiderduck.fetcher.resolver import GuardedResolver

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "metascraper"
HOST = "127.0.0.2"
SHELL = (b"<!doctype html><html><head><meta charset=utf-8></head><body><div id=root></div>"
         b"<script src=/app.js></script></body></html>")
APP_JS = """fetch('/data.json').then(r => r.json()).then(d => {
  document.title = d.title;
  for (const [k, v] of Object.entries(d.meta)) {
    const m = document.createElement('meta'); m.setAttribute('property', k); m.setAttribute('content', v);
    document.head.appendChild(m);
  }
  document.getElementById('root').textContent = d.text;
});"""
DATA = {"title": "Rendered", "text": "Hello " * 200,
        "meta": {"og:title": "Rendered", "og:description": "Made by a script"}}


async def origin() -> tuple[web.AppRunner, str]:
    async def handle(request: web.Request) -> web.Response:
        if request.path == "/app.js":
            return web.Response(text=APP_JS, content_type="application/javascript")
        if request.path == "/data.json":
            return web.json_response(DATA)
        return web.Response(body=SHELL, content_type="text/html")
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port(HOST)
    await web.TCPSite(runner, HOST, port).start()
    return runner, f"http://{HOST}:{port}/"


def corpus_share() -> str:
    cases = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8")) if CORPUS.exists() else []
    rendered = [c["name"] for c in cases
                if shell.needs_render(shell.signals((CORPUS / c["html"]).read_bytes()))]
    return f"{len(rendered)}/{len(cases)}" + (f" ({', '.join(rendered)})" if rendered else "")


def line(name: str, ms: list[float]) -> str:
    ms = sorted(ms)
    return f"  {name:<10} median {statistics.median(ms):8.1f} ms   p90 {ms[int(len(ms) * 0.9)]:8.1f} ms"


async def run(rounds: int, pages: int) -> None:
    runner, url = await origin()
    guard = AddressGuard([f"{HOST}/32"])
    async with HttpClient(user_agent="SpiderDuckBench/1.0", guard=guard, resolver=GuardedResolver(guard),
                          limits=Limits(FetcherSettings().max_body_bytes, connect_timeout=2.0, total_timeout=10.0)) as http:
        async def fetch(sub: str):
            return await http.get(sub, accept="*/*")

        settings = RenderSettings(enabled=True)
        async with Renderer(settings, fetch, user_agent="SpiderDuckBench/1.0") as renderer:
            first = await renderer.render(url, SHELL, (("Content-Type", "text/html"),))   # starts the browser
            assert first.outcome == "ok" and "Rendered" in first.html, first
            times: dict[str, list[float]] = {"static": [], "rendered": []}
            for _ in range(rounds):
                start = time.perf_counter()
                page = await http.get(url)
                times["static"].append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                done = await renderer.render(url, page.body, page.headers, page.http_status)
                times["rendered"].append((time.perf_counter() - start) * 1000)
                assert done.outcome == "ok", done
        rates = {}
        for concurrent in (1, 2):
            one = dataclasses.replace(settings, max_concurrent=concurrent)
            async with Renderer(one, fetch, user_agent="SpiderDuckBench/1.0") as renderer:
                await renderer.render(url, SHELL, (("Content-Type", "text/html"),))
                start = time.perf_counter()
                done = await asyncio.gather(*(renderer.render(url, SHELL, (("Content-Type", "text/html"),))
                                              for _ in range(pages)))
                rates[concurrent] = pages / (time.perf_counter() - start)
                assert all(d.outcome == "ok" for d in done), [d.outcome for d in done]
    await runner.cleanup()
    print(f"a shell page and its two subresources on loopback, {rounds} rounds interleaved "
          f"(render.* defaults, browser warm):")
    print(line("static", times["static"]))
    print(line("rendered", times["rendered"]))
    added = statistics.median(times["rendered"]) - statistics.median(times["static"])
    print(f"  added latency of a rendered page: {added:.1f} ms (median)")
    for concurrent, rate in rates.items():
        print(f"  renders per second, render.max_concurrent={concurrent}: {rate:.1f} ({pages} pages)")
    print(f"corpus pages that would be rendered: {corpus_share()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--pages", type=int, default=40)
    args = ap.parse_args()
    if shutil.which("chromium") is None:
        print("chromium not found (bin/test installs Debian's): nothing measured")
        return 0
    asyncio.run(run(args.rounds, args.pages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
