"""Name resolution for fetchers: `dns_overrides`, then the system resolver, then the guard."""
from __future__ import annotations

import fnmatch
import socket
from typing import Mapping

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from spiderduck.fetcher.guard import AddressGuard, BlockedAddress


class GuardedResolver(AbstractResolver):
    def __init__(self, guard: AddressGuard, overrides: Mapping[str, str] | None = None,
                 upstream: AbstractResolver | None = None):
        self._guard = guard
        # Most specific first: exact names, then longer globs ("a.shop.test" before "*.test").
        items = [(pattern.lower(), ip) for pattern, ip in (overrides or {}).items()]
        items.sort(key=lambda item: (any(c in item[0] for c in "*?["), -len(item[0])))
        self._overrides = tuple(items)
        self._upstream = upstream or DefaultResolver()

    def override_for(self, host: str) -> str | None:
        host = host.lower().rstrip(".")
        for pattern, ip in self._overrides:
            if fnmatch.fnmatchcase(host, pattern):
                return ip
        return None

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        ip = self.override_for(host)
        if ip is not None:
            fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
            results: list[ResolveResult] = [{"hostname": host, "host": ip, "port": port,
                                             "family": fam, "proto": 0, "flags": 0}]
        else:
            results = await self._upstream.resolve(host, port, family)
        allowed = [r for r in results if self._guard.is_allowed(r["host"])]
        if not allowed:
            raise BlockedAddress(host, results[0]["host"] if results else "?")
        return allowed

    async def close(self) -> None:
        await self._upstream.close()
