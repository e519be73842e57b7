"""Who may call MetadataService, and how often ResolveUrl: the metadata API's guard.

With `metadata_api.tokens_file` set (lines of `name:token`; blank lines and #comments
skipped), every call needs gRPC metadata `authorization: Bearer <token>`: none, several, or a
token not in the file, is UNAUTHENTICATED. The file (a regular file of at most MAX_FILE_BYTES,
UTF-8 with or without a BOM) is read again when it changes (a rotated Kubernetes Secret), looked
at most every RELOAD_EVERY seconds. Revocation fails closed: a file that turns missing, empty,
unreadable or malformed refuses every token from the next look on (an ERROR in the log names the
file and why, never a token), until a good file is back. At start such a file is a ConfigError. Tokens are compared in constant time, and never logged or echoed:
a refusal names only the caller's token *name* once known. A token of
`metadata_api.admin_tokens_file` (read by the same rules) passes too: an admin needs one token;
what only an admin may call is metadata_api.admins' to say.

ResolveUrl starts crawls, so each caller (the token's name; without tokens, the identity of a
verified client certificate) may call it at most `metadata_api.resolve_rate` times a second,
with a burst of as many: past that, RESOURCE_EXHAUSTED (0: no bound). A caller known by neither (plaintext
`up` on loopback) is not bounded here; max_concurrent_resolves still is. The caller named is
kept for the call (metadata_api.places.CALLER): its share of the ResolveUrl places.
"""
from __future__ import annotations

import hmac
import logging
import os
import stat
import time
from typing import Callable

import grpc
import grpc.aio

from spiderduck.core.config import MetadataApiSettings, TlsSettings
from spiderduck.core.errors import ConfigError
from spiderduck.metadata_api.places import CALLER
from spiderduck.rpc.guard import Guard
from spiderduck.rpc.reloading import stamp
from spiderduck.rpc.tls import caller

log = logging.getLogger("spiderduck.metadata_api")

RELOAD_EVERY = 5.0        # seconds between looks at the tokens file's modification time
MAX_CALLERS = 10_000      # rate buckets kept; past that, the idlest are forgotten
MAX_FILE_BYTES = 1 << 20  # a larger tokens file is refused (about 20,000 tokens)
BEARER = "bearer "


def parse_tokens(text: str, path: str, setting: str = "metadata_api.tokens_file") -> dict[str, str]:
    """name -> token from the file's text; ConfigError (with the line number, never a token)."""
    tokens: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, token = line.partition(":")
        name, token = name.strip(), token.strip()
        if not sep or not name or not token:
            raise ConfigError(f"{setting}: {path} line {number}: expected name:token")
        if name in tokens:
            raise ConfigError(f"{setting}: {path} line {number}: name {name!r} again")
        if not all(" " <= c <= "~" for c in token):     # what a gRPC metadata value can carry
            raise ConfigError(f"{setting}: {path} line {number}: the token of {name!r} "
                              "has characters a gRPC header cannot carry (printable ASCII only)")
        tokens[name] = token
    if not tokens:
        raise ConfigError(f"{setting}: {path} holds no name:token line")
    return tokens


class TokenFile:
    """The tokens of a file, re-read when its modification time changes."""

    def __init__(self, path: str, clock: Callable[[], float] = time.monotonic,
                 setting: str = "metadata_api.tokens_file"):
        self.path = path
        self.setting = setting          # what the errors name: tokens_file or admin_tokens_file
        self._clock = clock
        self._stamp = self._stat()
        self._tokens = self._read()
        self._looked = clock()
        self._failure = ""              # why the file last looked at was refused ("" when read)

    def _stat(self) -> tuple[int, ...] | None:
        """What tells a new file from the one read: a file moved in place (a rotated Secret's
        symlink swap, rsync, tar) is another inode even with the same size and mtime, and
        rewriting one in place changes its ctime, which no one can set back."""
        return stamp(self.path)

    def _read(self) -> dict[str, str]:
        """The file's tokens. Read on the event loop, so only a regular file, of at most
        MAX_FILE_BYTES: a FIFO would wait for a writer (opened without blocking, and refused)
        and a device could be endless."""
        def refused(reason: str) -> ConfigError:
            return ConfigError(f"{self.setting}: cannot read {self.path}: {reason}")
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise refused(exc.strerror or "cannot open") from None
        try:
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    raise refused("not a regular file")
                data = fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise refused(exc.strerror or "read failed") from None
        if len(data) > MAX_FILE_BYTES:
            raise refused(f"larger than {MAX_FILE_BYTES} bytes")
        try:
            text = data.decode("utf-8-sig")          # a BOM is not part of the first name
        except UnicodeDecodeError:
            raise refused("not UTF-8 text") from None
        return parse_tokens(text, self.path, self.setting)

    def _refresh(self) -> None:
        now = self._clock()
        if now - self._looked < RELOAD_EVERY:
            return
        self._looked = now
        stamp = self._stat()
        if stamp == self._stamp and not self._failure:
            return
        self._stamp = stamp       # a refused file is looked at again each time: the cause may pass
        try:
            tokens = self._read()
        except ConfigError as exc:
            self._tokens = {}
            if str(exc) != self._failure:
                log.error("%s; every token is refused until it is readable again", exc)
            self._failure = str(exc)
            return
        self._tokens, self._failure = tokens, ""
        log.info("%s %s read again: %d tokens", self.setting, self.path, len(tokens))

    def name_of(self, token: str) -> str | None:
        """The name whose token this is, else None; every token is compared, in constant time."""
        self._refresh()
        found = None
        given = token.encode("utf-8", "surrogatepass")
        for name, known in self._tokens.items():
            if hmac.compare_digest(given, known.encode("utf-8")):
                found = name
        return found


