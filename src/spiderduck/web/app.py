"""The web UI's routes (aiohttp, Jinja2 templates escaped by default).

    GET  /                 lookup form and the latest processed URLs, live (GET /events: SSE)
    GET  /url?u=URL        the preview card, the record as JSON, the redirect chain, freshness;
                           a URL never seen: "not seen" and a submit button
    GET  /domains          the fetchers' domain table
    GET  /healthz          200 {"status": "ok"} while serving
    GET  /signin, POST /signin   with metadata_api.tokens_file: the sign-in form (web.signin)
    GET  /api/v1/preview?url=U[&max_age=S][&refresh=1], /api/v1/explain?url=U, /oembed?url=U
                           the JSON API (web.api); errors as JSON {"error": ...}
    POST /admin/submit, /admin/refresh            form u=URL
    POST /admin/pause, /admin/resume, /admin/set-rate   form domain=D [for=30m | rate=2]
         (Authorization: Bearer <web.admin_token or web.admin_token_file's>; answered as JSON {ok, message})
    GET  /forget, POST /admin/forget   forget URLs or a domain (web.forgetting: an admin of the
                           metadata API besides the above)
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from dataclasses import dataclass
from typing import Callable

import jinja2
from aiohttp import web

from spiderduck.bus.pending import PendingLookup
from spiderduck.core.config import Settings
from spiderduck.core.errors import BusError, StoreError
from spiderduck.core.freshness import Freshness
from spiderduck.query.explainer import Explainer
from spiderduck.query.resolver import Resolver
from spiderduck.rpc import fetcher_admin
from spiderduck.stores.keys import lookup_key
from spiderduck.stores.metadata import MetadataStore
from spiderduck.v1 import fetcher_pb2
from spiderduck.web import api, forgetting, security, signin, views
from spiderduck.web.actions import Actions, ActionFailed
from spiderduck.web.feed import LAGGED, FeedClosed, RecentFeed, TooManyListeners

log = logging.getLogger("spiderduck.web")
HERE = os.path.dirname(__file__)
HEARTBEAT = 5.0              # seconds between keep-alive comments on an idle live list (a closed
                             # tab's place is freed by the next one, which fails)
WRITE_TIMEOUT = 10.0         # a live list that takes longer to take one write (it stopped
                             # reading) is closed, so it holds no place, socket or buffer
MAX_FORM_BYTES = 65_536      # an admin form's body


@dataclass
class WebContext:
    settings: Settings
    store: MetadataStore
    actions: Actions
    pending: PendingLookup | None = None
    feed: RecentFeed | None = None
    resolver: Resolver | None = None     # the metadata API's (spiderduck.query.resolver); None without NATS
    explainer: Explainer | None = None   # the metadata API's (spiderduck.query.explainer); None: from the records alone
    clock: Callable[[], float] = time.time
    tokens: signin.Tokens | None = None  # the metadata API's TokenFile (metadata_api.tokens_file); None: open
    resolve_limit: signin.Limit | None = None   # ResolveUrl's buckets per token, /api/v1/preview's too
    resolve_places: signin.Places | None = None  # ResolveUrl's places, /api/v1/preview's too
    admin_token: str = ""                # what admin actions need (security.admin_token); "" = off
    forgetter: forgetting.Forgets | None = None   # the metadata API's Forgetter; None: no NATS, no forget
    admin_tokens: signin.Tokens | None = None     # its TokenFile of metadata_api.admin_tokens_file
    forget_loopback_only: bool = True    # neither admin_tokens_file nor admin_callers: loopback is admin


CONTEXT = web.AppKey("context", WebContext)
SESSIONS = web.AppKey("sessions", object)         # signin.Sessions, or None without a tokens file
PAGES = web.AppKey("pages", asyncio.Semaphore)   # places of web.max_concurrent_pages
TEMPLATES = web.AppKey("templates", jinja2.Environment)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(HERE, "templates")),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["state_name"] = lambda s: fetcher_pb2.DomainState.Name(s).removeprefix("DOMAIN_").lower()
    return env


def _render(request: web.Request, name: str, status: int = 200, **values) -> web.Response:
    ctx = request.app[CONTEXT]
    html = request.app[TEMPLATES].get_template(name).render(
        admin=bool(ctx.admin_token), live=ctx.feed is not None, **values)
    return web.Response(text=html, status=status, content_type="text/html", charset="utf-8")


async def index(request: web.Request) -> web.Response:
    feed = request.app[CONTEXT].feed
    return _render(request, "index.html", recent=feed.recent() if feed else [])


def bounded(handler):
    """At most web.max_concurrent_pages of these pages at once (each reads the store or asks
    every fetcher); more are answered 503 at once rather than queued."""
    async def page(request: web.Request) -> web.StreamResponse:
        places = request.app[PAGES]
        if places.locked():
            if request.path.startswith(("/api/", "/oembed")):
                return api.error(503, "too many requests at once; try again")
            raise web.HTTPServiceUnavailable(text="too many pages at once; try again")
        async with places:
            return await handler(request)
    return page


@bounded
async def url_page(request: web.Request) -> web.Response:
    ctx = request.app[CONTEXT]
    asked = request.query.get("u", "").strip()
    if not asked:
        raise web.HTTPFound("/")
    if len(asked) > ctx.settings.web.max_url_chars:
        return _render(request, "error.html", 400, message=f"a URL of {len(asked)} characters: "
                       f"at most {ctx.settings.web.max_url_chars} are looked up")
    try:
        record = await ctx.store.get(lookup_key(asked))
    except StoreError as exc:
        return _render(request, "error.html", 503, message=f"the metadata store did not answer: {exc}")
    if record is None:
        return _render(request, "url.html", 404, asked=asked, record=None,
                       pending=await _pending(ctx, asked), submit=ctx.actions.can_submit)
    card = views.card_of(record, ctx.settings.process.embed_allow_hosts)
    security.set_sources(request, card.origins)
    now = ctx.clock()
    return _render(request, "url.html", asked=asked, record=record, card=card,
                   chain=views.chain_of(record), record_json=views.record_json(record, asked),
                   freshness=views.freshness_of(record, Freshness.from_settings(ctx.settings),
                                                ctx.settings.serve_stale_for, now),
                   submit=ctx.actions.can_submit, why=views.why_of(record, *await api.explainer(ctx).fields(record)))


async def _pending(ctx: WebContext, url: str) -> bool | None:
    """Queued or being crawled; None when that cannot be told (no NATS, or NATS failing)."""
    if ctx.pending is None:
        return None
    try:
        [waiting] = await ctx.pending.pending([url])
    except BusError as exc:
        log.warning("web: pending not told: %s", exc)
        return None
    return waiting


@bounded
async def domains_page(request: web.Request) -> web.Response:
    ctx = request.app[CONTEXT]
    answers = await fetcher_admin.list_domains(ctx.settings.fetcher_addresses, tls=ctx.settings.tls)
    return _render(request, "domains.html", infos=answers.infos, failures=answers.reasons())


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: one `data:` line of JSON per processed URL (web.feed.summary)."""
    feed = request.app[CONTEXT].feed
    if feed is None:
        raise web.HTTPNotFound(text="no live list: this metadata-api has no NATS (set nats_url)")
    try:
        async with feed.listen() as queue:
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                                   "Cache-Control": "no-store"})
            await response.prepare(request)
            await _send(response, b": live\n\n")
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), HEARTBEAT)
                except asyncio.TimeoutError:
                    await _send(response, b": keep-alive\n\n")
                    continue
                if item is None:              # the server stops: the stream ends, the page reconnects
                    response.force_close()
                    return response
                if item is LAGGED:
                    break
                await _send(response, b"data: " + json.dumps(item, ensure_ascii=False).encode() + b"\n\n")
    except (TooManyListeners, FeedClosed) as exc:
        raise web.HTTPServiceUnavailable(text=str(exc)) from None
    except (ConnectionResetError, asyncio.TimeoutError):
        pass
    # Gone, stopped reading (a write waited past WRITE_TIMEOUT) or fell behind: the connection is
    # dropped with what it still buffers, so it holds no socket, buffer or keep-alive.
    if request.transport is not None:
        request.transport.abort()
    return web.Response(status=499)


