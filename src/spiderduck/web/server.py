"""The web UI's HTTP server on web.listen, started and stopped with the metadata-api role."""
from __future__ import annotations

import asyncio
import logging
import ssl

from aiohttp import web

from spiderduck.core.config import WebSettings
from spiderduck.core.errors import ConfigError
from spiderduck.rpc.reloading import Reloading
from spiderduck.web.app import WebContext, make_app

log = logging.getLogger("spiderduck.web")


def _loaded(settings: WebSettings) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(settings.tls_cert, settings.tls_key)
    except (OSError, ssl.SSLError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a PEM certificate and its key"
        raise ConfigError(f"web.tls_cert / web.tls_key ({settings.tls_cert}, {settings.tls_key}): "
                          f"{reason}") from None
    return context


def https_files(settings: WebSettings) -> Reloading[ssl.SSLContext] | None:
    """The web UI's TLS (web.tls_cert, web.tls_key), or None: plain HTTP. Read now (a bad pair
    fails the start); WebServer looks at the files every tls.reload_interval seconds, and a pair
    that does not load keeps the previous one, logged at ERROR."""
    if not settings.tls_cert:
        return None
    return Reloading("web.tls_cert and web.tls_key", (settings.tls_cert, settings.tls_key),
                     lambda: _loaded(settings))


def serving_context(files: Reloading[ssl.SSLContext]) -> ssl.SSLContext:
    """The context the listener is made with: its SNI callback, called on each ClientHello,
    hands the connection the latest context loaded. It reads one attribute and never raises
    (an exception there would fail the handshake): no file is read during a handshake."""
    first = files.current

    def latest(connection: ssl.SSLObject, server_name: str | None, context: ssl.SSLContext) -> None:
        newest = files.current
        if newest is not context:
            try:
                connection.context = newest
            except Exception:  # noqa: BLE001 -- this connection keeps the first pair
                pass
        return None
    first.sni_callback = latest
    return first


class WebServer:
    def __init__(self, listen: str, ctx: WebContext, *, stop_grace: float):
        self._listen = listen
        self._ctx = ctx
        self._grace = stop_grace
        self._runner: web.AppRunner | None = None
        self._files: Reloading[ssl.SSLContext] | None = None
        self._watcher: asyncio.Task | None = None
        self.address = ""

    async def __aenter__(self) -> "WebServer":
        host, _, port = self._listen.rpartition(":")
        try:
            port_number = int(port)
        except ValueError:
            raise ConfigError(f"web.listen {self._listen!r}: expected host:port") from None
        self._files = https_files(self._ctx.settings.web)
        https = serving_context(self._files) if self._files is not None else None
        self._runner = web.AppRunner(make_app(self._ctx), access_log=None, shutdown_timeout=self._grace)
        await self._runner.setup()
        host = host.strip("[]")                # [::1]:8080, as gRPC addresses are written
        site = web.TCPSite(self._runner, host or "0.0.0.0", port_number,
                           ssl_context=https)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            raise ConfigError(f"web.listen {self._listen!r}: {exc.strerror or exc}") from exc
        bound = site._server.sockets[0].getsockname()
        self.address = f"[{host}]:{bound[1]}" if ":" in host else f"{host or '0.0.0.0'}:{bound[1]}"
        log.info("web UI on %s://%s/", "https" if self._ctx.settings.web.tls_cert else "http", self.address)
        if self._files is not None:
            self._watcher = asyncio.create_task(self._files.watch(self._ctx.settings.tls.reload_interval))
        return self

    async def __aexit__(self, *exc) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
        if self._ctx.feed is not None:
            await self._ctx.feed.close()       # ends the live lists, so the runner need not wait
        await self._runner.cleanup()
