"""The metadata-api role: wiring for start and stop."""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import AsyncContextManager

from spiderduck.bus import streams as bus

from spiderduck.bus import credentials as nats_auth
from spiderduck.bus.pending import PendingLookup, queued_bucket
from spiderduck.core.config import Settings
from spiderduck.core.freshness import Freshness
from spiderduck.extract.signals import robots_token
from spiderduck.metadata_api import server
from spiderduck.bus.denylist import Denylist
from spiderduck.metadata_api.admins import Admins, admin_token_file
from spiderduck.metadata_api.auth import RateLimit, TokenFile
from spiderduck.metadata_api.forget import ForgetService
from spiderduck.metadata_api.forgetting import Forgetter
from spiderduck.metadata_api.places import Places
from spiderduck.metadata_api.queueing import QueueRequests
from spiderduck.query.explainer import Explainer
from spiderduck.query.resolver import Resolver
from spiderduck.stores.open import open_content_store, open_metadata_store

log = logging.getLogger("spiderduck.metadata_api")

# What serves beside the API from its store and NATS, once the API serves (the command gives the
# web UI: src/spiderduck/cli/roles.py): called with (settings, store, pending, js, queued, resolver), the last three
# None without NATS, ExplainUrl's `explainer=`, and the guard's TokenFile `tokens=` (None without
# metadata_api.tokens_file: one object, so the file is read once) and ResolveUrl's RateLimit
# `resolve_limit=` (None with resolve_rate 0: one bucket per token across gRPC and HTTP) and its
# Places `resolve_places=` (max_concurrent_resolves and max_resolves_per_caller across both), and
# the Forgetter `forgetter=` (metadata_api.forgetting, None without NATS: the web UI's Forget; its
# `denylist` is the one GetUrlMetadata and the resolver check) and the TokenFile of
# metadata_api.admin_tokens_file `admin_tokens=` (None without: who may Forget in the web UI), it
# returns an async context manager, entered until the role stops.
Beside = Callable[..., Awaitable[AsyncContextManager]]


async def run_metadata_api(settings: Settings, stop: asyncio.Event, beside: Beside | None = None) -> None:
    """Serves the metadata store; with nats_url set it also asks NATS which URLs are pending
    (spiderduck.bus.pending), serves ResolveUrl (spiderduck.query.resolver) and the submissions asked
    for on spiderduck.urls.queue (metadata_api.queueing), and fails at start, as the
    other roles do, if that NATS cannot be reached. `beside` (see Beside) is entered once the API
    serves and left after it has stopped."""
    async with contextlib.AsyncExitStack() as stack:
        store = await stack.enter_async_context(await open_metadata_store(settings.metadata_store_url))
        # Opened always (making one opens no file): ExplainUrl reads it, Forget erases from it.
        content = await stack.enter_async_context(await open_content_store(settings.content_store_url))
        pending = resolver = js = queued = denylist = forgetter = None
        if settings.nats_url:
            nc = await nats_auth.connect_role(settings, "metadata-api", "spiderduck-metadata-api")
            stack.push_async_callback(nc.close)
            js = nc.jetstream()
            await bus.ensure_streams(js, settings.streams, replicas=settings.nats_replicas)
            queued = await queued_bucket(js, settings.streams.queued_ttl, replicas=settings.nats_replicas)
            pending = PendingLookup(
                await bus.claim_bucket(js, settings.scheduler.claim_ttl, replicas=settings.nats_replicas),
                queued)
            denylist = await Denylist.open(js, replicas=settings.nats_replicas)
            stack.push_async_callback(denylist.close)
            forgetter = Forgetter(store, content, js, denylist, settle=settings.metadata_api.forget_wait)
            resolver = await Resolver(store, nc, js, queued, freshness=Freshness.from_settings(settings),
                                      serve_stale_for=settings.serve_stale_for, denylist=denylist).start()
            stack.push_async_callback(resolver.close)
            queueing = await QueueRequests(nc, js, queued,
                                           concurrency=settings.metadata_api.max_concurrent_queueing).start()
            stack.push_async_callback(queueing.close)
        else:
            log.info("metadata-api without NATS (nats_url not set): no ResolveUrl, no Forget, and "
                     "`pending` is never told")
        api = settings.metadata_api
        explainer = Explainer(store, content if api.explain_workers else None, workers=api.explain_workers,
                                      budget=settings.process.extract_timeout, parser=settings.process.parser,
                                      robots_token=robots_token(settings.fetcher.user_agent),
                                      min_image_size=settings.process.min_image_size,
                                      forgotten=denylist and (lambda key: denylist.forgotten(key, canonical=True)))
        stack.push_async_callback(explainer.close)
        tokens = TokenFile(api.tokens_file) if api.tokens_file else None
        limit = RateLimit(api.resolve_rate) if api.resolve_rate > 0 else None
        places = Places(api.max_concurrent_resolves, api.max_resolves_per_caller)
        admin_tokens = admin_token_file(api)
        grpc_server = server.grpc_server(settings, tokens=tokens, limit=limit, admin_tokens=admin_tokens)
        server.register(grpc_server, store, api, pending, resolver, explainer, places,
                        ForgetService(forgetter, Admins(api, admin_tokens), api), denylist)
        async with grpc_server:
            log.info("metadata-api serving on %s", grpc_server.address)
            if beside is not None:
                await stack.enter_async_context(await beside(settings, store, pending, js, queued, resolver,
                                                             explainer=explainer, tokens=tokens,
                                                             resolve_limit=limit, resolve_places=places,
                                                             forgetter=forgetter, admin_tokens=admin_tokens))
            await stop.wait()