class RateLimit:
    """A token bucket per caller: `rate` calls a second, bursts of max(1, rate)."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.burst = max(1.0, rate)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}    # caller -> (level, at)

    def allow(self, who: str) -> bool:
        now = self._clock()
        level, at = self._buckets.get(who, (self.burst, now))
        level = min(self.burst, level + (now - at) * self.rate)
        if level < 1.0:
            self._buckets[who] = (level, now)
            return False
        self._buckets[who] = (level - 1.0, now)
        if len(self._buckets) > MAX_CALLERS:
            self._forget_idlest()
        return True

    def _forget_idlest(self) -> None:
        for who, _ in sorted(self._buckets.items(), key=lambda item: item[1][1])[:MAX_CALLERS // 10]:
            del self._buckets[who]


def _authorization(context: grpc.aio.ServicerContext) -> list[str]:
    """The values of the call's `authorization` metadata (gRPC keeps every one sent)."""
    return [value for key, value in context.invocation_metadata() or ()
            if key == "authorization" and isinstance(value, str)]


def _bearer(value: str) -> str:
    """The token of `Bearer <token>` (the scheme in any case), else ""."""
    return value[len(BEARER):].strip() if value[:len(BEARER)].lower() == BEARER else ""


def bearer_token(context: grpc.aio.ServicerContext) -> str:
    """The call's one bearer token, else "" (none, several, or not `Bearer <token>`)."""
    given = _authorization(context)
    return _bearer(given[0]) if len(given) == 1 else ""


def metadata_guard(settings: MetadataApiSettings, tls: TlsSettings, tokens: TokenFile | None = None,
                   limit: RateLimit | None = None, admin_tokens: TokenFile | None = None) -> Guard | None:
    """The guard of MetadataService for these settings; None when there is nothing to check
    (no tokens file, and no ResolveUrl rate or no verified client certificates to tell callers
    apart by), so the server installs no interceptor and a call costs what it did before.
    `tokens` and `limit`: the file's TokenFile and the ResolveUrl buckets when the caller shares
    them (the web UI's /api/v1/preview counts in the same buckets), else made here. With a
    tokens file, a token of `admin_tokens` (metadata_api.admin_tokens_file) passes too; who may
    Forget is metadata_api.admins' question, asked by those methods themselves."""
    if tokens is None and settings.tokens_file:
        tokens = TokenFile(settings.tokens_file)
    if admin_tokens is None and settings.admin_tokens_file and tokens is not None:
        admin_tokens = TokenFile(settings.admin_tokens_file, setting="metadata_api.admin_tokens_file")
    by_certificate = tls.require_client_cert
    if limit is None and settings.resolve_rate > 0:
        limit = RateLimit(settings.resolve_rate)
    if tokens is None and not (by_certificate and limit is not None):
        return None

    async def guard(method: str, context: grpc.aio.ServicerContext) -> None:
        who = caller(context) if by_certificate else None
        if tokens is not None:
            given = _authorization(context)
            if not given:
                await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                    "MetadataService needs gRPC metadata authorization: Bearer <token>")
            if len(given) > 1:
                # A proxy in front may have judged another one: which is meant is anyone's guess.
                await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                    "several authorization metadata: send one, authorization: Bearer <token>")
            token = _bearer(given[0])
            who = tokens.name_of(token) if token else None
            if who is None and token and admin_tokens is not None:
                who = admin_tokens.name_of(token)
            if who is None:
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the bearer token is not known")
        CALLER.set(who)
        if method == "ResolveUrl" and who is not None and limit is not None and not limit.allow(who):
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"caller {who!r} is over metadata_api.resolve_rate "
                                f"({settings.resolve_rate:g} ResolveUrl calls a second)")
    return guard
