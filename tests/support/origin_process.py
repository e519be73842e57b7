"""A web origin in its own process, so the times it records are not skewed by the test's
own event loop: every request's arrival (CLOCK_MONOTONIC, comparable across processes)
is kept, with its User-Agent, and served back as JSON at /__hits__ (that request itself is
not recorded).

    python tests/support/origin_process.py PORT DELAY_SECONDS
Any host and path answers 200 with a small HTML page after DELAY_SECONDS.
"""
from __future__ import annotations

import asyncio
import sys
import time

from aiohttp import web


def main() -> None:
    port, delay = int(sys.argv[1]), float(sys.argv[2])
    hits: list[tuple[float, str, str, str]] = []

    async def handle(request: web.Request) -> web.Response:
        arrived = time.monotonic()
        if request.path == "/__hits__":
            return web.json_response(hits)
        host = (request.host or "").rsplit(":", 1)[0].lower()
        hits.append((arrived, host, request.path_qs, request.headers.get("User-Agent", "")))
        if request.path == "/robots.txt":
            return web.Response(status=404)
        await asyncio.sleep(delay)
        return web.Response(text=f"<title>{host} {request.path}</title>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None, shutdown_timeout=0.5)


if __name__ == "__main__":
    main()
