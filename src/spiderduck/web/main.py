"""The web UI's wiring: its server on web.listen, built from the store and NATS another role
has opened (the command serves it beside the metadata API: src/spiderduck/cli/roles.py)."""
from __future__ import annotations

import logging

from spiderduck.bus import streams as bus
from spiderduck.core.config import Settings
from spiderduck.query.explainer import Explainer
from spiderduck.web.actions import Actions
from spiderduck.web import security
from spiderduck.web.app import WebContext
from spiderduck.web.feed import RecentFeed
from spiderduck.web.server import WebServer

log = logging.getLogger("spiderduck.metadata_api")


async def open_web(settings: Settings, store, pending, js, queued, resolver=None, explainer=None,
                   tokens=None, resolve_limit=None, resolve_places=None, forgetter=None,
                   admin_tokens=None) -> WebServer:
    """The web UI on web.listen, from the same store, NATS and resolver (spiderduck.query.resolver, which
    /api/v1/preview resolves with as ResolveUrl does) as the metadata API (`js`, `queued` and
    `resolver` None without NATS), and ExplainUrl's explainer (metadata_api.explain: /api/v1/explain
    and the card page's "Why this preview"), and the metadata API's TokenFile (`tokens`, None without
    metadata_api.tokens_file: web.signin) and ResolveUrl's per-token RateLimit (`resolve_limit`, which
    /api/v1/preview counts in too) and its places (`resolve_places`: max_concurrent_resolves and
    max_resolves_per_caller, which /api/v1/preview takes too; None: unbounded here): an async
    context manager that serves while entered. `forgetter`: the metadata API's Forgetter
    (spiderduck.metadata_api.forgetting, None without NATS), for the admin's Forget (issue 39,
    web.forgetting), and `admin_tokens` its TokenFile of metadata_api.admin_tokens_file (None without).
    An unusable web.admin_token_file is a ConfigError here, before anything is opened."""
    admin_token = security.admin_token(settings.web)
    feed = None
    if js is not None:
        try:
            feed = await RecentFeed(js, size=settings.web.recent,
                                    max_listeners=settings.web.max_live_clients).start()
        except Exception as exc:  # noqa: BLE001 -- nats-py's errors: the API serves on without it
            log.warning("web UI without its live list: reading %s failed: %s", bus.EVENTS_STREAM, exc)
    ctx = WebContext(settings=settings, store=store, pending=pending, feed=feed, resolver=resolver,
                     explainer=explainer or Explainer(store, None, workers=0, budget=1.0, parser="", robots_token=""),
                     actions=Actions(js, queued, settings.fetcher_addresses, settings.tls), tokens=tokens,
                     resolve_limit=resolve_limit, resolve_places=resolve_places, admin_token=admin_token,
                     forgetter=forgetter, admin_tokens=admin_tokens,
                     forget_loopback_only=not (settings.metadata_api.admin_tokens_file
                                               or settings.metadata_api.admin_callers))
    return WebServer(settings.web.listen, ctx, stop_grace=settings.drain_seconds)
