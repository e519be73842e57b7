"""What robots.txt says about an origin, and its wire form for the shared (memcached) cache.

A `RobotsVerdict` is one of four kinds (RFC 9309 §2.3.1):

    PARSED        2xx: the body's rules
    ALLOW_ALL     4xx, or a redirect we do not follow: no rules
    DISALLOW_ALL  5xx: disallow all, with the short error TTL
    UNREACHABLE   no answer (DNS, connection, timeout, guard): disallow all, and the
                  hop reports why (the failure's Status) rather than ROBOTS_DISALLOWED

Only the raw body and the kind travel to the shared cache; a reader re-parses the
body into `RobotsRules`, which is cheap. Wire form, version 1:

    b"SDRV/1\\n" + JSON header (ASCII, one line) + b"\\n" + raw robots.txt body

with the header `{"kind": ..., "expires": <epoch seconds>, "failure": {...} | null}`.
Expiry is wall-clock time, since the readers are other processes; `decode` answers
the remaining TTL, and anything expired, malformed or of another version is a miss.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import logging
import time
from typing import Callable

from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.robots.rules import RobotsRules

__all__ = ["RobotsVerdict", "VerdictKind", "VerdictCodec", "MAGIC"]

log = logging.getLogger("spiderduck.fetcher.robots")

MAGIC = b"SDRV/1\n"


class VerdictKind(str, enum.Enum):
    PARSED = "parsed"
    ALLOW_ALL = "allow_all"
    DISALLOW_ALL = "disallow_all"
    UNREACHABLE = "unreachable"


@dataclasses.dataclass(frozen=True)
class RobotsVerdict:
    """The rules for an origin, or the network failure that kept us from reading them.

    An unreachable robots.txt means "disallow all" (RFC 9309 §2.3.1.4); the hop
    then reports why (DNS_ERROR, BLOCKED_ADDRESS, ...) rather than ROBOTS_DISALLOWED.
    A verdict built without a `kind` works in-process but is never shared.
    """
    rules: RobotsRules
    failure: FetchResult | None = None
    kind: VerdictKind | None = None
    body: bytes = dataclasses.field(default=b"", repr=False, compare=False)

    @classmethod
    def parsed(cls, body: bytes) -> RobotsVerdict:
        return cls(RobotsRules.parse(body), kind=VerdictKind.PARSED, body=bytes(body))

    @classmethod
    def allow_all(cls) -> RobotsVerdict:
        return cls(RobotsRules.allow_all(), kind=VerdictKind.ALLOW_ALL)

    @classmethod
    def disallow_all(cls) -> RobotsVerdict:
        return cls(RobotsRules.disallow_all(), kind=VerdictKind.DISALLOW_ALL)

    @classmethod
    def unreachable(cls, failure: FetchResult) -> RobotsVerdict:
        return cls(RobotsRules.disallow_all(), failure, kind=VerdictKind.UNREACHABLE)


def _failure_fields(failure: FetchResult) -> dict:
    return {"url": failure.url, "status": failure.status.name, "http_status": failure.http_status,
            "error": failure.error, "remote_address": failure.remote_address}


class VerdictCodec:
    """Verdict <-> bytes for the shared cache. `clock` is wall time (epoch seconds)."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self._clock = clock

    def encode(self, verdict: RobotsVerdict, ttl: float) -> bytes | None:
        """The payload, or None for a verdict that cannot be shared (no kind)."""
        if verdict.kind is None:
            return None
        failure = verdict.failure
        if verdict.kind is VerdictKind.UNREACHABLE and failure is None:
            return None
        header = {"kind": verdict.kind.value, "expires": self._clock() + ttl,
                  "failure": _failure_fields(failure) if failure is not None else None}
        body = verdict.body if verdict.kind is VerdictKind.PARSED else b""
        return MAGIC + json.dumps(header, separators=(",", ":")).encode("ascii") + b"\n" + body

    def decode(self, payload: bytes) -> tuple[RobotsVerdict, float] | None:
        """(verdict, seconds it may still be trusted), or None: expired, malformed, other version."""
        if not payload.startswith(MAGIC):
            return None
        header_line, newline, body = payload[len(MAGIC):].partition(b"\n")
        try:
            if not newline:
                raise ValueError("no header line")
            header = json.loads(header_line)
            kind = VerdictKind(header["kind"])
            remaining = float(header["expires"]) - self._clock()
            if remaining <= 0:
                return None
            return self._verdict(kind, body, header.get("failure")), remaining
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("ignoring a malformed shared robots.txt verdict: %s", exc)
            return None

    @staticmethod
    def _verdict(kind: VerdictKind, body: bytes, failure: dict | None) -> RobotsVerdict:
        if kind is VerdictKind.PARSED:
            return RobotsVerdict.parsed(body)
        if kind is VerdictKind.ALLOW_ALL:
            return RobotsVerdict.allow_all()
        if kind is VerdictKind.DISALLOW_ALL:
            return RobotsVerdict.disallow_all()
        return RobotsVerdict.unreachable(FetchResult(
            url=str(failure["url"]), status=Status[failure["status"]],
            http_status=int(failure["http_status"]), error=str(failure["error"]),
            remote_address=str(failure["remote_address"])))
