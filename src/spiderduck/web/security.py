"""What keeps a crawled page's words inert in ours, and who may act.

Every response carries a strict Content-Security-Policy: scripts and styles from this server
only (no inline script, so an injected one could not run even if escaping failed), images only
from the origins a card names (its image and favicon), frames only from its embed's origin,
nothing else. No referrer leaves for those origins, and no page of ours may be framed.

Admin actions need `Authorization: Bearer <token>`, the token being web.admin_token or the
contents of web.admin_token_file (read once at start: admin_token); with neither they are off
(403). A bearer header is never sent by a browser on its own, so another site cannot
make an operator's browser act (no cross-site request forgery).

DNS rebinding: a page of another site whose name is made to resolve to 127.0.0.1 would reach a
UI listening on loopback as the same origin, and could read it. So a request whose Host is
neither the listen address, `localhost`, nor a name in web.allowed_hosts gets 421 when
web.listen is a loopback address, and on any address once web.allowed_hosts is set."""
from __future__ import annotations

import hmac
import ipaddress
import re
from urllib.parse import urlsplit

from aiohttp import web

from spiderduck.core.config import WebSettings
from spiderduck.core.errors import ConfigError, SpiderDuckError
from spiderduck.core.urls import is_loopback_host
from spiderduck.core.secrets import read_secret_file


BASE_POLICY: dict[str, tuple[str, ...]] = {
    "default-src": ("'none'",), "script-src": ("'self'",), "style-src": ("'self'",),
    "img-src": ("'self'",), "connect-src": ("'self'",), "form-action": ("'self'",),
    "base-uri": ("'none'",), "frame-ancestors": ("'none'",), "frame-src": ("'none'",),
}


def content_security_policy(extra: dict[str, list[str]] | None = None) -> str:
    """The policy, with `extra` sources (origins from views.origin_of) added per directive."""
    directives = []
    for name, sources in BASE_POLICY.items():
        more = list((extra or {}).get(name, ()))
        if name == "frame-src" and more:
            sources = ()
        directives.append(" ".join((name, *sources, *more)))
    return "; ".join(directives)


SOURCES = web.RequestKey("csp_sources", dict)


def set_sources(request: web.Request, sources: dict[str, list[str]]) -> None:
    """A handler's extra CSP sources for its response (a card's image, favicon and embed)."""
    request[SOURCES] = sources


@web.middleware
async def security_headers(request: web.Request, handler):
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        response = exc
    response.headers.setdefault("Content-Security-Policy",
                                content_security_policy(request.get(SOURCES)))
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"
    if not request.path.startswith("/static/"):
        response.headers.setdefault("Cache-Control", "no-store")
    if isinstance(response, web.HTTPException):
        raise response
    return response


_PORT = re.compile(r"(:[0-9]*)?")


def host_name(header: str) -> str:
    """The name of a Host header, without its port: "[::1]:8080" -> "::1". "" for what is not
    host[:port] (an IPv6 address in brackets; a bare one is taken whole), which no name matches."""
    header = header.strip().lower()
    if header.startswith("["):
        name, closed, rest = header[1:].partition("]")
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return ""
        return name if closed and _PORT.fullmatch(rest) else ""
    if header.count(":") != 1:
        return header
    name, _, port = header.partition(":")
    return name if _PORT.fullmatch(":" + port) else ""


def _target_host(target: str) -> str | None:
    """The host of an absolute-form request target (RFC 9112 3.2.2: it, not the Host header, is
    the request's host, and aiohttp's request.host and request.url say so), "" if it has none
    we can read; None for an origin-form target ("/path") or "*"."""
    if target.startswith("/") or target == "*":
        return None
    try:
        return host_name(urlsplit(target).netloc)
    except ValueError:
        return ""


def host_check(listen_host: str, allowed_hosts: list[str]):
    """The middleware answering 421 for a Host this UI does not serve (see the module's text);
    None when no check applies (a non-loopback listen and no allowed_hosts)."""
    listen_host = listen_host.strip("[]").lower()
    if not (is_loopback_host(listen_host) or allowed_hosts):
        return None
    names = {listen_host, "localhost", *(h.strip().lower().rstrip(".") for h in allowed_hosts)}

    @web.middleware
    async def check(request: web.Request, handler):
        header = request.headers.get("Host", "")
        for given, name in ((header, host_name(header)), (request.raw_path, _target_host(request.raw_path))):
            if name is not None and name.rstrip(".") not in names:
                shown = name.rstrip(".") or given      # what was sent, when it is no host[:port]
                raise web.HTTPMisdirectedRequest(
                    text=f"421: this server does not answer for the host {shown[:100]!r} (web.allowed_hosts)\n")
        return await handler(request)
    return check


class AdminRefused(SpiderDuckError):
    """An admin request refused (401, 403): not retryable, the token decides."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def admin_token(settings: WebSettings) -> str:
    """The admin actions' token: web.admin_token, else what web.admin_token_file holds (a missing,
    unreadable or empty file is a ConfigError naming the path, never the contents); "" = off."""
    if not settings.admin_token_file:
        return settings.admin_token
    token = read_secret_file("web", "admin_token_file", settings.admin_token_file).strip()
    if not token:            # blanks only: what a header, stripped, could never match
        raise ConfigError(f"web: admin_token_file={settings.admin_token_file}: holds no token")
    return token


def check_admin(request: web.Request, token: str) -> None:
    """Raise AdminRefused (403: off; 401: no or wrong token) unless the bearer token matches."""
    if not token:
        raise AdminRefused(403, "admin actions are off: set web.admin_token or web.admin_token_file "
                                "to turn them on")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise AdminRefused(401, "admin actions need Authorization: Bearer <web.admin_token>")
