"""The web UI's HTTP server on web.listen, started and stopped with the metadata-api role."""
from __future__ import annotations

import logging
import ssl

from aiohttp import web

from spiderduck.core.config import WebSettings
from spiderduck.core.errors import ConfigError
from spiderduck.web.app import WebContext, make_app

log = logging.getLogger("spiderduck.web")


def https_context(settings: WebSettings) -> ssl.SSLContext | None:
    """The web UI's TLS (web.tls_cert, web.tls_key), or None: plain HTTP."""
    if not settings.tls_cert:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(settings.tls_cert, settings.tls_key)
    except (OSError, ssl.SSLError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a PEM certificate and its key"
        raise ConfigError(f"web.tls_cert / web.tls_key ({settings.tls_cert}, {settings.tls_key}): "
                          f"{reason}") from None
    return context


class WebServer:
    def __init__(self, listen: str, ctx: WebContext, *, stop_grace: float):
        self._listen = listen
        self._ctx = ctx
        self._grace = stop_grace
        self._runner: web.AppRunner | None = None
        self.address = ""

    async def __aenter__(self) -> "WebServer":
        host, _, port = self._listen.rpartition(":")
        try:
            port_number = int(port)
        except ValueError:
            raise ConfigError(f"web.listen {self._listen!r}: expected host:port") from None
        https = https_context(self._ctx.settings.web)
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
        return self

    async def __aexit__(self, *exc) -> None:
        if self._ctx.feed is not None:
            await self._ctx.feed.close()       # ends the live lists, so the runner need not wait
        await self._runner.cleanup()
