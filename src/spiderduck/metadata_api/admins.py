"""Who is an admin of MetadataService: who may Forget, ListForgotten and Unforget (issue 39).

    admins = Admins(settings.metadata_api, tokens=TokenFile(api.admin_tokens_file, ...))
    who = admins.admin(context)     # the admin's identity, or None

An admin is a caller whose bearer token is in `metadata_api.admin_tokens_file` (named by its
name there), or whose verified client certificate's identity (spiderduck.rpc.tls.caller) is in
`metadata_api.admin_callers`. With neither set (the embedded default, `spiderduck up`), a caller on
loopback is one: a peer of 127.0.0.0/8 or ::1 (also as ::ffff:127.x.x.x), or a unix socket.
Anyone else is refused PERMISSION_DENIED by the method (a call with no token where
metadata_api.tokens_file asks for one never reaches it: the guard answers UNAUTHENTICATED).

The identity named is what the audit log and the denylist's `by` say: a token's name, a
certificate's identity, or on loopback the guard's caller when it named one, else the peer's
address without its port ("ipv4:127.0.0.1").
"""
from __future__ import annotations

import ipaddress

import grpc
import grpc.aio

from spiderduck.core.config import MetadataApiSettings
from spiderduck.metadata_api.auth import TokenFile, bearer_token
from spiderduck.metadata_api.places import caller_of
from spiderduck.rpc.tls import caller

ADMIN_TOKENS_SETTING = "metadata_api.admin_tokens_file"


def on_loopback(peer: str) -> bool:
    """Whether a gRPC peer ("ipv4:127.0.0.1:5123", "ipv6:[::1]:5123", "unix:/run/x.sock") is
    this host's loopback or a unix socket."""
    if peer.startswith(("unix:", "unix-abstract:")):
        return True
    family, _, rest = peer.partition(":")
    if family not in ("ipv4", "ipv6"):
        return False
    host = rest.rpartition(":")[0].strip("[]").partition("%")[0]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def admin_token_file(settings: MetadataApiSettings) -> TokenFile | None:
    """metadata_api.admin_tokens_file's tokens (read now: a bad file is a ConfigError at start)."""
    return TokenFile(settings.admin_tokens_file, setting=ADMIN_TOKENS_SETTING) if settings.admin_tokens_file else None


class Admins:
    def __init__(self, settings: MetadataApiSettings, tokens: TokenFile | None = None):
        self._tokens = tokens if tokens is not None else admin_token_file(settings)
        self._callers = frozenset(settings.admin_callers)
        self.loopback_only = self._tokens is None and not self._callers

    def admin(self, context: grpc.aio.ServicerContext) -> str | None:
        """The calling admin's identity, else None."""
        if self._tokens is not None:
            token = bearer_token(context)
            name = self._tokens.name_of(token) if token else None
            if name is not None:
                return name
        if self._callers:
            who = caller(context)
            if who is not None and who in self._callers:
                return who
        if self.loopback_only and on_loopback(context.peer() or ""):
            return caller_of(context)
        return None

    async def check(self, method: str, context: grpc.aio.ServicerContext) -> str:
        """The admin's identity; anyone else's call ends PERMISSION_DENIED."""
        who = self.admin(context)
        if who is None:
            how = ("only a caller on loopback may (set metadata_api.admin_tokens_file or "
                   "metadata_api.admin_callers to allow others)" if self.loopback_only else
                   "it needs a token of metadata_api.admin_tokens_file or a client certificate "
                   "named in metadata_api.admin_callers")
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, f"{method} is an admin action: {how}")
        return who
