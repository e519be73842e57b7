"""The web UI's JSON API (issue 30), on web.listen beside the pages.

    GET /api/v1/preview?url=U[&max_age=S][&refresh=1]   the record as `spiderduck get` prints it,
                                                         resolved as ResolveUrl resolves it
    GET /api/v1/explain?url=U                           {metadata, fields, findings} (ExplainUrl)
    GET /oembed?url=U[&format=json]                     an oEmbed 1.0 `link` document

Every error is JSON {"error": "..."} with its HTTP status: 400 (no url, too long, not a
fetchable URL, a bad max_age), 404 (never seen), 501 (an oEmbed format other than json), 503
(the store or NATS did not answer, or too many requests at once), 504 (a crawl still going on
past the wait; it goes on, and its record appears).

/api/v1/preview answers a stored record at once when it is young enough (with max_age, fetched
less than max_age seconds ago; without, before it expires: FRESH; expired less than
serve_stale_for ago: STALE, its refresh submitted as the scheduler submits it). Else it submits
the URL (a refresh when asked, or when max_age found the record too old) and waits, at most
metadata_api.resolve_timeout, for the scheduler's spiderduck.events.processed event for it (the
live list's subscription, web.feed), then answers the stored record. It needs NATS for that:
without, a record not fresh enough is 503. The answer carries the resolution in
`SpiderDuck-Resolution` (FRESH, STALE, CRAWLED, REVALIDATED, ...)."""
from __future__ import annotations

import asyncio
import dataclasses
import math
from typing import Any

from aiohttp import web

from common import record_proto, submissions, urls
from common.errors import BusError, StoreError
from common.findings import findings
from common.freshness import Freshness, stale_refresh
from common.record import UrlRecord
from common.stores.keys import lookup_key
from spiderduck.v1 import metadata_pb2
from web import views
from web.feed import LAGGED, FeedClosed, TooManyListeners

RESOLUTION_HEADER = "SpiderDuck-Resolution"


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def asked_url(request: web.Request, max_chars: int) -> str:
    url = request.query.get("url", "").strip()
    if not url:
        raise ApiError(400, "the url parameter is missing")
    if len(url) > max_chars:
        raise ApiError(400, f"a URL of {len(url)} characters: at most {max_chars} are looked up (web.max_url_chars)")
    return url


async def stored_wire(store, url: str) -> metadata_pb2.UrlMetadata:
    """The stored UrlMetadata of `url`, its url the one asked for."""
    try:
        [wire] = await store.get_many_wire([lookup_key(url)])
    except StoreError as exc:
        raise ApiError(503, f"the metadata store did not answer: {exc}") from None
    if wire is None:
        raise ApiError(404, f"{url} has never been seen")
    metadata = metadata_pb2.UrlMetadata.FromString(wire)
    metadata.url = url
    return metadata


def explanation(metadata: metadata_pb2.UrlMetadata) -> dict[str, Any]:
    """ExplainUrl's answer as JSON: the record as `get` prints it, each filled field's source,
    and what each platform will make of it (protobuf JSON, proto field names)."""
    return {"metadata": record_proto.to_dict(record_proto.from_proto(metadata)),
            "fields": [record_proto.message_to_dict(p) for p in metadata.provenance],
            "findings": [record_proto.message_to_dict(f) for f in findings(metadata)]}


def oembed(record: UrlRecord) -> dict[str, Any]:
    """An oEmbed 1.0 `link` document of a record (https://oembed.com/ 2.3.4): a thumbnail when
    the card has an http(s) image, its size when the record knows it."""
    final = record.final_url or record.url
    doc: dict[str, Any] = {"version": "1.0", "type": "link", "title": record.title or final}
    if record.author:
        doc["author_name"] = record.author
    if record.site_name:
        doc["provider_name"] = record.site_name
    origin = views.origin_of(final)
    if origin:
        doc["provider_url"] = origin + "/"
    image = views.web_url(record.image.url) if record.image is not None else ""
    if image:
        doc["thumbnail_url"] = image
        if record.image.width and record.image.height:
            doc["thumbnail_width"] = record.image.width
            doc["thumbnail_height"] = record.image.height
    return doc


