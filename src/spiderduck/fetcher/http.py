"""One HTTP request, bounded in size and time, never following redirects.

aiohttp errors are translated into `Status` values here and nowhere else.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Callable, Mapping

import aiohttp
from yarl import URL

from spiderduck.core import urls
from spiderduck.core.config import FetcherSettings
from spiderduck.core.fetch import HTML_TYPES, FetchResult, declared_type
from spiderduck.core.status import Status
from spiderduck.fetcher.guard import AddressGuard, BlockedAddress
from spiderduck.fetcher.resolver import GuardedResolver

@dataclass(frozen=True)
class Limits:
    max_body_bytes: int       # fetcher.max_body_bytes
    connect_timeout: float    # fetcher.connect_timeout
    total_timeout: float      # fetcher.total_timeout

    @classmethod
    def from_settings(cls, s: FetcherSettings) -> "Limits":
        return cls(s.max_body_bytes, s.connect_timeout, s.total_timeout)


class HttpClient:
    """A shared aiohttp session whose connections pass the address guard."""

    def __init__(self, *, user_agent: str, guard: AddressGuard, resolver: GuardedResolver,
                 limits: Limits, clock=time.monotonic, wall=time.time):
        self._ua = user_agent
        self._guard = guard
        self._resolver = resolver
        self._limits = limits
        self._clock = clock
        self._wall = wall
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> "HttpClient":
        connector = aiohttp.TCPConnector(resolver=self._resolver, limit=0, limit_per_host=8,
                                         ttl_dns_cache=60, enable_cleanup_closed=True)
        sent = aiohttp.TraceConfig()
        sent.on_request_headers_sent.append(_headers_sent)
        self._session = aiohttp.ClientSession(
            connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trace_configs=[sent],
            timeout=aiohttp.ClientTimeout(total=self._limits.total_timeout,
                                          sock_connect=self._limits.connect_timeout))
        return self

    async def __aexit__(self, *exc) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def get(self, url: str, *, max_bytes: int | None = None,
                  accept: str = "text/html,application/xhtml+xml,*/*;q=0.8",
                  on_sent: Callable[[], None] | None = None,
                  headers: Mapping[str, str] | None = None, file_bytes: int = 0,
                  user_agent: str | None = None) -> FetchResult:
        """GET one URL. `on_sent` is called the moment the request headers leave (after the
        connection is up), so politeness can space what the origin actually sees. `headers`
        are sent besides User-Agent and Accept (a conditional re-fetch's If-None-Match and
        If-Modified-Since); the caller vouches for them. `file_bytes` > 0: an answer that
        declares a type other than HTML (a file) is read up to that many bytes only, and the
        connection closed. `user_agent` is this request's User-Agent (the browser profile's);
        None = the client's own (fetcher.user_agent)."""
        limit = self._limits.max_body_bytes if max_bytes is None else max_bytes
        started = self._clock()
        fetched_at = self._wall()

        def failed(status: Status, error: str) -> FetchResult:
            return FetchResult(url=url, status=status, error=error, fetched_at=fetched_at,
                               origin_seconds=self._clock() - started)
        try:
            host = urls.host_of(url)
            if urls.is_ip_literal(host):
                self._guard.check(host, host.strip("[]"))
            async with asyncio.timeout(self._limits.total_timeout + 1):
                async with self._session.get(
                        URL(url, encoded=True), allow_redirects=False,
                        headers={"User-Agent": self._ua if user_agent is None else user_agent,
                                 "Accept": accept, **(headers or {})},
                        trace_request_ctx={"on_sent": on_sent}) as resp:
                    peer = _peer_address(resp)
                    if peer:
                        self._guard.check(host, peer)
                    if file_bytes > 0 and not _html_or_untyped(resp.headers.get("Content-Type")):
                        limit = min(limit, file_bytes)
                    body, truncated = await _read_bounded(resp.content, limit)
                    if truncated:       # the rest is never read: the connection is not reused
                        resp.close()
                    return FetchResult(
                        url=url, status=Status.OK, http_status=resp.status,
                        headers=tuple((k, v) for k, v in resp.headers.items()),
                        body=body, truncated=truncated, remote_address=peer or "",
                        fetched_at=fetched_at, origin_seconds=self._clock() - started)
        except BlockedAddress as exc:
            return failed(Status.BLOCKED_ADDRESS, str(exc))
        except urls.InvalidUrl as exc:
            return failed(Status.INVALID_URL, str(exc))
        except (asyncio.TimeoutError, aiohttp.ServerTimeoutError):
            return failed(Status.TIMEOUT, f"no complete answer within {self._limits.total_timeout:g}s")
        except aiohttp.ClientConnectorDNSError as exc:
            return failed(Status.DNS_ERROR, f"cannot resolve {exc.host}: {exc.os_error}")
        except aiohttp.InvalidURL as exc:
            return failed(Status.INVALID_URL, f"invalid URL: {exc}")
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return failed(Status.CONNECTION_ERROR, f"{type(exc).__name__}: {exc}")


async def _headers_sent(session, ctx, params) -> None:
    on_sent = (ctx.trace_request_ctx or {}).get("on_sent")
    if on_sent is not None:
        on_sent()


def _html_or_untyped(content_type: str | None) -> bool:
    """Whether a declared Content-Type is HTML, or absent (sniffed later, read as a page)."""
    kind = declared_type(content_type)
    return not kind or kind in HTML_TYPES


def _peer_address(resp: aiohttp.ClientResponse) -> str | None:
    conn = resp.connection
    transport = conn.transport if conn is not None else None
    peer = transport.get_extra_info("peername") if transport is not None else None
    return peer[0] if peer else None


async def _read_bounded(stream: aiohttp.StreamReader, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of the (decoded) body, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = await stream.read(min(65536, limit + 1 - size))
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        size += len(chunk)
    body = b"".join(chunks)
    return body[:limit], True
