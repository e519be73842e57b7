"""`spiderduck health`: ask a gRPC server of the service whether it serves, as a probe does.

With TLS on, Kubernetes' own gRPC probe cannot present a client certificate, so the chart's
probes run this instead: it dials with the config's `tls` (this process's certificate as the
client's, the server verified against tls.ca and tls.server_name) and asks the standard health
service. Exit 0 when SERVING, 1 otherwise, with one line saying why."""
from __future__ import annotations

import asyncio
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from spiderduck.core.config import Settings
from spiderduck.rpc.tls import open_channel

TIMEOUT = 5.0


async def _check(settings: Settings, address: str, service: str, timeout: float) -> str:
    async with open_channel(address, settings.tls) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        answer = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
    return health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)


def cmd_health(settings: Settings, args) -> int:
    address = args.address or settings.metadata_api.listen
    try:
        status = asyncio.run(_check(settings, address, args.service, args.timeout))
    except grpc.aio.AioRpcError as exc:
        print(f"spiderduck health: {address}: {exc.code().name}: {exc.details()}", file=sys.stderr)
        return 1
    if status != "SERVING":
        print(f"spiderduck health: {address}: {status}", file=sys.stderr)
        return 1
    return 0


def add_commands(sub, common) -> None:
    p = sub.add_parser("health", parents=[common],
                       help="exit 0 when a gRPC server of the service answers SERVING (for probes)")
    p.add_argument("--address", metavar="HOST:PORT",
                   help="the server to ask (default: metadata_api.listen)")
    p.add_argument("--service", default="", metavar="NAME",
                   help="a service's name, e.g. spiderduck.v1.FetcherService (default: the server)")
    p.add_argument("--timeout", type=float, default=TIMEOUT, metavar="S", help="seconds to wait")
    p.set_defaults(run=cmd_health)
