"""Many web sites on one loopback port: pages chosen by Host header, every request recorded.

Tests map the sites' names to 127.0.0.1 with fetcher.dns_overrides.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Awaitable, Callable

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Hit:
    at: float          # time.monotonic() when the request arrived
    host: str
    path: str          # path with query


class Gate:
    """A page (a localweb route handler) that answers only once opened: its URL stays in
    flight until then."""

    def __init__(self, body: str):
        self.body = body
        self.opened = asyncio.Event()
        self.asked = asyncio.Event()

    async def __call__(self, request):
        self.asked.set()
        await self.opened.wait()
        return web.Response(text=self.body, content_type="text/html")


class LocalWeb:
    def __init__(self):
        self._routes: dict[tuple[str, str], Handler] = {}
        self.hits: list[Hit] = []
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._hit_event = asyncio.Event()

    # --- defining sites -------------------------------------------------------------
    def route(self, host: str, path: str, handler: Handler) -> str:
        self._routes[(host, path)] = handler
        return self.url(host, path)

    def page(self, host: str, path: str, body: bytes | str, *, status: int = 200,
             content_type: str = "text/html; charset=utf-8", headers: dict | None = None) -> str:
        data = body.encode("utf-8") if isinstance(body, str) else body

        async def handler(request):
            hdrs = {"Content-Type": content_type} if content_type else {}
            return web.Response(body=data, status=status, headers={**hdrs, **(headers or {})})
        return self.route(host, path, handler)

    def redirect(self, host: str, path: str, location: str, status: int = 301) -> str:
        async def handler(request):
            return web.Response(status=status, headers={"Location": location})
        return self.route(host, path, handler)

    def robots(self, host: str, text: str) -> None:
        self.page(host, "/robots.txt", text, content_type="text/plain")

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    # --- observing ------------------------------------------------------------------
    def hits_for(self, host: str, path: str | None = None) -> list[Hit]:
        return [h for h in self.hits if h.host == host and (path is None or h.path == path)]

    # --- serving --------------------------------------------------------------------
    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        host = (request.host or "").rsplit(":", 1)[0].lower()
        self.hits.append(Hit(time.monotonic(), host, request.path_qs))
        handler = self._routes.get((host, request.path_qs)) or self._routes.get((host, request.path))
        if handler is None:
            return web.Response(status=404, text="not found")
        return await handler(request)

    async def start(self) -> "LocalWeb":
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
