"""The web UI's JSON API (issue 30), on web.listen beside the pages.

    GET /api/v1/preview?url=U[&max_age=S][&refresh=1]   the record as `spiderduck get` prints it,
                                                         resolved as ResolveUrl resolves it
    GET /api/v1/explain?url=U                           {metadata, fields, findings[, note]} (ExplainUrl)
    GET /oembed?url=U[&format=json]                     an oEmbed 1.0 `link` document

Every error is JSON {"error": "..."} with its HTTP status: 400 (no url, too long, not a
fetchable URL, a bad max_age), 404 (never seen), 501 (an oEmbed format other than json), 503
(the store or NATS did not answer, or too many requests at once), 504 (a crawl still going on
past the wait; it goes on, and its record appears).

/api/v1/preview resolves with the metadata API's own resolver (spiderduck.query.resolver), as ResolveUrl
does: a stored record young enough at once (FRESH, or STALE with its refresh submitted), else a
crawl it waits for, at most metadata_api.resolve_timeout. Without NATS, a record not fresh enough
is 503. The answer carries the resolution in `SpiderDuck-Resolution` (FRESH, STALE, CRAWLED,
REVALIDATED, ...)."""
from __future__ import annotations

import math
from typing import Any

from aiohttp import web

from spiderduck.wire import record_proto

from spiderduck.core import urls
from spiderduck.core.errors import BusError, SpiderDuckError, StoreError
from spiderduck.core.freshness import Freshness
from spiderduck.core.record import UrlRecord
from spiderduck.query.explainer import Explainer, NeverSeen
from spiderduck.query.resolver import Resolver, StillResolving
from spiderduck.stores.keys import lookup_key
from spiderduck.v1 import metadata_pb2
from spiderduck.web import views
from spiderduck.core.frozen import evolve

RESOLUTION_HEADER = "SpiderDuck-Resolution"


class ApiError(SpiderDuckError):
    """The API's answer when it has no record to give: an HTTP status and why. Retryable as
    HTTP reads it: 503 (a store or NATS did not answer) and 504 (the crawl goes on)."""

    def __init__(self, status: int, message: str):
        super().__init__(message, retryable=status in (503, 504))
        self.status = status


def error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def asked_url(request: web.Request, max_chars: int) -> str:
    url = urls.without_userinfo(request.query.get("url", "").strip())   # never sent, kept or echoed
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


def explanation(explained: metadata_pb2.Explanation) -> dict[str, Any]:
    """ExplainUrl's answer as JSON: the record as `get` prints it, each field's source and the
    values that lost, what each platform will make of it, and the note (protobuf JSON, proto
    field names)."""
    out = {"metadata": record_proto.to_dict(record_proto.from_proto(explained.metadata)),
           "fields": [record_proto.message_to_dict(p) for p in explained.fields],
           "findings": [record_proto.message_to_dict(f) for f in explained.findings]}
    if explained.note:
        out["note"] = explained.note
    return out


def explainer(ctx) -> Explainer:
    """The metadata API's explainer, or one that explains from the records alone."""
    return ctx.explainer or Explainer(ctx.store, None, workers=0, budget=1.0, parser="", robots_token="")


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
    """(resolution, record), by the resolver ResolveUrl resolves with (spiderduck.query.resolver), the
    metadata API's own; without NATS, one that answers only what the store holds fresh enough.
    Raises ApiError."""
    resolver = ctx.resolver or Resolver(ctx.store, None, None, None,
                                        freshness=Freshness.from_settings(ctx.settings),
                                        serve_stale_for=ctx.settings.serve_stale_for, clock=ctx.clock)
    try:
        return await resolver.resolve(url, max_age=max_age, refresh=refresh,
                                      wait=ctx.settings.metadata_api.resolve_timeout)
    except urls.InvalidUrl as exc:
        raise ApiError(400, f"not a fetchable URL: {exc}") from None
    except NeverSeen as exc:           # forgotten (spiderduck.bus.denylist): as never seen
        raise ApiError(404, str(exc)) from None
    except StillResolving as exc:
        raise ApiError(504, str(exc)) from None
    except StoreError as exc:
        raise ApiError(503, f"the metadata store did not answer: {exc}") from None
    except BusError as exc:          # NeedsNats too
        raise ApiError(503, str(exc)) from None


async def preview_response(ctx, request: web.Request) -> web.Response:
    url = asked_url(request, ctx.settings.web.max_url_chars)
    max_age = _max_age(request.query.get("max_age"))
    refresh = request.query.get("refresh", "") in ("1", "true")
    resolution, record = await resolve(ctx, url, max_age=max_age, refresh=refresh)
    row = record_proto.to_dict(evolve(record, url=url))
    return web.json_response(row, headers={RESOLUTION_HEADER: resolution})


async def explain_response(ctx, request: web.Request) -> web.Response:
    url = asked_url(request, ctx.settings.web.max_url_chars)
    try:
        explained = await explainer(ctx).explanation(url)
    except NeverSeen as exc:
        raise ApiError(404, str(exc)) from None
    except StoreError as exc:
        raise ApiError(503, f"the metadata store did not answer: {exc}") from None
    return web.json_response(explanation(explained))


async def oembed_response(ctx, request: web.Request) -> web.Response:
    url = asked_url(request, ctx.settings.web.max_url_chars)
    form = request.query.get("format", "json")
    if form != "json":
        raise ApiError(501, f"format {form[:20]!r} is not served: only json")
    record = record_proto.from_proto(await stored_wire(ctx.store, url))
    return web.json_response(oembed(record))
