"""The bare baseline of bench/pipeline: aiohttp GETs of the same URLs, 64 at a time, each page
parsed with selectolax (lexbor) for its title and metas. Nothing else: no NATS, no stores, no
politeness, no extraction rules. Run in its own process, as the service is.

    python bench/bare_fetch.py URL_FILE [--concurrency 64] [--extract]

`--extract` parses each page with our whole extraction (extract_page) instead: the cost of the
record's content alone, without NATS, stores, WARC, events or a second process.

Prints one JSON line: {"urls": N, "seconds": S, "ok": K, "cpu": C}, C the CPU seconds this
process used over the fetches (user and system).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

import aiohttp
import aiohttp.abc
from selectolax.lexbor import LexborHTMLParser

from spiderduck.core.config import Settings
from spiderduck.extract.page import extract_page
from spiderduck.extract.signals import robots_token

# extract_page's settings as bench/pipeline's service has them (no config file: the defaults).
DEFAULTS = Settings()
EXTRACTION = {"parser": DEFAULTS.process.parser, "robots_token": robots_token(DEFAULTS.fetcher.user_agent)}


class Loopback(aiohttp.abc.AbstractResolver):
    """Every host name is 127.0.0.1, as `fetcher.dns_overrides: {"*": 127.0.0.1}` makes it for ours."""

    async def resolve(self, host, port=0, family=0):
        return [{"hostname": host, "host": "127.0.0.1", "port": port, "family": 2, "proto": 0,
                 "flags": 0}]

    async def close(self) -> None:
        pass


def title_and_metas(body: bytes) -> tuple[str, list[dict]]:
    tree = LexborHTMLParser(body)
    title = tree.css_first("title")
    return (title.text() if title is not None else ""), [m.attributes for m in tree.css("meta")]


def extracted(body: bytes, url: str) -> str:
    return extract_page(body, url, **EXTRACTION).title


async def run(urls: list[str], concurrency: int, extract: bool) -> dict:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for url in urls:
        queue.put_nowait(url)
    ok = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal ok
        while not queue.empty():
            url = queue.get_nowait()
            async with session.get(url) as resp:
                body = await resp.read()
            title = extracted(body, url) if extract else title_and_metas(body)[0]
            ok += bool(title)

    connector = aiohttp.TCPConnector(limit=concurrency, resolver=Loopback())
    async with aiohttp.ClientSession(connector=connector) as session:
        started, cpu = time.perf_counter(), os.times()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        seconds, used = time.perf_counter() - started, os.times()
    return {"urls": len(urls), "seconds": seconds, "ok": ok,
            "cpu": used.user + used.system - cpu.user - cpu.system}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url_file")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--extract", action="store_true", help="our extraction instead of title and metas")
    args = ap.parse_args()
    with open(args.url_file, encoding="utf-8") as fh:
        urls = [line.strip() for line in fh if line.strip()]
    print(json.dumps(asyncio.run(run(urls, args.concurrency, args.extract))))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