def _max_age(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value >= 0 and math.isfinite(value)):
        raise ApiError(400, f"max_age must be a number of seconds, 0 or more, got {text[:40]!r}")
    return value


async def resolve(ctx, url: str, *, max_age: float | None, refresh: bool) -> tuple[str, UrlRecord]:
    """(resolution, record), as ResolveUrl resolves (see the module's text). Raises ApiError."""
    try:
        key = urls.canonicalize(url)
    except urls.InvalidUrl as exc:
        raise ApiError(400, f"not a fetchable URL: {exc}") from None
    try:
        stored = await ctx.store.get(key)
    except StoreError as exc:
        raise ApiError(503, f"the metadata store did not answer: {exc}") from None
    js = ctx.actions.js
    if stored is not None and stored.fetched_at and not refresh:
        now = ctx.clock()
        freshness = Freshness.from_settings(ctx.settings)
        if max_age is not None:
            if now - stored.fetched_at < max_age:
                return "FRESH", stored
            refresh = True           # too old for this caller, however fresh for others
        elif freshness.is_fresh(stored, now):
            return "FRESH", stored
        elif js is not None and freshness.servable_stale(stored, now, ctx.settings.serve_stale_for):
            try:
                await submissions.publish(js, submissions.Outgoing(*stale_refresh(key, stored)))
            except BusError as exc:
                raise ApiError(503, f"the stale record's refresh was not submitted: {exc}") from None
            return "STALE", stored
    if js is None or ctx.feed is None:
        raise ApiError(503, "resolving a URL without a fresh record needs NATS, and this metadata-api "
                       "has none (set nats_url)")
    return await _crawl(ctx, url, key, refresh)


async def _crawl(ctx, url: str, key: str, refresh: bool) -> tuple[str, UrlRecord]:
    wait = ctx.settings.metadata_api.resolve_timeout
    still = ApiError(504, f"still resolving {url}; the crawl goes on and its record will appear")
    try:
        async with ctx.feed.listen() as queue, asyncio.timeout(wait):
            try:
                await submissions.submit(ctx.actions.js, ctx.actions.queued, submissions.encode(
                    url, refresh=refresh, source="web-api"), mark_required=False)
            except BusError as exc:
                raise ApiError(503, f"not submitted: {exc}") from None
            while True:
                item = await queue.get()
                if item is None or item is LAGGED:
                    raise still
                if lookup_key(item["url"]) == key:
                    resolution = item["resolution"]
                    break
    except (TooManyListeners, FeedClosed) as exc:
        raise ApiError(503, str(exc)) from None
    except TimeoutError:
        raise still from None
    try:
        record = await ctx.store.get(key)
    except StoreError as exc:
        raise ApiError(503, f"the metadata store did not answer: {exc}") from None
    if record is None:
        raise ApiError(504, f"{url}: processed ({resolution}) but its record is not readable yet")
    return resolution, record


async def preview_response(ctx, request: web.Request) -> web.Response:
    url = asked_url(request, ctx.settings.web.max_url_chars)
    max_age = _max_age(request.query.get("max_age"))
    refresh = request.query.get("refresh", "") in ("1", "true")
    resolution, record = await resolve(ctx, url, max_age=max_age, refresh=refresh)
    row = record_proto.to_dict(dataclasses.replace(record, url=url))
    return web.json_response(row, headers={RESOLUTION_HEADER: resolution})


async def explain_response(ctx, request: web.Request) -> web.Response:
    url = asked_url(request, ctx.settings.web.max_url_chars)
    return web.json_response(explanation(await stored_wire(ctx.store, url)))


async def oembed_response(ctx, request: web.Request) -> web.Response:
    url = asked_url(request, ctx.settings.web.max_url_chars)
    form = request.query.get("format", "json")
    if form != "json":
        raise ApiError(501, f"format {form[:20]!r} is not served: only json")
    record = record_proto.from_proto(await stored_wire(ctx.store, url))
    return web.json_response(oembed(record))
