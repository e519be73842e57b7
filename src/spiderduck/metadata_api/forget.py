"""MetadataService.Forget, ListForgotten and Unforget over metadata_api.forgetting (issue 39): thin
adapters, admins only (metadata_api.admins: else PERMISSION_DENIED), with NATS only (the
denylist lives there: else FAILED_PRECONDITION, as ResolveUrl).

Forget's request is checked before anything is removed, INVALID_ARGUMENT naming why: a URL or a
domain is needed; at most metadata_api.max_urls URLs, each at most MAX_URL_CHARS characters and
not empty; a domain is a registrable domain itself (`example.co.uk`; not a public suffix such as
`com` or `co.uk`, not an IP address, not a host under a domain, not a URL); a reason at most
metadata_api.max_forget_reason_chars characters. A forget whose part failed is UNAVAILABLE
naming each failed part: it can be repeated until it succeeds.
"""
from __future__ import annotations

import grpc
import grpc.aio

from spiderduck.core import urls
from spiderduck.core.config import MetadataApiSettings
from spiderduck.core.errors import BusError
from spiderduck.metadata_api.admins import Admins
from spiderduck.metadata_api.forgetting import Forgetter, PartsFailed
from spiderduck.v1 import metadata_pb2
from spiderduck.wire.record_limits import MAX_URL_CHARS

MAX_DETAIL = 2000       # characters of a refusal's text (it travels in a header)


class ForgetService:
    """The three admin methods, for MetadataServicer; `forgetter` None without NATS."""

    def __init__(self, forgetter: Forgetter | None, admins: Admins, settings: MetadataApiSettings):
        self._forgetter = forgetter
        self._admins = admins
        self._max_urls = settings.max_urls
        self._max_reason = settings.max_forget_reason_chars

    async def _ready(self, method: str, context) -> tuple[str, Forgetter]:
        who = await self._admins.check(method, context)
        if self._forgetter is None:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"{method} needs NATS (the denylist is kept there), and this "
                                "metadata-api has none (set nats_url)")
        return who, self._forgetter

    async def _targets(self, request, context) -> tuple[list[str], str]:
        """The request's URLs and domain, checked (INVALID_ARGUMENT naming why)."""
        asked = list(request.urls)
        refusal = None
        if len(asked) > self._max_urls:
            refusal = f"{len(asked)} URLs; at most {self._max_urls} per call (metadata_api.max_urls)"
        elif any(not url.strip() for url in asked):
            refusal = "an empty URL"
        elif any(len(url) > MAX_URL_CHARS for url in asked):
            refusal = f"a URL longer than {MAX_URL_CHARS} characters"
        domain = ""
        if refusal is None:
            try:
                domain = urls.forgettable_domain(request.domain)
            except urls.InvalidDomain as exc:
                refusal = str(exc)
        if refusal is None and not asked and not domain:
            refusal = "name URLs, a domain, or both"
        if refusal is not None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, refusal)
        return [urls.without_userinfo(url) for url in asked], domain

    async def forget(self, request: metadata_pb2.ForgetRequest, context) -> metadata_pb2.ForgetResponse:
        who, forgetter = await self._ready("Forget", context)
        asked, domain = await self._targets(request, context)
        if len(request.reason) > self._max_reason:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"reason: {len(request.reason)} characters; at most {self._max_reason} "
                                "(metadata_api.max_forget_reason_chars)")
        try:
            removed = await forgetter.forget(asked, domain, reason=request.reason, by=who)
        except PartsFailed as exc:
            detail = str(exc)
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                detail if len(detail) <= MAX_DETAIL else detail[:MAX_DETAIL] + "...")
        return metadata_pb2.ForgetResponse(records=removed.records, content_records=removed.content_records,
                                           events=removed.events)

    async def list_forgotten(self, request, context) -> metadata_pb2.ListForgottenResponse:
        _, forgetter = await self._ready("ListForgotten", context)
        answer = metadata_pb2.ListForgottenResponse()
        for entry in forgetter.denylist.entries():
            item = answer.entries.add(url=entry.url, domain=entry.domain, reason=entry.reason, by=entry.by)
            item.forgotten_at.FromNanoseconds(int(entry.at * 1e9))
        return answer

    async def unforget(self, request: metadata_pb2.UnforgetRequest, context) -> metadata_pb2.UnforgetResponse:
        who, forgetter = await self._ready("Unforget", context)
        asked, domain = await self._targets(request, context)
        try:
            gone = await forgetter.unforget(asked, domain, by=who)
        except BusError as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"the denylist: {exc}; repeat the call")
        return metadata_pb2.UnforgetResponse(entries=gone)
