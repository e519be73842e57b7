"""ResolveUrl's places: at most metadata_api.max_concurrent_resolves calls wait at once, and
at most metadata_api.max_resolves_per_caller of them are one caller's, so one token (or one
peer) never holds every place. The web UI's /api/v1/preview takes its places from the same
Places (the role makes one and gives it to both), so a token holds no more across gRPC and HTTP.

The caller is the one the metadata API's guard named (spiderduck.metadata_api.auth sets
CALLER: a token's name; without tokens, a verified client certificate's identity), else the
peer's address without its port (every connection of one host is one caller).
"""
from __future__ import annotations

from contextvars import ContextVar

import grpc.aio

from spiderduck.rpc.tls import caller

# Set by the guard in the call's own task, before the method runs; None: the guard named no one.
CALLER: ContextVar[str | None] = ContextVar("spiderduck_metadata_caller", default=None)


def caller_of(context: grpc.aio.ServicerContext) -> str:
    """Whose share of the places this call takes."""
    named = CALLER.get() or caller(context)
    if named:
        return named
    peer = context.peer() or ""
    if peer.startswith(("ipv4:", "ipv6:")):
        return peer.rpartition(":")[0]          # ipv4:127.0.0.1:5123 -> ipv4:127.0.0.1
    return peer


class Places:
    """`total` places for calls at once, at most `per_caller` of them one caller's."""

    def __init__(self, total: int, per_caller: int):
        self.total = total
        self.per_caller = per_caller
        self._held: dict[str, int] = {}
        self._taken = 0

    def take(self, who: str) -> str | None:
        """Takes a place for `who`; else returns why not (give it back with `give`)."""
        if self._taken >= self.total:
            return ("too many ResolveUrl and /api/v1/preview calls at once "
                    f"({self.total}, metadata_api.max_concurrent_resolves)")
        held = self._held.get(who, 0)
        if held >= self.per_caller:
            return (f"this caller has {held} ResolveUrl or /api/v1/preview calls waiting, "
                    "metadata_api.max_resolves_per_caller; wait for one to end")
        self._held[who] = held + 1
        self._taken += 1
        return None

    def give(self, who: str) -> None:
        self._taken -= 1
        held = self._held[who] - 1
        if held:
            self._held[who] = held
        else:
            del self._held[who]
