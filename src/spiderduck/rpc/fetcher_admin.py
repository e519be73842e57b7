"""Asking every fetcher's FetcherAdmin at once: what `spiderduck domains` and the web UI's
/domains page do. A list is every answer's domains; a change is sent to each fetcher, and the
owner of the domain applies it (the others answer FAILED_PRECONDITION). `tls` (config `tls`)
makes the calls over TLS, with this process's certificate as the caller's identity."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Awaitable, Callable

import grpc

from spiderduck.core.config import TlsSettings
from spiderduck.rpc.tls import open_channel
from spiderduck.v1 import fetcher_pb2 as pb, fetcher_pb2_grpc

CALL_TIMEOUT = 10.0

Call = Callable[[fetcher_pb2_grpc.FetcherAdminStub], Awaitable[object]]


async def ask_all(addresses: list[str], call: Call, tls: TlsSettings | None = None) -> list[tuple[str, object]]:
    """(address, response or grpc.aio.AioRpcError) for each fetcher, asked at once."""
    async def one(address: str):
        async with open_channel(address, tls) as channel:
            try:
                return address, await call(fetcher_pb2_grpc.FetcherAdminStub(channel))
            except grpc.aio.AioRpcError as exc:
                return address, exc
    return list(await asyncio.gather(*(one(a) for a in addresses)))


def reason(address: str, exc: grpc.aio.AioRpcError) -> str:
    return f"fetcher at {address}: {exc.code().name}: {exc.details()}"


@dataclass
class Answers:
    """What the fetchers said: the domains listed or changed, and the fetchers that failed."""
    infos: list[pb.DomainInfo] = field(default_factory=list)
    failed: list[tuple[str, grpc.aio.AioRpcError]] = field(default_factory=list)

    def reasons(self, *, skip_not_owner: bool = False) -> list[str]:
        return [reason(a, exc) for a, exc in self.failed
                if not (skip_not_owner and exc.code() is grpc.StatusCode.FAILED_PRECONDITION)]


async def answers(addresses: list[str], call: Call, tls: TlsSettings | None = None) -> Answers:
    out = Answers()
    for address, answer in await ask_all(addresses, call, tls):
        if isinstance(answer, grpc.aio.AioRpcError):
            out.failed.append((address, answer))
        elif isinstance(answer, pb.ListDomainsResponse):
            out.infos.extend(answer.domains)
        else:
            out.infos.append(answer)
    return out


async def list_domains(addresses: list[str], domains: list[str] | tuple = (),
                       tls: TlsSettings | None = None) -> Answers:
    """Every fetcher's domain queues (only `domains`, when given), sorted by domain."""
    request = pb.ListDomainsRequest(domains=list(domains))
    out = await answers(addresses, lambda stub: stub.ListDomains(request, timeout=CALL_TIMEOUT), tls)
    out.infos.sort(key=lambda i: (i.domain, i.owner))
    return out


def pause(domain: str, seconds: float = 0.0) -> Call:
    request = pb.PauseDomainRequest(domain=domain, seconds=seconds)
    return lambda stub: stub.PauseDomain(request, timeout=CALL_TIMEOUT)


def resume(domain: str) -> Call:
    request = pb.ResumeDomainRequest(domain=domain)
    return lambda stub: stub.ResumeDomain(request, timeout=CALL_TIMEOUT)


def set_rate(domain: str, rate: float) -> Call:
    request = pb.SetDomainRateRequest(domain=domain, rate=rate)
    return lambda stub: stub.SetDomainRate(request, timeout=CALL_TIMEOUT)