async def _send(response: web.StreamResponse, data: bytes) -> None:
    await asyncio.wait_for(response.write(data), WRITE_TIMEOUT)


def _admin_refused(request: web.Request) -> web.Response | None:
    """The JSON refusal of an admin action without web.admin_token's bearer header, else None."""
    try:
        security.check_admin(request, request.app[CONTEXT].admin_token)
    except security.AdminRefused as exc:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else {}
        return web.json_response({"ok": False, "message": str(exc)}, status=exc.status, headers=headers)
    return None


async def admin(request: web.Request) -> web.Response:
    ctx = request.app[CONTEXT]
    action = request.match_info["action"]
    refused = _admin_refused(request)
    if refused is not None:
        return refused
    form = await request.post()
    try:
        if action in ("submit", "refresh"):
            message = await ctx.actions.submit(str(form.get("u", "")).strip(), refresh=action == "refresh")
        else:
            message = await ctx.actions.domain(action, str(form.get("domain", "")).strip(),
                                               str(form.get("for" if action == "pause" else "rate", "")).strip())
    except ActionFailed as exc:
        return web.json_response({"ok": False, "message": str(exc)}, status=exc.status)
    log.info("web: admin %s: %s", action, message)
    return web.json_response({"ok": True, "message": message})


async def forget_page(request: web.Request) -> web.Response:
    return _render(request, "forget.html", can_forget=request.app[CONTEXT].forgetter is not None)


