"""The admin actions behind the web UI: submit or refresh a URL (published to
spiderduck.urls.submit, marked queued first, as `spiderduck submit` does), and pause, resume or
re-rate a domain (FetcherAdmin on every fetcher; its owner applies it)."""
from __future__ import annotations

import math

from spiderduck.rpc import fetcher_admin

from spiderduck.bus import submissions

from spiderduck.core import urls
from spiderduck.core.config import TlsSettings, parse_duration
from spiderduck.core.errors import BusError, ConfigError, SpiderDuckError
from spiderduck.v1 import fetcher_pb2

SOURCE = "web"


class ActionFailed(SpiderDuckError):
    """An admin action not done: an HTTP status and why. Retryable on 503 (NATS or the
    fetchers did not answer)."""

    def __init__(self, status: int, message: str):
        super().__init__(message, retryable=status == 503)
        self.status = status


class Actions:
    def __init__(self, js, queued, fetcher_addresses: list[str], tls: TlsSettings | None = None):
        self._js = js                      # None: no NATS, so no submit
        self._queued = queued
        self._fetchers = fetcher_addresses
        self._tls = tls

    @property
    def can_submit(self) -> bool:
        return self._js is not None

    async def submit(self, url: str, *, refresh: bool) -> str:
        if self._js is None:
            raise ActionFailed(503, "submitting needs NATS, and this metadata-api has none (set nats_url)")
        url = urls.without_userinfo(url)       # never published, kept or shown back
        try:
            urls.canonicalize(url)
        except urls.InvalidUrl as exc:
            raise ActionFailed(400, f"not a fetchable URL: {exc}") from None
        try:
            await submissions.submit(self._js, self._queued,
                                     submissions.encode(url, refresh=refresh, source=SOURCE))
        except BusError as exc:
            raise ActionFailed(503, f"not submitted: {exc}") from None
        return f"{'refresh of' if refresh else 'submitted'} {url}: queued"

    async def domain(self, action: str, domain: str, value: str = "") -> str:
        if action == "pause":
            call = fetcher_admin.pause(domain, _positive(value, "for", parse_duration) if value else 0.0)
        elif action == "resume":
            call = fetcher_admin.resume(domain)
        elif action == "set-rate":
            call = fetcher_admin.set_rate(domain, _positive(value, "rate", float))
        else:
            raise ActionFailed(404, f"no action {action!r}")
        answers = await fetcher_admin.answers(self._fetchers, call, self._tls)
        if not answers.infos:
            invalid = [exc.details() for _, exc in answers.failed
                       if exc.code().name == "INVALID_ARGUMENT"]
            if invalid:
                raise ActionFailed(400, invalid[0])
            raise ActionFailed(503, "; ".join(answers.reasons()) or "no fetcher to ask")
        info = answers.infos[0]
        state = fetcher_pb2.DomainState.Name(info.state).removeprefix("DOMAIN_").lower()
        return f"{info.domain}: {state}, {info.rate:g}/s (fetcher {info.owner})"


def _positive(text: str, name: str, parse) -> float:
    try:
        value = parse(text)
    except (ValueError, ConfigError):
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise ActionFailed(400, f"{name} must be a positive number, got {text[:40]!r}")
    return value
