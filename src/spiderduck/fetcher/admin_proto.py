"""politeness.DomainInfo <-> spiderduck.v1.DomainInfo (the FetcherAdmin service's one conversion)."""
from __future__ import annotations

from spiderduck.fetcher.politeness import DomainInfo
from spiderduck.v1 import fetcher_pb2 as pb

STATES = {"active": pb.DOMAIN_ACTIVE, "paused": pb.DOMAIN_PAUSED, "halted": pb.DOMAIN_HALTED}


def to_proto(info: DomainInfo, *, owner: str, now_wall: float) -> pb.DomainInfo:
    """`now_wall` (epoch seconds) turns the pause's seconds left into a point in time."""
    return pb.DomainInfo(
        domain=info.domain, owner=owner, state=STATES[info.state], reason=info.reason,
        paused_until=now_wall + info.paused_for if info.paused_for > 0 else 0.0,
        queue_depth=info.queue_depth, rate=info.rate, rate_source=info.rate_source,
        interval_seconds=info.interval, crawl_delay_seconds=info.crawl_delay,
        backoff_seconds=info.backoff, hold_seconds=info.hold, hold_reason=info.hold_reason,
        status_counts=info.status_counts, requests=info.requests, errors=info.errors,
        error_rate=info.error_rate, consecutive_failures=info.consecutive_failures,
        window_seconds=info.window, idle_seconds=info.idle)


def list_response(infos: list[DomainInfo], *, owner: str, now_wall: float) -> pb.ListDomainsResponse:
    return pb.ListDomainsResponse(
        fetcher_id=owner, domains=[to_proto(i, owner=owner, now_wall=now_wall) for i in infos])