async def forget(request: web.Request) -> web.Response:
    """POST /admin/forget: an admin action, by an admin of the metadata API (web.forgetting)."""
    ctx = request.app[CONTEXT]
    refused = _admin_refused(request)
    if refused is not None:
        return refused
    sessions = request.app[SESSIONS]
    who = forgetting.admin_of(request, sessions, ctx.admin_tokens, ctx.forget_loopback_only)
    if who is None:
        return web.json_response({"ok": False, "message": forgetting.refusal(sessions, ctx.forget_loopback_only)},
                                 status=403)
    try:
        answer = await forgetting.forget(ctx.forgetter, await request.post(), by=who,
                                         max_urls=ctx.settings.metadata_api.max_urls)
    except ActionFailed as exc:
        return web.json_response({"ok": False, "message": str(exc)}, status=exc.status)
    return web.json_response(answer)


def _api(answer):
    """A JSON endpoint of web.api, bounded as the pages are, its refusals JSON too."""
    @bounded
    async def endpoint(request: web.Request) -> web.Response:
        try:
            return await answer(request.app[CONTEXT], request)
        except api.ApiError as exc:
            return api.error(exc.status, str(exc))
    return endpoint


async def _preview(ctx: WebContext, request: web.Request) -> web.Response:
    refused = signin.over_rate(request, ctx.resolve_limit)
    if refused is not None:
        return refused
    if ctx.resolve_places is None:
        return await api.preview_response(ctx, request)
    who = signin.caller_of(request)
    why = ctx.resolve_places.take(who)
    if why is not None:
        return web.json_response({"error": why}, status=429, headers={"Retry-After": "1"})
    try:
        return await api.preview_response(ctx, request)
    finally:
        ctx.resolve_places.give(who)


def make_app(ctx: WebContext) -> web.Application:
    web_settings = ctx.settings.web
    listen_host = web_settings.listen.rpartition(":")[0]
    hosts = security.host_check(listen_host, web_settings.allowed_hosts)
    known = signin.AnyOf(ctx.tokens, ctx.admin_tokens)      # an admin token signs in too
    sessions = signin.Sessions(known) if ctx.tokens is not None else None
    app = web.Application(middlewares=[
        security.security_headers, *([hosts] if hosts else []),
        signin.cross_site_check(listen_host, web_settings.allowed_hosts),
        *([signin.token_check(known, sessions)] if sessions else [])], client_max_size=MAX_FORM_BYTES)
    app[CONTEXT] = ctx
    app[SESSIONS] = sessions
    app[TEMPLATES] = _environment()
    app[PAGES] = asyncio.Semaphore(ctx.settings.web.max_concurrent_pages)
    app.router.add_get("/", index)
    app.router.add_get("/url", url_page)
    app.router.add_get("/domains", domains_page)
    app.router.add_get("/healthz", healthz)
    form, sign_in = signin.handlers(sessions, bool(web_settings.tls_cert),
                                    lambda request, status, **values: _render(request, "signin.html", status, **values))
    app.router.add_get("/signin", form)
    app.router.add_post("/signin", sign_in)
    app.router.add_get("/api/v1/preview", _api(_preview))
    app.router.add_get("/api/v1/explain", _api(api.explain_response))
    app.router.add_get("/oembed", _api(api.oembed_response))
    app.router.add_get("/events", events, allow_head=False)   # a HEAD would hold a live list
    app.router.add_post("/admin/{action:submit|refresh|pause|resume|set-rate}", admin)
    app.router.add_get("/forget", forget_page)
    app.router.add_post("/admin/forget", forget)
    app.router.add_static("/static/", os.path.join(HERE, "static"), append_version=False)
    return app
