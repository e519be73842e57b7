"""FetcherAdmin over gRPC: operators list, pause, resume and re-rate domain queues.

A thin adapter over DomainControls (each change kept in NATS KV, then applied) and Politeness
(what is listed); errors map to gRPC codes here only: INVALID_ARGUMENT for a bad domain
(urls.domain_named: not a registrable domain, nor a host name or URL under one), rate or
duration, or a rate above fetcher.max_rate; FAILED_PRECONDITION when this fetcher does not own the domain (the caller asks the
owner instead); UNAVAILABLE when NATS could not keep the change (then it was not applied).
"""
from __future__ import annotations

import time
from typing import Callable

import grpc

from spiderduck.core import urls
from spiderduck.core.errors import BusError
from spiderduck.fetcher import admin_proto
from spiderduck.fetcher.domain_controls import DomainControls
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.politeness import Politeness
from spiderduck.v1 import fetcher_pb2, fetcher_pb2_grpc

SERVICE_NAME = fetcher_pb2.DESCRIPTOR.services_by_name["FetcherAdmin"].full_name


class FetcherAdminServicer(fetcher_pb2_grpc.FetcherAdminServicer):
    """Reads and changes the politeness state, never fetches: it gets the politeness object,
    the operators' controls, which domains this fetcher owns (`owns`, asked at each call: the
    leases move), its id and the default pause."""

    def __init__(self, politeness: Politeness, controls: DomainControls, *, owner: str,
                 owns: Callable[[str], bool], pause_for: float, max_rate: float, wall=time.time):
        self._politeness = politeness
        self._controls = controls
        self._owner = owner
        self._owns = owns
        self._pause_for = pause_for
        self._max_rate = max_rate
        self._wall = wall

    async def ListDomains(self, request, context):
        domains = [await self._domain(d, context, owned=False) for d in request.domains]
        for domain in self._politeness.controlled():   # kept controls show, used or not
            if self._owns(domain):
                self._politeness.slot(domain)
        return admin_proto.list_response(self._politeness.infos(domains), owner=self._owner,
                                         now_wall=self._wall())

    async def PauseDomain(self, request, context):
        domain = await self._domain(request.domain, context)
        seconds = request.seconds or self._pause_for
        await self._apply(context, self._controls.pause, domain, seconds)
        return self._info(domain)

    async def ResumeDomain(self, request, context):
        domain = await self._domain(request.domain, context)
        await self._apply(context, self._controls.resume, domain)
        return self._info(domain)

    async def SetDomainRate(self, request, context):
        if request.rate > self._max_rate:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"rate {request.rate:g}/s is above fetcher.max_rate ({self._max_rate:g}/s)")
        domain = await self._domain(request.domain, context)
        await self._apply(context, self._controls.set_rate, domain, request.rate)
        return self._info(domain)

    async def _domain(self, text: str, context, *, owned: bool = True) -> str:
        try:
            domain = urls.domain_named(text)
        except urls.InvalidDomain as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        if owned and not self._owns(domain):
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"fetcher {self._owner} does not hold the shard of {domain}")
        return domain

    @staticmethod
    async def _apply(context, action, *args) -> None:
        try:
            await action(*args)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except BusError as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"not changed: {exc}")

    def _info(self, domain: str) -> fetcher_pb2.DomainInfo:
        self._politeness.slot(domain)        # a domain without one gets its slot (a rate set ahead)
        [info] = self._politeness.infos([domain])
        return admin_proto.to_proto(info, owner=self._owner, now_wall=self._wall())


def register(server, fetcher: Fetcher, controls: DomainControls) -> None:
    server.add(fetcher_pb2_grpc.add_FetcherAdminServicer_to_server,
               FetcherAdminServicer(fetcher.politeness, controls, owner=fetcher.id,
                                    owns=lambda domain: fetcher.ownership.owns(domain),
                                    pause_for=fetcher.settings.pause_for,
                                    max_rate=fetcher.settings.max_rate), SERVICE_NAME)
