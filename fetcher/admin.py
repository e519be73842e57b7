"""FetcherAdmin over gRPC: operators list, pause, resume and re-rate domain queues.

A thin adapter over Politeness; errors map to gRPC codes here only:
INVALID_ARGUMENT for a bad domain, rate or duration; FAILED_PRECONDITION when this
fetcher does not own the domain (the caller asks the owner instead).
"""
from __future__ import annotations

import time

import grpc

from common import urls
from fetcher import admin_proto
from fetcher.fetcher import Fetcher, NotOwner
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc

SERVICE_NAME = fetcher_pb2.DESCRIPTOR.services_by_name["FetcherAdmin"].full_name


def domain_of(text: str) -> str:
    """The registrable domain an operator means by a domain, host name or URL."""
    text = text.strip()
    if not text:
        raise urls.InvalidUrl(text, "a domain is required")
    host = urls.host_of(urls.canonicalize(text)) if "://" in text else text
    return urls.registrable_domain(host)


class FetcherAdminServicer(fetcher_pb2_grpc.FetcherAdminServicer):
    def __init__(self, fetcher: Fetcher, *, wall=time.time):
        self._fetcher = fetcher
        self._politeness = fetcher.politeness
        self._wall = wall

    async def ListDomains(self, request, context):
        domains = [await self._domain(d, context, owned=False) for d in request.domains]
        return admin_proto.list_response(self._politeness.infos(domains), owner=self._fetcher.id,
                                         now_wall=self._wall())

    async def PauseDomain(self, request, context):
        domain = await self._domain(request.domain, context)
        seconds = request.seconds or self._fetcher.settings.pause_for
        await self._apply(context, self._politeness.pause, domain, seconds)
        return self._info(domain)

    async def ResumeDomain(self, request, context):
        domain = await self._domain(request.domain, context)
        self._politeness.resume(domain)
        return self._info(domain)

    async def SetDomainRate(self, request, context):
        domain = await self._domain(request.domain, context)
        await self._apply(context, self._politeness.set_rate, domain, request.rate)
        return self._info(domain)

    async def _domain(self, text: str, context, *, owned: bool = True) -> str:
        try:
            domain = domain_of(text)
        except urls.InvalidUrl as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad domain {text!r}: {exc}")
        if owned:
            try:
                self._fetcher.check_owner(domain)
            except NotOwner as exc:
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        return domain

    @staticmethod
    async def _apply(context, action, *args) -> None:
        try:
            action(*args)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))

    def _info(self, domain: str) -> fetcher_pb2.DomainInfo:
        [info] = self._politeness.infos([domain])
        return admin_proto.to_proto(info, owner=self._fetcher.id, now_wall=self._wall())


def register(server, fetcher: Fetcher) -> None:
    server.add(fetcher_pb2_grpc.add_FetcherAdminServicer_to_server, FetcherAdminServicer(fetcher),
               SERVICE_NAME)
